"""Streams end when their credentials end (``credentials.py``, ``transports/admission.py``'s
``StreamAuthority``), through real ``mcp_serve`` processes serving bearer tokens (the signed
claims of ``tests.principals.tokens``):

- a listen stream, and a 2025-11-25 session's GET stream, end when their token expires, not
  at their next re-check (``SUBSCRIPTION_REAUTHORIZE_SECONDS``, 60 s);
- ``credentials.end_principal`` called in another process (``manage.py shell``) ends that
  principal's streams in both workers sharing Channels' Redis layer, and nobody else's.

Each time bound starts once the stream is acknowledged, never at spawn. django-oauth-toolkit's
revocation is held over HTTP in ``tests/interop/test_sdk_oauth.py``; the receivers in process
in ``tests/django_layer/test_credential_signals.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    REDIS,
    ServerProcess,
    Wire,
    http_request,
    message,
    post,
    read_events,
    start_server,
)
from tests.http.oauth_support import resource_server_env
from tests.principals.tokens import mint
from tests.support import manage

LISTEN = {"notifications": {"toolsListChanged": True}}
LEGACY = "2025-11-25"
# The 2026-07-28 headers a 2025-11-25 client does not send.
MODERN_HEADERS = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
CLOSE_SECONDS = 5.0  # the bound a closing result must arrive within, once it is due


@contextlib.contextmanager
def listening(server: ServerProcess, token: str, name: str) -> Iterator[Wire]:
    """A listen stream of ``token``'s principal on ``server``, acknowledged."""
    listen = message(f"listen-{name}", "subscriptions/listen", LISTEN)
    with Wire(server.port, timeout=90) as wire:
        wire.send(http_request(listen, add=[("Authorization", f"Bearer {token}")]))
        (ack,) = read_events(wire, 1, timeout=10)
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        yield wire


def closing_result(wire: Wire, timeout: float) -> dict | None:
    """The stream's next message after its acknowledgment (its closing result, when it
    ends), or None if none came in time."""
    events = read_events(wire, 1, timeout=timeout)
    return events[0] if events else None


def read_until(wire: Wire, needle: bytes, timeout: float) -> bytes:
    """The bytes of the response so far, once ``needle`` is among them (NoResponse past
    ``timeout``)."""
    deadline = time.monotonic() + timeout
    while needle not in wire.buffer:
        wire._fill(deadline)
    return bytes(wire.buffer)


@pytest.fixture(scope="module")
def resource(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("stream-credentials")
    server = start_server(
        "mcp_serve", resource_server_env(directory, {"BEAMMCP_TEST_OAUTH": "1"}), directory
    )
    yield server
    server.stop()


def test_a_listen_stream_ends_when_its_token_expires(resource):
    lifetime = 3.0
    token = mint("ada", expires_in=lifetime)
    with listening(resource, token, "expiring") as wire:
        acknowledged = time.monotonic()
        closed = closing_result(wire, timeout=lifetime + CLOSE_SECONDS)
        waited = time.monotonic() - acknowledged
    assert closed is not None and "result" in closed, closed
    assert waited < lifetime + CLOSE_SECONDS  # not the 60 s re-check


def test_a_session_s_get_stream_ends_when_its_token_expires(resource):
    lifetime = 3.0
    bearer = ("Authorization", f"Bearer {mint('ada', expires_in=lifetime)}")
    initialize = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "stream-credentials-test", "version": "1"},
        },
    }
    opened = post(resource.port, initialize, drop=MODERN_HEADERS, add=[bearer])
    assert opened.status == 200, opened.body
    session = opened.header("mcp-session-id")
    assert session is not None
    in_session = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY), bearer]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(resource.port, initialized, drop=MODERN_HEADERS, add=in_session).status == 202
    stream = http_request(
        None,
        method="GET",
        drop=MODERN_HEADERS,
        add=[("Accept", "text/event-stream"), *in_session],
        content_length=False,
    )
    with Wire(resource.port, timeout=90) as wire:
        wire.send(stream)
        head = read_until(wire, b":\n\n", timeout=10)  # the stream's first comment: it is open
        assert b" 200 " in head.split(b"\r\n", 1)[0], head
        opened_at = time.monotonic()
        read_until(wire, b"\r\n0\r\n\r\n", timeout=lifetime + CLOSE_SECONDS)  # the last chunk
        waited = time.monotonic() - opened_at
    assert waited < lifetime + CLOSE_SECONDS  # not the 60 s re-check


def test_a_stream_of_an_unexpiring_token_stays_open(resource):
    with listening(resource, mint("ada", expires_in=3600), "lasting") as wire:
        assert closing_result(wire, timeout=2.0) is None


@pytest.mark.skipif(REDIS is None, reason="no redis-server binary on this machine")
def test_ending_a_principal_elsewhere_ends_its_streams_in_every_worker(
    redis_url: str, tmp_path: Path
):
    env = {
        **resource_server_env(tmp_path, {"BEAMMCP_TEST_OAUTH": "1"}),
        "BEAMMCP_TEST_REDIS_URL": redis_url,
    }
    first = start_server("mcp_serve", env, tmp_path)
    second = start_server("mcp_serve", env, tmp_path)
    try:
        ada, bob = mint("ada", expires_in=3600), mint("bob", expires_in=3600)
        with (
            listening(first, ada, "ada-1") as on_first,
            listening(second, ada, "ada-2") as on_second,
            listening(second, bob, "bob") as bobs,
        ):
            manage(
                env,
                "shell",
                "-c",
                "from beammcp_django.credentials import end_principal; "
                "from tests.principals.tools import Caller; end_principal(Caller('ada'))",
            )
            ended = time.monotonic()
            for wire in (on_first, on_second):
                closed = closing_result(wire, timeout=CLOSE_SECONDS)
                assert closed is not None and "result" in closed, closed
            assert time.monotonic() - ended < 2 * CLOSE_SECONDS
            assert closing_result(bobs, timeout=1.0) is None  # bob's goes on
    finally:
        first.stop()
        second.stop()
