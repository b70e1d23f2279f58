"""A fair share of the workers (``task_store.claim_next``): one principal's backlog of long
tasks does not hold the worker from another's short task, whether the worker runs one task
at a time or a shift of several (``TASKS['WORKER_CONCURRENCY']``, ``tasks.shift``).
``manage.py mcp_serve`` and one real worker (django-tasks-db's ``db_worker``, its poll
interval 0.1 s) on a fresh database (SQLite, and PostgreSQL on the run that uses it).

First in, first out, another principal's half-second task did not start within 90 s behind
100 tasks of about 6 s (from outside, 2026-12-06); it must now start once one running task
ends: within one task's length plus the poll interval."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.http.mcphttp_support import server_env

from .tasks_support import TaskClient, client, serving

pytestmark = [pytest.mark.slow, pytest.mark.orm]

BACKLOG = 100
WEEKS = 12  # the sample's report: half a second a week, so one task runs about 6 s
ONE_TASK_SECONDS = WEEKS * 0.5
POLL_SECONDS = 0.1  # the worker's --interval (tasks_support.db_worker)


def in_progress(owner: TaskClient, tasks: list[str]) -> list[str]:
    """The tasks running now: working, and writing the report's "week n of m" as they go."""
    states = [owner.get(task) for task in tasks]
    return [
        task
        for task, state in zip(tasks, states, strict=True)
        if state["status"] == "working" and "statusMessage" in state
    ]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_another_principal_s_task_waits_for_one_running_task_not_for_a_backlog(
    tmp_path: Path, concurrency: int
):
    env = {**server_env(tmp_path), "BEAMMCP_TASK_WORKER_CONCURRENCY": str(concurrency)}
    with serving(env, tmp_path) as running:
        ada, bob = client(running, "ada"), client(running, "bob")
        backlog = [ada.start(city="oslo", weeks=WEEKS) for _ in range(BACKLOG)]
        # The one worker runs the oldest `concurrency` of them at once, and no more.
        for task in backlog[:concurrency]:
            ada.wait_for(task, "working", message="week")
        assert in_progress(ada, backlog) == backlog[:concurrency]
        asked = time.monotonic()
        short = bob.start(city="lisbon", weeks=1)
        done = bob.wait_for(short, "completed")
        waited = time.monotonic() - asked
        # Ada's backlog is still queued behind the tasks that ran: nearly all of it waits.
        still = sum(ada.get(task)["status"] == "working" for task in backlog)
    assert done["statusMessage"] == "week 1 of 1"
    # Bob's task started once one running task ended and within a poll, then ran its week;
    # one second more for the requests of this test and a loaded machine.
    assert waited < ONE_TASK_SECONDS + POLL_SECONDS + 0.5 + 1.0, waited
    assert still >= BACKLOG - 2 * concurrency
