"""Fixtures: one uvicorn and one daphne process serving ``sample_project.asgi:application``
for the whole session, each on 127.0.0.1 and a free port, on a fresh migrated SQLite DB,
with ``tests.http_settings`` (faultapp, the test app, a 1-s body deadline).

The ``server`` fixture is parametrized over both; after every test it checks that the
server process is alive and still answers ``server/discover``, so each refusal is also a
test that the server keeps serving afterwards. A test that must mark one server as failing
parametrizes ``server`` indirectly (see ``ON_BOTH_BUT`` in the test modules).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    SERVER_KINDS,
    ServerProcess,
    discover_works,
    redis_server,
    server_env,
    start_server,
)


@pytest.fixture(scope="session")
def http_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcphttp")


@pytest.fixture(scope="session")
def http_env(http_workdir: Path) -> dict[str, str]:
    # The servers under test run as in production, DEBUG off: with it on an internal error
    # names its cause to the client (protocol/faults.py, tested in the core).
    return {**server_env(http_workdir), "DJANGO_DEBUG": "false"}


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
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url
