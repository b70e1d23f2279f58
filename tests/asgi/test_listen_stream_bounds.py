"""The bounds of a subscriptions/listen stream, driven in-process through the ASGI endpoint
with a policy whose limits are small: the lifetime, the backlog a slow reader may build, and
the authorize hook asked again while the stream is open. Each ends the stream with the
closing result, counted in STREAM_ENDINGS, and frees the channel-layer group membership."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from beammcp_django import notify
from beammcp_django.endpoint import get_http_policy, get_server, run_sync_host
from beammcp_django.transports.http import STREAM_ENDINGS, McpEndpoint

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTEN = {
    "jsonrpc": "2.0",
    "id": "s-1",
    "method": "subscriptions/listen",
    "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
}


def scope() -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"subscriptions/listen"),
    ]
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
    }


class Client:
    """An ASGI client that reads the stream, or stops reading after ``read_limit`` bodies."""

    def __init__(self, read_limit: int | None = None) -> None:
        self.bodies: list[bytes] = []
        self.read_limit = read_limit
        self.delivered = False
        self.blocked = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if not self.delivered:
            self.delivered = True
            return {"type": "http.request", "body": json.dumps(LISTEN).encode()}
        await asyncio.Event().wait()
        raise AssertionError

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] != "http.response.body":
            return
        if self.read_limit is not None and len(self.bodies) >= self.read_limit:
            self.blocked.set()
            await asyncio.sleep(3600)  # a reader that stopped reading: send never returns
        self.bodies.append(message.get("body", b""))

    def messages(self) -> list[dict[str, Any]]:
        text = b"".join(self.bodies).decode()
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def endpoint(**limits: Any) -> McpEndpoint:
    policy = replace(get_http_policy(), **limits)
    return McpEndpoint(server=lambda: get_server(), policy=lambda: policy, run_sync=run_sync_host)


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=20))


def test_a_stream_past_its_lifetime_ends_with_the_closing_result():
    async def scenario() -> list[dict[str, Any]]:
        client = Client()
        await endpoint(subscription_max_seconds=0.3)(scope(), client.receive, client.send)
        return client.messages()

    before = STREAM_ENDINGS["lifetime"]
    ack, closing = run(scenario())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert closing["id"] == "s-1"
    assert closing["result"]["resultType"] == "complete"
    assert closing["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "s-1"
    assert STREAM_ENDINGS["lifetime"] == before + 1


def test_a_stream_whose_authorization_lapses_is_closed_at_the_next_check():
    verdicts = iter([True, False])  # yes at the start, no when asked again

    def authorize(request: Any) -> bool:
        return next(verdicts)

    async def scenario() -> list[dict[str, Any]]:
        client = Client()
        app = endpoint(authorize=authorize, subscription_reauthorize_seconds=0.2)
        await app(scope(), client.receive, client.send)
        return client.messages()

    before = STREAM_ENDINGS["unauthorized"]
    ack, closing = run(scenario())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert closing["result"]["resultType"] == "complete"
    assert STREAM_ENDINGS["unauthorized"] == before + 1


def test_a_reader_that_stops_reading_is_cut_off_at_the_backlog_limit():
    async def scenario() -> int:
        client = Client(read_limit=1)  # reads the acknowledgement, then never again
        app = endpoint(subscription_queue_limit=3)
        task = asyncio.create_task(app(scope(), client.receive, client.send))
        await asyncio.sleep(0.2)
        notify.tools_changed()  # this one blocks the writer (the reader is gone)
        await client.blocked.wait()
        for _ in range(10):
            notify.tools_changed()
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        task.cancel()
        return len(client.bodies)

    before = STREAM_ENDINGS["overflow"]
    assert run(scenario()) == 1
    assert STREAM_ENDINGS["overflow"] == before + 1


@pytest.fixture(autouse=True)
def _fresh_layer():
    notify.channel_layer.cache_clear()
    yield
    notify.channel_layer.cache_clear()


def test_a_quiet_stream_gets_sse_comments_to_keep_it_open(monkeypatch):
    from beammcp_django.transports import http

    monkeypatch.setattr(http, "KEEPALIVE_SECONDS", 0.05)

    async def scenario() -> list[bytes]:
        client = Client()
        await endpoint(subscription_max_seconds=0.4)(scope(), client.receive, client.send)
        return client.bodies

    bodies = run(scenario())
    assert bodies.count(b":\n\n") >= 3
    assert b"".join(bodies).count(b"data: ") == 2  # the acknowledgement and the closing result
