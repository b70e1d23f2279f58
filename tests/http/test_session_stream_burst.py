"""A thousand 2025-11-25 sessions shared in a real redis-server (``SESSION_CACHE``), each with
its GET stream open on one ``manage.py mcp_serve`` worker, all closed together by their
clients: every stream's teardown goes through (its claim let go), nothing is answered 500 or
logged as an ASGI exception, and every session opens its stream again at once.

From outside (2026-12-06), redis-py's default pool raised ``MaxConnectionsError`` at its
100th connection: 994 "Exception in ASGI application" in one run, a ``DELETE`` answered 500,
and 896 of 1,000 sessions refused 409 when reopening 2 s later, their claims never let go.
With the claims let go on the session store's lean line (2026-12-07), the thousand streams'
leaves reached the channel layer together and met channels_redis' own bound of 100
connections: the layer was taken for down, and the next ``DELETE`` answered 503."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    RedisServer,
    ServerProcess,
    http_request,
    post,
    shared_sessions_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.one_leg]

SESSIONS = 1000
LEGACY = ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}
# How long a reopening may find its old stream still being torn down (the server reads the
# disconnects as they come): far inside the 45 s a claim left behind would hold it.
REOPEN_WITHIN = 10.0


Session = tuple[str, str]  # its id, and the principal that opened it


def principal_of(number: int) -> str:
    """Twenty principals, fifty sessions each: within SESSIONS_PER_PRINCIPAL (100)."""
    return f"principal:burst{number % 20}"


def in_session(session: str, principal: str) -> list[Session]:
    return [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("X-Mcphttp-Authorize", principal),
    ]


def stream_request(session: Session) -> bytes:
    add = in_session(*session)
    replace = {"Accept": "text/event-stream"}
    return http_request(None, method="GET", drop=LEGACY, add=add, replace=replace)


async def open_stream(port: int, session: Session) -> tuple[int, asyncio.StreamWriter]:
    """A GET stream's status, and the connection, held open."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(stream_request(session))
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    return int(head.split(b" ", 2)[1]), writer


async def open_all(
    port: int, sessions: list[Session]
) -> tuple[list[int], list[asyncio.StreamWriter]]:
    limit = asyncio.Semaphore(100)  # the test's own sockets, opened a hundred at a time

    async def one(session: Session) -> tuple[int, asyncio.StreamWriter]:
        async with limit:
            return await open_stream(port, session)

    opened = await asyncio.gather(*(one(session) for session in sessions))
    return [status for status, _ in opened], [writer for _, writer in opened]


async def reopen(port: int, session: Session) -> int:
    """Open the session's stream again, retrying a 409 while its old one is torn down."""
    deadline = time.monotonic() + REOPEN_WITHIN
    while True:
        status, writer = await open_stream(port, session)
        writer.close()
        if status != 409 or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.2)


async def burst(port: int, sessions: list[Session]) -> tuple[list[int], list[int]]:
    statuses, writers = await open_all(port, sessions)
    for writer in writers:  # every client leaves at once
        writer.transport.abort()
    await asyncio.sleep(1.0)
    limit = asyncio.Semaphore(100)

    async def again(session: Session) -> int:
        async with limit:
            return await reopen(port, session)

    return statuses, list(await asyncio.gather(*(again(session) for session in sessions)))


def test_a_thousand_streams_closed_together_are_torn_down_and_reopen_at_once(tmp_path: Path):
    redis = RedisServer(tmp_path).start()
    server = ServerProcess("mcp_serve", shared_sessions_env(tmp_path, redis.url), tmp_path)
    try:
        server.wait_ready()
        sessions = []
        for number in range(SESSIONS):
            principal = principal_of(number)
            add = [("X-Mcphttp-Authorize", principal)]
            opened = post(server.port, INITIALIZE, drop=LEGACY, add=add)
            assert opened.status == 200, opened.body
            sessions.append((opened.header("mcp-session-id") or "", principal))
        first, again = asyncio.run(burst(server.port, sessions))
        ended = [
            post(
                server.port,
                None,
                method="DELETE",
                drop=LEGACY,
                add=in_session(*session),
            ).status
            for session in sessions[:50]
        ]
        log = server.log_tail(5_000_000)
    finally:
        server.stop()
        redis.stop()
    assert set(first) == {200}, sorted(set(first))
    assert set(again) == {200}, {status: again.count(status) for status in set(again)}
    assert set(ended) == {204}, ended
    assert "Exception in ASGI application" not in log and "Traceback" not in log, log[-3000:]
    # The burst stays inside the parts' own bounds: no part is taken for down.
    assert "is unavailable (" not in log, log[-3000:]
