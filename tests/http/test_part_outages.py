"""A shared part that stops answering, under load, while ``manage.py mcp_serve`` keeps
running: the real redis-server that holds the 2025-11-25 sessions (``SESSION_CACHE``) and is
the channel layer, stopped and started again empty; every request that needs it answered 503
naming it, with ``Retry-After`` and its JSON-RPC id, the outage logged once as it starts and
once as it ends, never a traceback; stateless 2026-07-28 calls served throughout; and the
server serving sessions again by itself once Redis is back (2026-12-06, from outside: 500
``text/plain`` and a traceback a request, 390 in 2.5 s)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.databases import rows
from tests.http.mcphttp_support import (
    RedisServer,
    ServerProcess,
    Wire,
    http_request,
    post,
    server_env,
    shared_sessions_env,
)
from tests.postgres_cluster import PostgresCluster
from tests.support import message
from tests.tasks.tasks_support import TASKS, TaskClient

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}
LEGACY = ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]
STORE_DOWN = "the session store (Redis) is unavailable; send the request again later"
LAYER_DOWN = "the channel layer is unavailable; send the request again later"
LISTEN = message("listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})


def initialize(port: int) -> Any:
    return post(port, INITIALIZE, drop=LEGACY)


def stream_request(session: str) -> bytes:
    add = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")]
    return http_request(
        None, method="GET", drop=LEGACY, add=add, replace={"Accept": "text/event-stream"}
    )


def ping(port: int, session: str, number: int) -> Any:
    add = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")]
    return post(port, {"jsonrpc": "2.0", "id": number, "method": "ping"}, drop=LEGACY, add=add)


class Load:
    """Threads sending, until stopped, each of ``sends`` (a kind of request: what sends one,
    given a number) in turn: the statuses each kind got, and each 503's body and
    ``Retry-After``."""

    def __init__(self, sends: dict[str, Callable[[int], Any]], threads: int = 4) -> None:
        self.sends = sends
        self.statuses: dict[str, Counter[int]] = {kind: Counter() for kind in sends}
        self.refusals: list[tuple[str, Any, str | None]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._send) for _ in range(threads)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _send(self) -> None:
        number = 0
        while not self._stop.is_set():
            for kind, send in self.sends.items():
                number += 1
                response = send(number)
                with self._lock:
                    self.statuses[kind][response.status] += 1
                    if response.status == 503:
                        retry = response.header("retry-after")
                        self.refusals.append((kind, response.json(), retry))


def session_load(port: int, session: str) -> Load:
    """An ``initialize``, a ``ping`` in an open session and a stateless ``tools/list``."""
    return Load(
        {
            "initialize": lambda number: initialize(port),
            "ping": lambda number: ping(port, session, number),
            "stateless": lambda number: post(port, message(number, "tools/list")),
        }
    )


def test_a_redis_outage_is_answered_503_by_name_logged_once_and_survived(tmp_path: Path):
    redis = RedisServer(tmp_path).start()
    server = ServerProcess("mcp_serve", shared_sessions_env(tmp_path, redis.url), tmp_path)
    try:
        server.wait_ready()
        opened = initialize(server.port)
        assert opened.status == 200, opened.body
        session = opened.header("mcp-session-id") or ""
        with session_load(server.port, session) as before:
            time.sleep(1.0)
        assert set(before.statuses["ping"]) == {200}, before.statuses
        with Wire(server.port) as stream:  # the session's GET stream, open as Redis stops
            stream.send(stream_request(session))
            assert stream.has_data(10)
            redis.stop()
            with session_load(server.port, session) as down:
                time.sleep(2.5)
            ended = stream.response(timeout=10)  # ended by the server, not left hanging
            listen = post(server.port, LISTEN)  # a 2026-07-28 stream: the layer it needs is down
        redis.start()  # empty: the sessions it held are gone
        reopened = initialize(server.port)
        old = ping(server.port, session, 1)
        with Wire(server.port) as again:  # the layer answers again: a listen stream opens
            again.send(http_request(LISTEN))
            listening = again.has_data(10)
        time.sleep(0.2)
        log = server.log_tail(1_000_000)
    finally:
        server.stop()
        redis.stop()
    # Every request that needed Redis was refused by name; the stateless ones were served.
    assert set(down.statuses["initialize"]) == {503}, down.statuses
    assert set(down.statuses["ping"]) == {503}, down.statuses
    assert set(down.statuses["stateless"]) == {200}, down.statuses
    assert sum(down.statuses["initialize"].values()) >= 10
    for kind, body, retry in down.refusals:
        assert body["error"] == {"code": -32603, "message": STORE_DOWN}, body
        assert body["id"] == ("init" if kind == "initialize" else body["id"])
        assert isinstance(body["id"], (str, int)), body  # the request's id, never null
        assert retry == "5"
    assert ended.status == 200 and ended.content_type == "text/event-stream", ended
    assert listen.status == 503 and listen.header("retry-after") == "5", listen.body
    assert listen.json()["error"] == {"code": -32603, "message": LAYER_DOWN}
    assert listen.json()["id"] == "listen"
    # Back by itself: a new session opens; the old one went with the Redis that held it.
    assert reopened.status == 200, reopened.body
    assert old.status == 404, old.body
    # Once as it started, once as it ended; no traceback, no error a request.
    assert log.count("the session store (Redis) is unavailable (") == 1, log[-3000:]
    assert log.count("the session store (Redis) answers again, after") == 1, log[-3000:]
    assert log.count("the channel layer is unavailable (") == 1, log[-3000:]
    assert listening and log.count("the channel layer answers again, after") == 1, log[-3000:]
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]


TASK_META = {"io.modelcontextprotocol/clientCapabilities": TASKS}
DATABASE_DOWN = "the database is unavailable; send the request again later"


def test_a_database_outage_is_answered_503_by_name_logged_once_and_survived(tmp_path: Path):
    """The tasks extension's requests on PostgreSQL: its server stopped (a fast shutdown: every
    connection ended) and started again under load. A tool that needs no database is served
    throughout, its calls counted in memory and written to the connectome store by the first
    flush after; the task made before is there after."""
    cluster = PostgresCluster().start()
    try:
        env = {
            **server_env(tmp_path, database_url=cluster.url),
            "BEAMMCP_TEST_FLUSH_SECONDS": "0.5",
        }
        server = ServerProcess("mcp_serve", env, tmp_path)
        try:
            server.wait_ready()
            ada = TaskClient(server.port, "ada", {})
            made = ada.start(city="oslo", weeks=1)  # no worker: it stays working
            with task_load(ada, made) as before:
                time.sleep(1.0)
            cluster.stop()
            with task_load(ada, made) as down:
                time.sleep(2.5)
            cluster.start()
            after = ada.send("tasks/get", {"taskId": made})
            while "error" in after:  # a thread's connection broken by the restart: dropped
                after = ada.send("tasks/get", {"taskId": made})
            echoed = sum(load.statuses["echo"][200] for load in (before, down))
            deadline = time.monotonic() + 10
            while echo_count(cluster.url) < echoed and time.monotonic() < deadline:
                time.sleep(0.2)
            counted = echo_count(cluster.url)
            log = server.log_tail(1_000_000)
        finally:
            server.stop()
    finally:
        cluster.remove()
    for load in (before, down):
        assert set(load.statuses["echo"]) == {200}, load.statuses
    for kind in ("tasks/get", "making a task"):
        assert set(before.statuses[kind]) == {200}, before.statuses
        assert set(down.statuses[kind]) == {503}, down.statuses
        assert sum(down.statuses[kind].values()) >= 5
    for _, body, retry in down.refusals:
        assert body["error"] == {"code": -32603, "message": DATABASE_DOWN}, body
        assert isinstance(body["id"], (str, int)) and retry == "5", (body, retry)
    assert after["result"]["taskId"] == made and after["result"]["status"] == "working"
    assert counted >= echoed > 0  # none of the calls made while it was down was lost
    assert log.count("the database is unavailable (") == 1, log[-3000:]
    assert log.count("the database answers again, after") == 1, log[-3000:]
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]


def echo_count(url: str) -> int:
    """The calls of ``echo`` the connectome store holds."""
    found = rows(
        url,
        "SELECT COALESCE(SUM(count), 0) FROM beammcp_django_observededge "
        "WHERE kind = 'invoke' AND target LIKE '%/tool/echo'",
    )
    return int(found[0][0])


def task_load(owner: TaskClient, task_id: str) -> Load:
    """Polling a task, making new ones, and calling ``echo`` (no database)."""
    add = [("X-Mcphttp-Authorize", f"principal:{owner.principal}")]
    get = message(1, "tasks/get", {"taskId": task_id}, **TASK_META)
    report = {"name": "seasonal_report", "arguments": {"city": "oslo", "weeks": 1}}
    make = message(2, "tools/call", report, **TASK_META)
    echo = message(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    return Load(
        {
            "tasks/get": lambda number: post(owner.port, get, add=add),
            "making a task": lambda number: post(owner.port, make, add=add),
            "echo": lambda number: post(owner.port, echo, add=add),
        }
    )
