"""Which of Django's request signals the HTTP endpoint sends: only when a receiver other than
Django's own would hear them from ``McpEndpoint`` (``RequestSignals.wanted``), read in
process from the real signals.

The reading goes through Django's private ``Signal._live_receivers``; the first test fails
if Django changes it (its fallback sends both signals, so it would read "wanted" with
Django's own receivers alone)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.signals import request_finished, request_started

from beammcp_django.observability import RequestSignals
from beammcp_django.transports.http import McpEndpoint


def host_receiver(**kwargs: Any) -> None:
    """A host's receiver (an APM agent's, a metrics counter)."""


async def async_host_receiver(**kwargs: Any) -> None:
    """A host's async receiver."""


@pytest.fixture
def connected() -> Iterator[list[tuple[Any, Any, Any]]]:
    """Receivers a test connects, disconnected after it whatever happens."""
    made: list[tuple[Any, Any, Any]] = []
    yield made
    for signal, receiver, sender in made:
        signal.disconnect(receiver, sender=sender)


def connect(made: list[tuple[Any, Any, Any]], signal: Any, receiver: Any, sender: Any = None):
    signal.connect(receiver, sender=sender, weak=False)
    made.append((signal, receiver, sender))


def test_with_djangos_own_receivers_alone_neither_signal_is_wanted():
    for signal in (request_started, request_finished):
        sync_receivers, async_receivers = signal._live_receivers(McpEndpoint)
        assert async_receivers == []
        assert sync_receivers and set(sync_receivers) <= RequestSignals.DJANGO_OWN
    assert RequestSignals(McpEndpoint).wanted() is False


@pytest.mark.parametrize("signal", [request_started, request_finished])
def test_a_host_receiver_for_any_sender_makes_both_wanted_until_it_is_disconnected(
    connected, signal
):
    signals = RequestSignals(McpEndpoint)
    assert signals.wanted() is False
    connect(connected, signal, host_receiver)
    assert signals.wanted() is True
    signal.disconnect(host_receiver)
    assert signals.wanted() is False


def test_a_host_receiver_for_the_endpoint_as_sender_makes_them_wanted(connected):
    connect(connected, request_started, host_receiver, sender=McpEndpoint)
    assert RequestSignals(McpEndpoint).wanted() is True


def test_a_receiver_for_another_sender_only_does_not(connected):
    class Elsewhere:
        pass

    connect(connected, request_finished, host_receiver, sender=Elsewhere)
    assert RequestSignals(McpEndpoint).wanted() is False


def test_an_async_host_receiver_makes_them_wanted(connected):
    connect(connected, request_finished, async_host_receiver)
    assert RequestSignals(McpEndpoint).wanted() is True
