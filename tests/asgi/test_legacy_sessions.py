"""2025-11-25 sessions on the HTTP endpoint, in this process: its bounds refused by name, and
the endpoint with the legacy era off. (The stores, in this process and in Redis:
tests/http/test_session_stores.py; sessions over real servers and real clients:
tests/http/test_mcphttp_legacy_sessions.py and test_mcphttp_shared_sessions.py.)"""

from __future__ import annotations

import asyncio
import gc
import json
from dataclasses import replace
from typing import Any

from beammcp_django.process import get_server
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.sessions.store import SessionBounds
from tests.support import asgi_post

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}


# -- the endpoint, in process ----------------------------------------------------------------


def scope(method: str = "POST", **headers: str) -> dict[str, Any]:
    raw = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
    raw += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "http", "method": method, "path": "/mcp", "headers": raw, "client": None}


def endpoint(**policy: Any) -> McpEndpoint:
    chosen = replace(get_http_policy(), **policy)
    return McpEndpoint(server=get_server, policy=lambda: chosen, run_sync=run_sync_host)


def answer(app: McpEndpoint, request_scope: dict[str, Any], body: Any) -> tuple[int, Any, dict]:
    sent = asyncio.run(asgi_post(app, request_scope, json.dumps(body).encode()))
    start, payload = sent[0], b"".join(event.get("body", b"") for event in sent[1:])
    headers = {name.decode(): value.decode() for name, value in start["headers"]}
    return start["status"], json.loads(payload) if payload else None, headers


def test_past_the_bound_initialize_is_refused_by_name_and_the_next_one_after_an_end_served():
    app = endpoint(sessions=SessionBounds(limit=1))
    status, first, headers = answer(app, scope(), INITIALIZE)
    assert status == 200 and "result" in first
    status, refused, _ = answer(app, scope(), INITIALIZE)
    assert status == 503
    assert refused["error"]["code"] == -32000
    assert "SESSION_LIMIT" in refused["error"]["message"]
    ended = asyncio.run(
        asgi_post(
            app,
            scope(
                "DELETE",
                mcp_session_id=headers["mcp-session-id"],
                mcp_protocol_version="2025-11-25",
            ),
            b"",
        )
    )
    assert ended[0]["status"] == 204
    status, again, _ = answer(app, scope(), INITIALIZE)
    assert status == 200 and "result" in again


def test_a_failed_initialize_holds_no_session():
    app = endpoint(sessions=SessionBounds(limit=1))
    broken = {**INITIALIZE, "params": {"capabilities": {}}}  # no protocolVersion
    for _ in range(3):
        status, refused, headers = answer(app, scope(), broken)
        assert status == 200 and refused["error"]["code"] == -32602
        assert "mcp-session-id" not in headers
    status, served, _ = answer(app, scope(), INITIALIZE)
    assert status == 200 and "result" in served


def test_with_the_legacy_era_off_the_endpoint_answers_as_a_modern_only_one(settings):
    settings.BEAMMCP = {**settings.BEAMMCP, "HTTP_LEGACY_SESSIONS": False}
    app = McpEndpoint(server=get_server, policy=get_http_policy, run_sync=run_sync_host)
    status, refused, _ = answer(app, scope(), INITIALIZE)
    assert status == 404 and refused["error"]["code"] == -32601
    assert "speaks 2026-07-28 only" in refused["error"]["message"]
    sent = asyncio.run(asgi_post(app, scope("DELETE", mcp_session_id="x"), b""))
    assert sent[0]["status"] == 405
    assert (b"allow", b"POST, OPTIONS") in sent[0]["headers"]


class SlowJoinLayer:
    """A channel layer whose group_add yields for a while, as a network layer's does."""

    def __init__(self) -> None:
        from channels.layers import InMemoryChannelLayer

        self.inner = InMemoryChannelLayer()

    async def new_channel(self) -> str:
        return await self.inner.new_channel()

    async def group_add(self, group: str, channel: str) -> None:
        await asyncio.sleep(0.2)
        await self.inner.group_add(group, channel)

    async def group_discard(self, group: str, channel: str) -> None:
        await self.inner.group_discard(group, channel)

    async def receive(self, channel: str) -> Any:
        return await self.inner.receive(channel)


def test_two_get_streams_racing_for_one_session_get_one_stream_and_one_409():
    layer = SlowJoinLayer()
    app = endpoint(sessions=SessionBounds(), subscription_channel=lambda: (layer, "g"))
    _, _, headers = answer(app, scope(), INITIALIZE)
    session = headers["mcp-session-id"]

    async def scenario() -> list[int]:
        statuses: list[int] = []
        leave = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await leave.wait()
            return {"type": "http.disconnect"}

        async def get() -> None:
            async def send(event: dict[str, Any]) -> None:
                if event["type"] == "http.response.start":
                    statuses.append(event["status"])

            stream = scope(
                "GET",
                accept="text/event-stream",
                mcp_session_id=session,
                mcp_protocol_version="2025-11-25",
            )
            await app(stream, receive, send)

        racing = [asyncio.create_task(get()) for _ in range(5)]
        await asyncio.sleep(0.5)
        leave.set()
        await asyncio.wait_for(asyncio.gather(*racing), timeout=5)
        return sorted(statuses)

    assert asyncio.run(scenario()) == [200, 409, 409, 409, 409]


def test_a_call_in_a_session_leaves_no_reference_cycle_behind():
    """Every request's objects are freed by reference counting alone: a cycle through the
    exchange (a closure holding it, say) would leave each request's objects for the cyclic
    collector, a cost seen as a fifth more CPU per call under load."""
    app = endpoint(sessions=SessionBounds())
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "echo", "arguments": {"text": "no cycle"}}

    async def scenario() -> int:
        opened = await asgi_post(app, scope(), json.dumps(INITIALIZE).encode())
        session = dict(opened[0]["headers"])[b"mcp-session-id"].decode()
        in_session = scope(mcp_session_id=session, mcp_protocol_version="2025-11-25")
        body = json.dumps(call).encode()
        for _ in range(5):  # warm: first-use caches
            await asgi_post(app, in_session, body)
        gc.collect()
        gc.disable()
        try:
            for _ in range(100):
                sent = await asgi_post(app, in_session, body)
                assert b"no cycle" in sent[-1]["body"]
            return gc.collect()
        finally:
            gc.enable()

    assert asyncio.run(scenario()) < 100
