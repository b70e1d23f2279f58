"""The harness's server processes are ready when *they* listen, not when their port answers.

A port picked free here can be taken by another test's server, or another run's, before the
process started on it binds it. Polling the port then found the other server ready, the test
talked to it, and its own process was stopped before it had written a line: a two-worker test
failed on two runs side by side (2026-12-06) with an empty log, every call having been served
by the other run's server. Now readiness is a listening socket held by the process or one
under it, and a process that lost its port to another is started again on a fresh one.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http import mcphttp_support
from tests.http.mcphttp_support import ServerProcess, free_port, listens

pytestmark = pytest.mark.one_leg


def http_server(port: int) -> list[str]:
    return [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]


@pytest.fixture
def decoy() -> Iterator[int]:
    """Another process's listener, as far as a server started by the test is concerned."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"MCPHTTP_RECORD_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}


def test_a_server_whose_free_port_was_taken_is_started_on_another(
    decoy, env, tmp_path, monkeypatch
):
    picks = iter([decoy])
    monkeypatch.setattr(mcphttp_support, "free_port", lambda: next(picks, None) or free_port())
    server = ServerProcess("http.server", env, tmp_path, command=http_server)
    try:
        server.wait_ready()
        assert server.port != decoy
        assert listens(server.proc.pid, server.port)
        assert "Address already in use" in (tmp_path / f"http.server-{decoy}.log").read_text()
    finally:
        server.stop()


def test_a_server_on_a_named_port_that_another_holds_fails_by_name(decoy, env, tmp_path):
    server = ServerProcess("http.server", env, tmp_path, command=http_server, port=decoy)
    try:
        with pytest.raises(AssertionError, match="Address already in use"):
            server.wait_ready()
    finally:
        server.stop()


def test_a_listener_is_found_in_the_process_tree_that_holds_it_only(decoy):
    assert listens(os.getpid(), decoy)
    assert listens(os.getppid(), decoy)  # the process that started this one
    with subprocess.Popen(["sleep", "30"]) as child:
        try:
            assert not listens(child.pid, decoy)
        finally:
            child.kill()
    assert not listens(os.getpid(), free_port())
