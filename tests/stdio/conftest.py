"""Driving ``manage.py mcp_stdio`` as a real subprocess, with a bound on every wait.

``StdioProcess`` owns one server process: two daemon threads drain its stdout and stderr
(stdout is kept byte for byte so a test can check every line), writes go through a
non-blocking descriptor with a deadline, and ``stop()`` kills whatever is still alive.
No call here can block longer than the timeout it was given.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.migrated import migrated_database_url
from tests.support import REPO_ROOT

SERVER_COMMAND = [sys.executable, "manage.py", "mcp_stdio"]
FAULT_SETTINGS = "tests.stdio_settings"

LEGACY = "2025-11-25"

# One reply or one exit should never take longer than this; the server answers in ms.
REPLY_TIMEOUT = 10.0
# Django's start, before a stdio server reads its first line: 1.5 to 2 s idle, several times
# that on a loaded machine. A stdio server says it is ready only by answering, so every wait
# before its first message allows this on top of the wait's own bound.
START_TIMEOUT = 30.0


def legacy_request(
    request_id: str | int, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A 2025-11-25 request: no ``_meta``."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def memory_kib(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` memory field (``VmRSS``, ``VmHWM``) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")


class StdioProcess:
    """One ``manage.py mcp_stdio`` process and everything it wrote."""

    def __init__(self, env: dict[str, str], arguments: tuple[str, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            [*SERVER_COMMAND, *arguments],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        assert self.proc.stdin is not None
        self._stdin_fd = self.proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self.stdout_bytes = bytearray()
        self.stderr_bytes = bytearray()
        # Every parsed stdout line in arrival order; ``_cursor`` marks what was consumed.
        self.history: list[dict[str, Any]] = []
        self.stdout_closed = False
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._pump_stdout, daemon=True, name="stdout-pump"),
            threading.Thread(target=self._pump_stderr, daemon=True, name="stderr-pump"),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- reading ----------------------------------------------------------------------------

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        pending = bytearray()
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    self.stdout_closed = True
                    self._changed.notify_all()
                    return
                self.stdout_bytes += chunk
                pending += chunk
                start = 0
                while (newline := pending.find(b"\n", start)) >= 0:
                    line = bytes(pending[start:newline])
                    start = newline + 1
                    try:
                        message = json.loads(line)
                    except ValueError:
                        message = {"__unparseable__": line[:200].decode("utf-8", "replace")}
                    self.history.append(message)
                del pending[:start]
                self._changed.notify_all()

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65_536)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    return
                self.stderr_bytes += chunk
                self._changed.notify_all()

    def start_allowance(self) -> float:
        """What a wait adds for the process's start: nothing once it has written a message
        (it is serving), ``START_TIMEOUT`` before."""
        with self._changed:
            return 0.0 if self.history else START_TIMEOUT

    def wait_for(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """Wait until ``predicate()`` is truthy (checked under the lock); return its value.
        ``timeout`` counts from when the server is serving (``start_allowance``)."""
        deadline = time.monotonic() + timeout + self.start_allowance()
        with self._changed:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"timed out after {timeout}s waiting for {what}; "
                        f"stderr tail: {bytes(self.stderr_bytes[-2000:])!r}"
                    )
                self._changed.wait(min(remaining, 0.1))

    def response(self, request_id: Any, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """The response carrying ``request_id`` (it may already have arrived)."""

        def find() -> dict[str, Any] | None:
            for message in self.history:
                if "method" not in message and message.get("id") == request_id:
                    return message
            if self.stdout_closed:
                raise AssertionError(f"stdout closed before a response to id {request_id!r}")
            return None

        return self.wait_for(find, timeout, f"the response to id {request_id!r}")

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        with self._changed:
            return [m for m in self.history if "method" not in m and m.get("id") == request_id]

    def errors_without_id(self) -> list[dict[str, Any]]:
        """Error responses with no ``id`` member (an unreadable id; never ``"id": null``)."""
        with self._changed:
            return [m for m in self.history if "error" in m and "id" not in m]

    def next_error_without_id(self, seen: int, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """Wait for the (seen+1)-th error response with no ``id`` member."""

        def find() -> dict[str, Any] | None:
            errors = [m for m in self.history if "error" in m and "id" not in m]
            return errors[seen] if len(errors) > seen else None

        return self.wait_for(find, timeout, "an error response without an id")

    def stderr_contains(self, needle: bytes, timeout: float = REPLY_TIMEOUT) -> bool:
        self.wait_for(lambda: needle in self.stderr_bytes, timeout, f"{needle!r} on stderr")
        return True

    # -- writing ----------------------------------------------------------------------------

    def send_raw(self, data: bytes, timeout: float = REPLY_TIMEOUT) -> None:
        """Write all of ``data`` to the server's stdin, or fail once ``timeout`` passes."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the server stopped reading stdin ({len(view)} bytes left)")
            _, writable, _ = select.select([], [self._stdin_fd], [], min(remaining, 0.5))
            if not writable:
                continue
            try:
                written = os.write(self._stdin_fd, view[:65_536])
            except BlockingIOError:
                continue
            view = view[written:]

    def send(self, message: Any) -> None:
        self.send_raw(encode(message))

    def request(self, message: dict[str, Any], timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        self.send(message)
        return self.response(message["id"], timeout)

    # -- ending -----------------------------------------------------------------------------

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()

    def wait_exit(self, timeout: float = REPLY_TIMEOUT) -> int:
        """The exit status, waiting at most ``timeout`` once the server is serving
        (``start_allowance``); fails (the process is killed later)."""
        try:
            return self.proc.wait(timeout=timeout + self.start_allowance())
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not exit within {timeout}s") from None

    def finish(self, timeout: float = REPLY_TIMEOUT) -> int:
        """Close stdin, wait for the exit and for both pipes to drain; the exit status."""
        self.close_stdin()
        status = self.wait_exit(timeout)
        for thread in self._threads:
            thread.join(timeout)
        return status

    def stop(self) -> None:
        """Teardown: never leaves the process or the pump threads behind."""
        if self.proc.poll() is None:
            self.close_stdin()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        for thread in self._threads:
            thread.join(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()


@pytest.fixture(scope="session")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The subprocess environment: fault-injection settings and a fresh, migrated database
    (SQLite, or PostgreSQL on the run that uses it: tests/databases.py)."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = FAULT_SETTINGS
    env.pop("BEAMMCP_TEST_CATALOG", None)
    env["DATABASE_URL"] = migrated_database_url(tmp_path_factory.mktemp("stdio-db"), env)
    return env


@pytest.fixture
def spawn(server_env: dict[str, str]) -> Iterator[Callable[..., StdioProcess]]:
    """Start servers for one test (optionally with command-line arguments and extra env); all
    are stopped afterwards."""
    started: list[StdioProcess] = []

    def start(*arguments: str, **extra_env: str) -> StdioProcess:
        process = StdioProcess({**server_env, **extra_env}, arguments)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def server(spawn: Callable[..., StdioProcess]) -> StdioProcess:
    """A fresh server for one test."""
    return spawn()


@pytest.fixture(scope="module")
def shared_server(server_env: dict[str, str]) -> Iterator[StdioProcess]:
    """One server for the tests of a module that only need distinct request ids."""
    process = StdioProcess(server_env)
    yield process
    process.stop()
