"""The project's ``DEBUG`` reaches the core: an internal error's data names its cause and
place with it on (``protocol/faults.py``), and says nothing more with it off."""

from __future__ import annotations

from django.test import override_settings

from beammcp_django.servers.factory import server_options


def test_debug_on_asks_the_core_to_name_a_fault_s_cause_and_place():
    with override_settings(DEBUG=True):
        assert server_options(stdio=False).debug is True
        assert server_options(stdio=True).debug is True


def test_debug_off_keeps_a_fault_in_the_log_only():
    with override_settings(DEBUG=False):
        assert server_options(stdio=False).debug is False
