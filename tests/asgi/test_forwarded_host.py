"""USE_X_FORWARDED_HOST, as Django's get_host() reads it: the endpoint trusts X-Forwarded-Host
only when the setting says a proxy sets it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.test import override_settings

from beammcp_django.process import get_server
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports.http import McpEndpoint

DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def status(*headers: tuple[bytes, bytes]) -> int:
    sent: list[dict[str, Any]] = []
    body = json.dumps(DISCOVER).encode()

    delivered = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if not delivered.is_set():
            delivered.set()
            return {"type": "http.request", "body": body}
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "client": ("127.0.0.1", 1),
        "headers": [
            *headers,
            (b"content-type", b"application/json"),
            (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"server/discover"),
        ],
    }
    app = McpEndpoint(server=get_server, policy=get_http_policy, run_sync=run_sync_host)
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"]


def test_without_the_setting_x_forwarded_host_is_ignored():
    assert status((b"host", b"127.0.0.1"), (b"x-forwarded-host", b"evil.example.com")) == 200
    assert status((b"host", b"evil.example.com"), (b"x-forwarded-host", b"127.0.0.1")) == 400


@override_settings(USE_X_FORWARDED_HOST=True)
def test_with_the_setting_x_forwarded_host_is_the_host_checked():
    assert status((b"host", b"10.0.0.5"), (b"x-forwarded-host", b"localhost")) == 200
    assert status((b"host", b"localhost"), (b"x-forwarded-host", b"evil.example.com")) == 400


@override_settings(USE_X_FORWARDED_HOST=True)
@pytest.mark.parametrize("hostile_first", [True, False], ids=["hostile-first", "hostile-last"])
def test_two_disagreeing_x_forwarded_host_values_are_refused(hostile_first):
    """In both orders: a server taking the first value, or the last, fails one of them."""
    allowed, hostile = (
        (b"x-forwarded-host", b"localhost"),
        (b"x-forwarded-host", b"evil.example.com"),
    )
    pair = (hostile, allowed) if hostile_first else (allowed, hostile)
    assert status((b"host", b"localhost"), *pair) == 400
