"""Task status notifications across processes: ``mcp_serve`` and a ``db_worker`` share
Channels' Redis layer (a redis-server of the test's own), and a ``subscriptions/listen``
stream watching a task is told each status it reaches, whichever process moved it: the
worker (input required, completed) or the server (working again, after ``tasks/update``).
Another principal's stream asking for the same task is agreed to watch nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.mcphttp_support import (
    REDIS,
    Wire,
    http_request,
    message,
    read_events,
    redis_server,
    server_env,
    start_server,
)

from .tasks_support import TASKS, Worker, client

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS is None, reason="no redis-server binary on this machine"),
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The server on a shared layer, no worker yet: a task made now waits for one."""
    with redis_server(tmp_path) as url:
        env = {**server_env(tmp_path), "BEAMMCP_TEST_REDIS_URL": url}
        server = start_server("mcp_serve", env, tmp_path)
        try:
            yield {"env": env, "server": server, "dir": tmp_path}
        finally:
            server.stop()


def listen(port: int, principal: str, task_id: str) -> Wire:
    """A subscriptions/listen stream watching ``task_id``, held open on its own connection."""
    capabilities = {**TASKS, "elicitation": {}}
    request = message(
        1,
        "subscriptions/listen",
        {"notifications": {"taskIds": [task_id]}},
        **{"io.modelcontextprotocol/clientCapabilities": capabilities},
    )
    wire = Wire(port, timeout=30)
    wire.send(http_request(request, add=[("X-Mcphttp-Authorize", f"principal:{principal}")]))
    return wire


def test_a_listen_stream_is_told_its_task_s_states_in_order_from_any_process(served):
    ada = client(served, elicitation={})
    task_id = ada.start(city="lisbon", weeks=1)
    port = served["server"].port
    with listen(port, "ada", task_id) as stream, listen(port, "mallory", task_id) as foreign:
        (acknowledged,) = read_events(stream, 1, timeout=10)
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
        assert acknowledged["params"]["notifications"] == {"taskIds": [task_id]}
        (refused,) = read_events(foreign, 1, timeout=10)
        assert refused["params"]["notifications"] == {"taskIds": []}

        worker = Worker(served["env"], served["dir"], "notifying")
        try:
            # As a client follows its task: told it waits for input, it answers.
            (asked,) = read_events(stream, 1, timeout=20)
            assert asked["method"] == "notifications/tasks", asked
            assert asked["params"]["status"] == "input_required", asked
            assert asked["params"]["inputRequests"] == ada.get(task_id)["inputRequests"]
            answer = {"detail": {"action": "decline"}}
            ada.result("tasks/update", {"taskId": task_id, "inputResponses": answer})
            done = ada.wait_for(task_id, "completed")
            events = read_events(stream, 2, timeout=10)
        finally:
            worker.stop()
        # Each move is published from the process that made it (the server's to working,
        # the worker's to completed), reading the task as it is then: a working read once
        # the worker completed it is told as completed, and one arriving after the worker's
        # completed is not told at all (older). Never a state older than one told.
        told = [event["params"] for event in events]
        statuses = [state["status"] for state in told]
        assert statuses in (["working", "completed"], ["completed"] * 2, ["completed"]), events
        assert told[-1]["result"] == done["result"]
        assert all(state["taskId"] == task_id for state in told)
        assert read_events(foreign, 1, timeout=1) == []  # told nothing after its acknowledgment
