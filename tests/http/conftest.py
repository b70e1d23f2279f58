"""Fixtures: one uvicorn and one daphne process serving ``sample_project.asgi:application``
for the whole session, each on 127.0.0.1 and a free port, on a fresh migrated SQLite DB,
with ``tests.http_settings`` (faultapp, the test app, a 1-s body deadline).

The ``server`` fixture is parametrized over both; after every test it checks that the
server process is alive and still answers ``server/discover``, so each refusal is also a
test that the server keeps serving afterwards. A test that must mark one server as failing
parametrizes ``server`` indirectly (see ``ON_BOTH_BUT`` in the test modules).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    REDIS,
    SERVER_KINDS,
    ServerProcess,
    Wire,
    discover_works,
    free_port,
    server_env,
    start_server,
)


@pytest.fixture(scope="session")
def http_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcphttp")


@pytest.fixture(scope="session")
def http_env(http_workdir: Path) -> dict[str, str]:
    return server_env(http_workdir)


@pytest.fixture(scope="session")
def mcp_serve_server(http_env: dict[str, str], http_workdir: Path) -> Iterator[ServerProcess]:
    server = start_server("mcp_serve", http_env, http_workdir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def daphne_server(http_env: dict[str, str], http_workdir: Path) -> Iterator[ServerProcess]:
    server = start_server("daphne", http_env, http_workdir)
    yield server
    server.stop()


@pytest.fixture(params=SERVER_KINDS)
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    process: ServerProcess = request.getfixturevalue(f"{request.param}_server")
    assert process.alive(), process.log_tail()
    yield process
    assert process.alive(), f"{process.kind} died:\n{process.log_tail()}"
    assert discover_works(process.port), f"{process.kind} stopped serving:\n{process.log_tail()}"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of its own on a free port, for tests that share state across workers."""
    if REDIS is None:
        pytest.skip("no redis-server binary on this machine")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            REDIS,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with Wire(port, timeout=0.5) as wire:
                    wire.send(b"PING\r\n")
                    if wire.has_data(0.5):
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
