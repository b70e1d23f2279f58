"""The README's first command, run as written on a copy of the repository's tracked files
(a fresh machine's checkout: no venv, no database), then probed as a user would.

One substitution: ``manage.py mcp_serve`` gets ``--port`` with a free port, since 8000 may be
taken on a shared machine. pip's cache makes the venv quick; nothing else is installed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    ServerProcess,
    exchange,
    free_port,
    http_request,
    message,
)
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

INSTALL_TIMEOUT = 600


def first_command() -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Two commands", 1)[1]
    return re.search(r"```sh\n(.+?)\n```", section, re.S).group(1).strip()


def tracked_copy(destination: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO_ROOT / name.decode()
        if source.is_file():
            target = destination / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def test_the_first_command_ends_in_the_hardened_server():
    assert first_command().endswith(".venv/bin/python manage.py mcp_serve")


def test_the_first_command_on_a_fresh_checkout_serves_mcp_and_the_admin(tmp_path: Path):
    checkout = tmp_path / "checkout"
    tracked_copy(checkout)
    port = free_port()
    command = first_command() + f" --port {port}"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "BEAMMCP_", "DATABASE_URL", "VIRTUAL_ENV"))
    }
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=checkout,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = ServerProcess.attach("readme", process, port, log)
    try:
        server.wait_ready(timeout=INSTALL_TIMEOUT)
        discover = exchange(port, http_request(message("readme-1", "server/discover")))
        assert discover.status == 200, discover.body
        server_info = discover.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert server_info["name"] == "beammcp-sample-weather"
        login = exchange(port, b"GET /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert login.status == 200
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    output_text = log.read_text(errors="replace")
    assert "httptools with bounded heads, 1 worker" in output_text
    assert "Traceback" not in output_text, output_text[-3000:]
    assert (checkout / "db.sqlite3").exists()
