"""The test process serves MCP in-process too (``endpoint.get_server()``); its observed
counts are flushed by the tests that need them, on demand. No flush thread: pytest-django
allows database access only from the test's own thread."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("django"):
        return  # -p no:django: the sans-IO tests, no settings at all
    from django.conf import settings

    settings.BEAMMCP = {**getattr(settings, "BEAMMCP", {}), "CONNECTOME_FLUSH_SECONDS": None}


def pytest_unconfigure(config: pytest.Config) -> None:
    """A flusher started under overridden settings must not flush at exit either."""
    if config.pluginmanager.has_plugin("django"):
        from beammcp_django.connectome.exports import flusher_slot

        flusher_slot.forget()
