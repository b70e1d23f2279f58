"""The production database setting of docs/deployment.md, executed as written, in a real
``manage.py mcp_serve`` process against the PostgreSQL ``tests/run.sh`` starts; and the
connections of async host code, which no Django request tidies on the MCP path
(beammcp_django/runtime/async_orm.py).

Needs that PostgreSQL (``BEAMMCP_TEST_POSTGRES_URL``): skipped without it, failed in CI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import environ
import pytest

from tests import databases
from tests.http.mcphttp_support import ServerProcess, message, post, server_env, start_server
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SETTINGS_MODULE = "deployment_settings"
CALLS = 60
CONCURRENCY = 12  # above the host threads of a small machine: calls wait for the pool


def deployment_settings(directory: Path) -> None:
    """A host's ``settings.py``: the sample's, then the page's ``DATABASES`` block."""
    (directory / f"{SETTINGS_MODULE}.py").write_text(
        "from sample_project.settings import *  # noqa: F403\n"
        "from sample_project.settings import env\n\n" + databases.documented_setting()
    )


def documented_databases(url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The block's ``DATABASES``, evaluated with ``DATABASE_URL`` set to ``url``."""
    monkeypatch.setenv("DATABASE_URL", url)
    namespace: dict[str, Any] = {"env": environ.Env()}
    exec(databases.documented_setting(), namespace)
    return namespace["DATABASES"]


@pytest.fixture
def postgres_database() -> str:
    return databases.create_postgres_database(databases.postgres_url())


def run_documented_commands(env: dict[str, str]) -> None:
    """The page's commands as written: ``pip`` and ``python`` are this run's interpreter."""
    for command in databases.documented_commands():
        if command[0] == "pip":
            command = [sys.executable, "-m", *command]
        else:
            assert command[:2] == ["python", "manage.py"], command
            command = [sys.executable, *command[1:]]
        done = subprocess.run(
            command, cwd=REPO_ROOT, env=env, capture_output=True, timeout=300, check=False
        )
        assert done.returncode == 0, (command, done.stderr.decode(errors="replace"))


def serve(tmp_path: Path, database: str, *, documented: bool) -> ServerProcess:
    """``mcp_serve`` on ``database``, once the commands before it (the migration, and with
    ``documented`` the page's commands) have left it."""
    env = server_env(tmp_path, database_url=database)
    if documented:
        deployment_settings(tmp_path)
        env["DJANGO_SETTINGS_MODULE"] = SETTINGS_MODULE
        env["PYTHONPATH"] = str(tmp_path)
        run_documented_commands(env)
    databases.wait_for_no_sessions(database)
    return start_server("mcp_serve", env, tmp_path)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def record(port: int, index: int) -> dict[str, Any]:
    arguments = {"city": "lisbon", "temperature_c": index % 40}
    reply = post(
        port,
        message(index, "tools/call", {"name": "record_observation", "arguments": arguments}),
    )
    assert reply.status == 200, reply.body
    return reply.json()


def read_observations(port: int, index: int) -> dict[str, Any]:
    reply = post(port, message(index, "resources/read", {"uri": "weather://observations/lisbon"}))
    assert reply.status == 200, reply.body
    return reply.json()


def test_the_documented_setting_is_a_valid_pool_of_bounded_size(postgres_database, monkeypatch):
    settings = documented_databases(postgres_database, monkeypatch)["default"]
    assert settings["ENGINE"] == "django.db.backends.postgresql"
    assert settings["CONN_MAX_AGE"] == 0  # Django refuses a pool with persistent connections
    pool = settings["OPTIONS"]["pool"]
    assert 1 <= pool["min_size"] <= pool["max_size"]


def test_the_documented_setting_serves_record_observation_through_its_pool(
    tmp_path: Path, postgres_database: str, running: list[ServerProcess], monkeypatch
):
    pool = documented_databases(postgres_database, monkeypatch)["default"]["OPTIONS"]["pool"]
    server = serve(tmp_path, postgres_database, documented=True)
    running.append(server)
    before = databases.sessions_opened(postgres_database)
    with ThreadPoolExecutor(CONCURRENCY) as clients:
        replies = list(clients.map(lambda index: record(server.port, index), range(CALLS)))
    texts = [reply["result"]["content"][0]["text"] for reply in replies]
    assert texts == [f"Recorded {index % 40} °C for Lisbon." for index in range(CALLS)]
    read = read_observations(server.port, CALLS)
    assert len(json.loads(read["result"]["contents"][0]["text"])["observations"]) == 20
    ((stored,),) = databases.rows(
        postgres_database, "SELECT COUNT(*) FROM demo_observation WHERE city = 'lisbon'"
    )
    assert stored == CALLS
    assert databases.connected_sessions(postgres_database) <= pool["max_size"]
    server.stop()
    databases.wait_for_no_sessions(postgres_database)
    # Every call and the read came through the pool: a connection per call would be 61.
    assert databases.sessions_opened(postgres_database) - before <= pool["max_size"]


@pytest.mark.parametrize("documented", [False, True], ids=["conn-max-age-0", "documented"])
def test_async_host_code_closes_its_connection_and_survives_postgresql_dropping_them(
    tmp_path: Path, postgres_database: str, running: list[ServerProcess], documented: bool
):
    # weather://observations/{city} reads with the async ORM: asgiref's sync thread's
    # connection. Without a tidy after the call it stayed open at CONN_MAX_AGE 0, and once
    # PostgreSQL dropped it every later read failed until the worker restarted.
    server = serve(tmp_path, postgres_database, documented=documented)
    running.append(server)
    assert "result" in record(server.port, 1)
    assert "result" in read_observations(server.port, 2)
    if not documented:
        assert databases.connected_sessions(postgres_database) == 0  # nothing kept past the calls
    name = postgres_database.rsplit("/", 1)[1]
    databases.rows(
        databases.postgres_url(),
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'",
    )
    for index in range(3, 6):
        read = read_observations(server.port, index)
        assert "result" in read, (read, server.log_tail())
        observations = json.loads(read["result"]["contents"][0]["text"])["observations"]
        assert [row["temperature_c"] for row in observations][-1] == 1  # the first, oldest
        assert "result" in record(server.port, 10 + index)
    assert server.alive()
