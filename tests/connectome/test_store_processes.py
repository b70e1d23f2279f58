"""What a real server process's counts survive: a stop, and a kill.

A process writes its counts every ``CONNECTOME_FLUSH_SECONDS`` and once more when it stops
normally (SIGTERM to uvicorn runs the exit flush), so a SIGKILL loses at most the calls of
its last interval, and a stop loses none (docs/connectome.md).
"""

from __future__ import annotations

import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.databases import rows
from tests.http.mcphttp_support import message, post, server_env, start_server

pytestmark = [pytest.mark.slow, pytest.mark.orm]


def echo_count(env: dict[str, str]) -> int:
    ((count,),) = rows(
        env["DATABASE_URL"],
        "SELECT COALESCE(SUM(count), 0) FROM beammcp_django_observededge "
        "WHERE source LIKE '%/server' AND target LIKE '%/tool/echo'",
    )
    return int(count)


def calls(port: int, how_many: int) -> None:
    for index in range(how_many):
        reply = post(
            port, message(index, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        )
        assert reply.status == 200


def test_a_killed_process_loses_at_most_the_calls_of_its_last_flush_interval(tmp_path: Path):
    env = {**server_env(tmp_path), "BEAMMCP_TEST_FLUSH_SECONDS": "0.5"}
    server = start_server("mcp_serve", env, tmp_path)
    try:
        calls(server.port, 20)
        deadline = time.monotonic() + 10
        while echo_count(env) < 20:  # a flush within an interval or so (a loaded machine waits)
            assert time.monotonic() < deadline, "no flush wrote the first calls"
            time.sleep(0.1)
        calls(server.port, 5)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=10)
    finally:
        server.stop()
    assert 20 <= echo_count(env) <= 25


@pytest.mark.parametrize("kind", ["mcp_serve", "daphne"])
def test_a_process_that_stops_normally_writes_every_count_at_exit(tmp_path: Path, kind):
    # uvicorn ends its process by re-raising the SIGTERM it handled, so atexit never runs:
    # the router's lifespan shutdown writes them. Daphne exits normally: atexit does.
    env = {**server_env(tmp_path), "BEAMMCP_TEST_FLUSH_SECONDS": "3600"}
    server = start_server(kind, env, tmp_path)
    try:
        calls(server.port, 7)
        assert echo_count(env) == 0  # no interval has passed: nothing written yet
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=10)
    finally:
        server.stop()
    assert echo_count(env) == 7


def test_processes_flushing_into_one_database_at_once_keep_every_count(tmp_path: Path):
    # Three servers on one database, each flushing every 0.1 s while calls arrive on all of
    # them at once: their upserts run concurrently (on PostgreSQL, in the run that uses it),
    # and the merged count is every call, none lost or counted twice.
    env = {**server_env(tmp_path), "BEAMMCP_TEST_FLUSH_SECONDS": "0.1"}
    servers = [start_server("uvicorn", env, tmp_path) for _ in range(3)]
    try:
        with ThreadPoolExecutor(6) as clients:
            list(clients.map(lambda index: calls(servers[index % 3].port, 15), range(6)))
        for server in servers:
            server.proc.send_signal(signal.SIGTERM)
        for server in servers:
            server.proc.wait(timeout=10)
    finally:
        for server in servers:
            server.stop()
    assert echo_count(env) == 90
    ((nodes,),) = rows(
        env["DATABASE_URL"],
        "SELECT COUNT(DISTINCT node) FROM beammcp_django_observededge "
        "WHERE target LIKE '%/tool/echo'",
    )
    assert nodes == 3
