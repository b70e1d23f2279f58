"""2025-11-25 sessions on the HTTP endpoint, in this process: the store's bounds and expiry,
what binds a session to its principal, and the endpoint with the legacy era off.
(Sessions over real servers and real clients: tests/http/test_mcphttp_legacy_sessions.py.)"""

from __future__ import annotations

import asyncio
import json
import string
from dataclasses import dataclass, replace
from typing import Any

import pytest

from beammcp_django.host_calls import run_sync_host
from beammcp_django.http_policy import get_http_policy
from beammcp_django.servers import get_server
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.sessions import (
    SessionBounds,
    SessionRefused,
    Sessions,
    principal_key,
)
from tests.support import asgi_post

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Caller:
    name: str


def test_session_ids_are_192_bits_of_visible_ascii_and_never_repeat():
    sessions = Sessions()
    ids = {sessions.open("", SessionBounds()).id for _ in range(1000)}
    assert len(ids) == 1000
    allowed = set(string.ascii_letters + string.digits + "-_")
    assert all(len(value) == 32 and set(value) <= allowed for value in ids)


def test_a_session_is_found_only_by_the_principal_that_opened_it():
    sessions, bounds = Sessions(), SessionBounds()
    session = sessions.open(principal_key(Caller("ada")), bounds)
    assert sessions.find(session.id, principal_key(Caller("ada")), bounds) is session
    assert sessions.find(session.id, principal_key(Caller("grace")), bounds) is None
    assert sessions.find(session.id, principal_key(None), bounds) is None
    assert sessions.find("not-a-session", principal_key(Caller("ada")), bounds) is None


def test_principal_keys_name_a_model_by_its_row_and_anything_else_by_its_repr():
    class Meta:
        label_lower = "auth.user"

    class User:
        _meta = Meta()

        def __init__(self, pk: int) -> None:
            self.pk = pk

    assert principal_key(User(7)) == principal_key(User(7)) != principal_key(User(8))
    assert principal_key(Caller("ada")) == principal_key(Caller("ada"))
    assert principal_key(None) == ""
    # An object whose repr holds its address matches nothing but itself: fails closed.
    assert principal_key(object()) != principal_key(object())

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("host code")

    assert principal_key(Broken()) != principal_key(Broken())


def test_a_session_unused_past_the_idle_time_ends_and_a_use_keeps_it():
    clock = Clock()
    sessions, bounds = Sessions(clock), SessionBounds(idle_seconds=60)
    kept, dropped = sessions.open("", bounds), sessions.open("", bounds)
    clock.now += 50
    assert sessions.find(kept.id, "", bounds) is kept
    clock.now += 50  # kept was used 50 s ago, dropped 100 s ago
    assert sessions.find(dropped.id, "", bounds) is None
    assert sessions.find(kept.id, "", bounds) is kept
    assert len(sessions) == 1


def test_past_a_principals_bound_initialize_is_refused_429_and_past_the_total_503():
    sessions, bounds = Sessions(), SessionBounds(limit=5, per_principal=2)
    ada = principal_key(Caller("ada"))
    first = sessions.open(ada, bounds)
    sessions.open(ada, bounds)
    with pytest.raises(SessionRefused) as refused:
        sessions.open(ada, bounds)
    assert refused.value.status == 429 and "SESSIONS_PER_PRINCIPAL" in refused.value.message
    sessions.close(first)  # ending one frees its place
    sessions.open(ada, bounds)
    for _ in range(3):  # principal-less sessions count against the total only
        sessions.open("", bounds)
    with pytest.raises(SessionRefused) as refused:
        sessions.open("", bounds)
    assert refused.value.status == 503 and "SESSION_LIMIT" in refused.value.message


def test_sessions_with_no_principal_are_bounded_per_client_address():
    sessions, bounds = Sessions(), SessionBounds(limit=10, per_principal=2)
    sessions.open("", bounds, "203.0.113.7")
    sessions.open("", bounds, "203.0.113.7")
    with pytest.raises(SessionRefused) as refused:
        sessions.open("", bounds, "203.0.113.7")
    assert refused.value.status == 429
    assert "this client address, with no principal," in refused.value.message
    sessions.open("", bounds, "198.51.100.1")  # another address has its own share
    sessions.open(principal_key(Caller("ada")), bounds, "203.0.113.7")  # and a principal too


def test_expired_sessions_never_count_against_a_bound():
    clock = Clock()
    sessions, bounds = Sessions(clock), SessionBounds(idle_seconds=10, limit=2, per_principal=1)
    sessions.open("a", bounds)
    sessions.open("b", bounds)
    clock.now += 11
    sessions.open("a", bounds)  # neither bound holds the expired two against it
    sessions.open("c", bounds)


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
