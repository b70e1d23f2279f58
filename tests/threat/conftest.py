"""Fixtures: one uvicorn and one daphne process, and ``manage.py mcp_stdio`` processes, all
serving the sample project with ``tests.threat.threat_settings`` (``tests.http_settings``
with host calls bounded to ``CALL_TIMEOUT`` seconds) on a fresh migrated SQLite DB.

The HTTP servers live for the session: the fuzz and the fault tests share them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import ServerProcess, server_env, start_server
from tests.stdio.conftest import StdioProcess

THREAT_SETTINGS = "tests.threat.threat_settings"


@pytest.fixture(scope="session")
def threat_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("threat")


@pytest.fixture(scope="session")
def threat_env(threat_workdir: Path) -> dict[str, str]:
    env = server_env(threat_workdir)
    env["DJANGO_SETTINGS_MODULE"] = THREAT_SETTINGS
    return env


@pytest.fixture(scope="session")
def threat_mcp_serve(threat_env: dict[str, str], threat_workdir: Path) -> Iterator[ServerProcess]:
    server = start_server("mcp_serve", threat_env, threat_workdir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def threat_daphne(threat_env: dict[str, str], threat_workdir: Path) -> Iterator[ServerProcess]:
    server = start_server("daphne", threat_env, threat_workdir)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stdio_server(threat_env: dict[str, str]) -> Iterator[StdioProcess]:
    """One ``manage.py mcp_stdio`` process for a module's tests (distinct request ids)."""
    process = StdioProcess(threat_env)
    yield process
    process.stop()
