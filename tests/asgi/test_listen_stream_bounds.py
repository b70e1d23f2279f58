"""The bounds of a subscriptions/listen stream, driven in-process through the ASGI endpoint
with a policy whose limits are small: the lifetime, the backlog a slow reader may build, and
the authorize hook asked again while the stream is open. The lifetime and the hook end the
stream with the closing result; a reader past the backlog is cut off without one, the
endpoint returning by itself. Each is counted in STREAM_ENDINGS."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

import pytest

from beammcp_django import notify
from beammcp_django.authorization import Grant
from beammcp_django.credentials import aend_principal
from beammcp_django.process import get_server
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.stream_bounds import STREAM_ENDINGS

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


@dataclass(frozen=True)
class Caller:
    """A principal as a hook names it: equal when it names the same caller."""

    name: str


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


@pytest.mark.parametrize(
    ("later", "still_open"),
    [
        (Caller("ada"), True),  # the same principal, asked again: the stream goes on
        (Caller("grace"), False),  # a yes naming someone else ends it
        (True, False),  # a yes naming nobody is not the stream's principal either
    ],
)
def test_a_stream_goes_on_only_while_the_hook_names_the_principal_it_was_opened_by(
    later, still_open
):
    verdicts = iter([Caller("ada"), later, later])

    def authorize(request: Any) -> Any:
        return next(verdicts, later)

    async def scenario() -> list[dict[str, Any]]:
        client = Client()
        app = endpoint(
            authorize=authorize,
            subscription_reauthorize_seconds=0.2,
            subscription_max_seconds=0.5,
        )
        await app(scope(), client.receive, client.send)
        return client.messages()

    unauthorized, lifetime = STREAM_ENDINGS["unauthorized"], STREAM_ENDINGS["lifetime"]
    ack, closing = run(scenario())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert closing["result"]["resultType"] == "complete"
    # Open past every re-check, it ends at its lifetime; otherwise at the first re-check.
    assert STREAM_ENDINGS["lifetime"] == lifetime + still_open
    assert STREAM_ENDINGS["unauthorized"] == unauthorized + (not still_open)


def test_a_reader_that_stops_reading_is_cut_off_at_the_backlog_limit(caplog):
    """The reader takes the acknowledgement, then never reads again: the first change blocks
    the writer in ``send``, ``limit`` more wait, and the next ends the stream. The endpoint
    must then return by itself (nothing cancels it here), without the closing result (it
    could only be written after the blocked send), having left the group, with no task of
    its own still running."""
    limit = 3

    async def settle(layer: Any, channel: str) -> None:
        """Until the stream took every change published to its channel."""
        while layer.channels.get(channel) is not None and not layer.channels[channel].empty():
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.02)

    async def scenario() -> tuple[Any, ...]:
        earlier = asyncio.all_tasks()
        client = Client(read_limit=1)  # reads the acknowledgement, then never again
        app = endpoint(subscription_queue_limit=limit)
        task = asyncio.create_task(app(scope(), client.receive, client.send))
        layer = notify.channel_layer()
        while not client.bodies:  # the acknowledgement: the channel is in the group
            await asyncio.sleep(0.01)
        (channel,) = layer.groups[notify.GROUP]
        await notify.atools_changed()  # the writer takes it and blocks: the reader is gone
        await client.blocked.wait()
        before = STREAM_ENDINGS["overflow"]
        for _ in range(limit):
            await notify.atools_changed()
            await settle(layer, channel)
        waiting_at_limit = STREAM_ENDINGS["overflow"] - before
        await notify.atools_changed()  # one more than the limit lets wait
        cut = time.monotonic() + 2.0
        while STREAM_ENDINGS["overflow"] == before and time.monotonic() < cut:
            await asyncio.sleep(0.005)
        overflowed = time.monotonic()
        done, _ = await asyncio.wait({task}, timeout=2.0)
        returned_after = time.monotonic() - overflowed
        if task not in done:
            task.cancel()  # teardown only: the assertion below already failed the test
            with contextlib.suppress(asyncio.CancelledError):
                await task
        else:
            task.result()  # returned, not raised
        leftover = asyncio.all_tasks() - earlier
        for _ in range(20):  # a cancelled watcher finishes within a loop iteration or two
            leftover = {t for t in leftover if not t.done()}
            if not leftover:
                break
            await asyncio.sleep(0.005)
        still_member = channel in layer.groups.get(notify.GROUP, {})
        return task in done, returned_after, waiting_at_limit, still_member, leftover, client

    before = STREAM_ENDINGS["overflow"]
    with caplog.at_level(logging.WARNING, logger="beammcp_django.http"):
        returned, after, at_limit, member, leftover, client = run(scenario())
    assert returned, "the endpoint did not return within 2 s of the overflow"
    assert after < 2.0
    assert at_limit == 0, "the stream was cut off with only the limit's worth waiting"
    assert STREAM_ENDINGS["overflow"] == before + 1
    assert not member, "the stream's channel is still in the subscriptions group"
    assert not leftover, f"tasks outlived the request: {leftover}"
    (ack,) = client.messages()  # the closing result was never written
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert any("stopped reading" in record.getMessage() for record in caplog.records)


@pytest.fixture(autouse=True)
def _fresh_layer():
    notify.channel_layer.cache_clear()
    yield
    notify.channel_layer.cache_clear()


def test_a_quiet_stream_gets_sse_comments_to_keep_it_open(monkeypatch):
    from beammcp_django.transports import exchange

    monkeypatch.setattr(exchange, "KEEPALIVE_SECONDS", 0.05)

    async def scenario() -> list[bytes]:
        client = Client()
        await endpoint(subscription_max_seconds=0.4)(scope(), client.receive, client.send)
        return client.bodies

    bodies = run(scenario())
    assert bodies.count(b":\n\n") >= 3
    assert b"".join(bodies).count(b"data: ") == 2  # the acknowledgement and the closing result


async def acknowledged(client: Client) -> None:
    while not client.messages():
        await asyncio.sleep(0.01)


def test_the_hook_is_asked_before_each_delivery_and_a_no_delivers_nothing():
    verdicts = iter([Caller("ada"), False])  # yes when opened, no at the first delivery

    def authorize(request: Any) -> Any:
        return next(verdicts, False)

    async def scenario() -> list[dict[str, Any]]:
        client = Client()
        app = endpoint(authorize=authorize, subscription_reauthorize_seconds=60)
        served = asyncio.create_task(app(scope(), client.receive, client.send))
        await acknowledged(client)
        await notify.apublish({"kind": "tools"})
        await served
        return client.messages()

    before = STREAM_ENDINGS["unauthorized"]
    ack, closing = run(scenario())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert closing["result"]["resultType"] == "complete"  # no list_changed before it
    assert STREAM_ENDINGS["unauthorized"] == before + 1


def test_a_stream_ends_when_its_grant_expires_not_at_the_next_check():
    def authorize(request: Any) -> Any:
        return Grant(Caller("ada"), expires_at=time.time() + 0.3)

    async def scenario() -> tuple[list[dict[str, Any]], float]:
        client = Client()
        app = endpoint(authorize=authorize, subscription_reauthorize_seconds=60)
        started = time.monotonic()
        await app(scope(), client.receive, client.send)
        return client.messages(), time.monotonic() - started

    before = STREAM_ENDINGS["expired"]
    (_ack, closing), took = run(scenario())
    assert closing["result"]["resultType"] == "complete"
    assert STREAM_ENDINGS["expired"] == before + 1
    assert took < 10  # the re-check was 60 s away


def test_an_ended_principal_s_stream_ends_and_another_s_goes_on():
    def authorize(request: Any) -> Any:
        return Caller(request.header("x-caller") or "")

    def caller_scope(name: str) -> dict[str, Any]:
        opened = scope()
        opened["headers"] = [*opened["headers"], (b"x-caller", name.encode())]
        return opened

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        app = endpoint(
            authorize=authorize, subscription_reauthorize_seconds=60, subscription_max_seconds=2
        )
        ada, grace = Client(), Client()
        ada_served = asyncio.create_task(app(caller_scope("ada"), ada.receive, ada.send))
        grace_served = asyncio.create_task(app(caller_scope("grace"), grace.receive, grace.send))
        await acknowledged(ada)
        await acknowledged(grace)
        await aend_principal(Caller("ada"))
        await ada_served
        assert not grace_served.done()  # grace's stream goes on, to its lifetime
        await grace_served
        return ada.messages(), grace.messages()

    ended, lifetime = STREAM_ENDINGS["ended"], STREAM_ENDINGS["lifetime"]
    ada, grace = run(scenario())
    assert [len(ada), len(grace)] == [2, 2]  # each: the acknowledgement, the closing result
    assert STREAM_ENDINGS["ended"] == ended + 1
    assert STREAM_ENDINGS["lifetime"] == lifetime + 1
