"""What the tests of tests/tasks share: a task worker process, and a client of the tests'
own for the tasks extension on plain HTTP (the official SDK client 2.3.0 has none)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.databases import rows
from tests.http.mcphttp_support import REPO_ROOT, ServerProcess, message, post, start_server

EXTENSION = "io.modelcontextprotocol/tasks"
TASKS = {"extensions": {EXTENSION: {}}}
# How long a test waits for a task to reach a status: far more than any step takes here.
SETTLE_SECONDS = 40.0
DOC = REPO_ROOT / "docs" / "tasks.md"
# The worker as docs/tasks.md tells a user to run it (one process: DEBUG would otherwise
# fork a reloader's child); the tests add a short poll interval and no startup delay.
WORKER_COMMAND = "python manage.py db_worker --no-reload"
CRON_COMMANDS = ("python manage.py mcp_tasks reap", "python manage.py mcp_tasks purge")
# The lease the kill tests run with, so that a dead worker's task is noticed in seconds.
SHORT_LEASE = "2"


def db_worker(name: str) -> list[str]:
    """The documented worker command, with the tests' additions."""
    return [
        sys.executable,
        *WORKER_COMMAND.split()[1:],
        *("--interval", "0.1", "--no-startup-delay", "--worker-id", name),
    ]


def descendants(pid: int) -> list[int]:
    """Every process under ``pid``, read from /proc."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = [int(child) for child in children]
    return found + [grandchild for child in found for grandchild in descendants(child)]


class Worker:
    """A task worker (by default ``manage.py db_worker``) in a process group of its own, its
    output in a log file."""

    def __init__(
        self, env: Mapping[str, str], log_dir: Path, name: str, command: list[str] | None = None
    ) -> None:
        self.log_path = log_dir / f"worker-{name}.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                command or db_worker(name),
                cwd=REPO_ROOT,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        """SIGKILL to the worker and every process under it (RQ's work horse runs in a
        session of its own): no handler runs, no row is tidied, as when a machine is lost."""
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, a short grace, then SIGKILL, as for a server process."""
        ServerProcess.attach("db_worker", self.proc, 0, self.log_path).stop()


class TaskClient:
    """The extension's client side in a few lines: every request declares the extension in
    its capabilities and names its task in ``Mcp-Name``, as the extension asks."""

    def __init__(self, port: int, principal: str, capabilities: Mapping[str, Any]) -> None:
        self.port = port
        self.principal = principal
        self.capabilities = {**TASKS, **capabilities}
        self._ids = 0

    def send(self, method: str, params: Mapping[str, Any], **options: Any) -> dict[str, Any]:
        """The JSON-RPC response to one request (the last message of a stream)."""
        self._ids += 1
        value = message(
            self._ids,
            method,
            dict(params),
            **{"io.modelcontextprotocol/clientCapabilities": self.capabilities},
        )
        add = [("X-Mcphttp-Authorize", f"principal:{self.principal}")]
        response = post(self.port, value, add=add, **options)
        if response.content_type == "text/event-stream":
            return response.events()[-1]
        return response.json()

    def result(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        reply = self.send(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def start(self, **arguments: Any) -> str:
        made = self.result("tools/call", {"name": "seasonal_report", "arguments": arguments})
        assert made["resultType"] == "task" and made["status"] == "working", made
        return made["taskId"]

    def get(self, task_id: str) -> dict[str, Any]:
        return self.result("tasks/get", {"taskId": task_id})

    def wait_for(self, task_id: str, *statuses: str, message: str | None = None) -> dict:
        """Poll until the task is in one of ``statuses`` (and, with ``message``, reports a
        statusMessage starting with it)."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            task = self.get(task_id)
            said = task.get("statusMessage", "")
            if task["status"] in statuses and (message is None or said.startswith(message)):
                return task
            assert time.monotonic() < deadline, f"still {task} after {SETTLE_SECONDS} s"
            time.sleep(0.1)

    def wait_for_first_half(self, task_id: str) -> dict:
        """Poll until the seasonal report is working on a week of the first half of its run:
        a window of half the run to notice it in (one week's half second was missed on a
        loaded CI machine), and half the run left to cancel or kill it before it ends."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            task = self.get(task_id)
            week = re.fullmatch(r"week (\d+) of (\d+)", task.get("statusMessage", ""))
            if task["status"] == "working" and week and 2 * int(week[1]) <= int(week[2]):
                return task
            assert task["status"] == "working", f"{task} ended before it could be caught"
            assert time.monotonic() < deadline, f"still {task} after {SETTLE_SECONDS} s"
            time.sleep(0.1)


@contextlib.contextmanager
def serving(
    env: dict[str, str],
    directory: Path,
    worker_command: list[str] | None = None,
    *,
    worker: bool = True,
) -> Iterator[dict[str, Any]]:
    """``manage.py mcp_serve`` and one worker on ``env`` (none with ``worker=False``), both
    stopped on leaving: what the tests' ``served`` fixtures hold (the environment, the server,
    the worker, the directory)."""
    server = start_server("mcp_serve", env, directory)
    try:
        running = Worker(env, directory, "first", worker_command) if worker else None
        try:
            yield {"env": env, "server": server, "worker": running, "dir": directory}
        finally:
            if running is not None:
                running.stop()
    finally:
        server.stop()


def payload(result: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key not in ("_meta", "resultType")}


def report_text(task: Mapping[str, Any]) -> str:
    assert task["status"] == "completed", task
    return task["result"]["content"][0]["text"]


def task_row(url: str, task_id: str) -> tuple[str, int]:
    (found,) = rows(
        url, f"SELECT status, attempts FROM beammcp_django_mcptask WHERE task_id = '{task_id}'"
    )
    return found


def client(served: Mapping[str, Any], principal: str = "ada", **capabilities: Any) -> TaskClient:
    server: ServerProcess = served["server"]
    return TaskClient(server.port, principal, capabilities)
