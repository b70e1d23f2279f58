"""The bound on one caller's live tasks (``BEAMMCP["TASKS"]["PER_PRINCIPAL"]``) holds exactly
under contention, across processes: two ``manage.py mcp_serve`` processes on one database
(SQLite, and PostgreSQL on the run that uses it) take a burst of task-making calls from one
caller at once, and exactly the bound is admitted, every other call refused ``-32000`` naming
the bound. No worker runs: every admitted task stays working, so each counts against the bound.

Counting the live tasks and then making one was a race: 130 calls at concurrency 10 admitted
102 and 101 tasks of a bound of 100 (from outside, 2026-12-06)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.databases import rows
from tests.http.mcphttp_support import mcp_serve_pair, server_env

from .tasks_support import TaskClient

pytestmark = [pytest.mark.slow, pytest.mark.orm]

BOUND = 4
CALLS = 48
CONCURRENCY = 16
LIMIT_REACHED = -32000  # protocol/errors.py's, a server error naming the bound


def test_a_burst_across_two_processes_admits_exactly_the_bound(tmp_path: Path):
    env = {**server_env(tmp_path), "BEAMMCP_TASK_PER_PRINCIPAL": str(BOUND)}
    with mcp_serve_pair(env, tmp_path) as servers:
        admitted: dict[str, int] = {}
        for principal in ("ada", "bob", "carol"):
            clients = [TaskClient(server.port, principal, {}) for server in servers]

            def make(index: int, clients: list[TaskClient] = clients) -> dict:
                client = clients[index % 2]
                call = {"name": "seasonal_report", "arguments": {"city": "oslo", "weeks": 12}}
                return client.send("tools/call", call)

            with ThreadPoolExecutor(CONCURRENCY) as pool:
                replies = list(pool.map(make, range(CALLS)))
            made = [reply for reply in replies if "result" in reply]
            refused = [reply for reply in replies if "error" in reply]
            assert all(reply["result"]["resultType"] == "task" for reply in made)
            assert {reply["error"]["code"] for reply in refused} <= {LIMIT_REACHED}
            assert all("PER_PRINCIPAL" in reply["error"]["message"] for reply in refused)
            admitted[principal] = len(made)
        stored = rows(
            env["DATABASE_URL"],
            "SELECT count(*) FROM beammcp_django_mcptask GROUP BY owner ORDER BY owner",
        )
    assert admitted == {"ada": BOUND, "bob": BOUND, "carol": BOUND}
    assert [count for (count,) in stored] == [BOUND] * 3
