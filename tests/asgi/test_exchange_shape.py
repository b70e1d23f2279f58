"""The shape of one HTTP exchange on the hot path, driven in-process: a call that answers
quickly and emits nothing runs in the request's own task and starts no other (no call task,
no disconnect watcher, no notification writer). Each of those cost microseconds per request
(docs/performance.md); this holds the shape so a change that brings one back is seen."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from beammcp_django.process import get_server
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports import exchange
from beammcp_django.transports.http import McpEndpoint
from tests.support import MODERN, asgi_post, message


def headers_for(tool: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", tool.encode()),
    ]


async def serve_once(
    tool: str, arguments: dict[str, Any], endpoint: Any = None
) -> tuple[list[dict[str, Any]], int]:
    """One request through the endpoint (by default the bare ``McpEndpoint``); what it sent,
    and how many tasks it created. "Quickly" is the call answering before the disconnect
    watch would start (``WATCH_AFTER_SECONDS``); that watch is put off past the test here,
    since on a loaded machine even ``echo`` once took 64 ms (2026-12-06) and was watched,
    as it should be."""
    body = json.dumps(message(7, "tools/call", {"name": tool, "arguments": arguments})).encode()
    created = 0
    loop = asyncio.get_running_loop()

    def counting_factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        nonlocal created
        created += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    if endpoint is None:
        endpoint = McpEndpoint(server=get_server, policy=get_http_policy, run_sync=run_sync_host)
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers_for(tool)}
    watch_after, exchange.WATCH_AFTER_SECONDS = exchange.WATCH_AFTER_SECONDS, 3600.0
    loop.set_task_factory(counting_factory)
    try:
        sent = await asgi_post(endpoint, scope, body)
    finally:
        loop.set_task_factory(None)
        exchange.WATCH_AFTER_SECONDS = watch_after
    return sent, created


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("echo", {"text": "hello"}),  # sync: a worker thread, awaited by the request's task
        ("get_forecast", {"city": "oslo", "days": 1}),  # async: awaited in the request's task
    ],
)
def test_a_quick_call_runs_in_the_request_task_and_starts_no_other(tool, arguments):
    sent, created = asyncio.run(serve_once(tool, arguments))
    assert created == 0
    assert sent[0]["status"] == 200
    reply = json.loads(sent[1]["body"])
    assert reply["id"] == 7
    assert reply["result"]["resultType"] == "complete"
    assert not reply["result"].get("isError")
