"""docs/quickstart.md, executed as written: a page that drifts from the package fails here.

The page is walked top to bottom in an empty temporary directory, as a reader would: a fresh
venv, the package installed non-editable, ``django-admin startproject``, the documented files
written, every command run, the server started as documented and called with curl, then with
the official SDK client (``mcp``, from the test suite's own environment) over HTTP and over
stdio, the stdio server started from the page's client configuration. The page's HTML
comment says what each kind of fenced block means; any other kind fails the walk.

The reader's directory sits beside a checkout of the repository, as the page asks: the
walk puts a copy of this checkout's sources (what a clone holds that the package's build
reads) at ``../beammcp-django``, and the page's install line, ``pip install
../beammcp-django``, runs as written: pip builds the package from that copy and resolves its
dependencies from the package index, as it would for the reader.

What the walk changes from what a reader types, and nothing else:

- the test suite's own venv is taken off ``PATH``, so ``python3`` is the one a fresh
  machine's ``PATH`` gives, whichever leg runs the walk (it runs on one: ``one_leg``);
- port 8000 may be taken on a shared machine: the server command gets ``--port N`` (a free
  port) appended, and ``127.0.0.1:8000`` in later commands becomes ``127.0.0.1:N``;
- ``/path/to/quickstart`` in the client configuration is the temporary directory.

Slow: a venv and a pip install (pip's cache makes it quick).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.http.mcphttp_support import ServerProcess, free_port
from tests.support import MODERN, REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

PAGE = REPO_ROOT / "docs" / "quickstart.md"
# What the package's build reads of a checkout: the package and the files its metadata reads.
SOURCES = ("beammcp_django", "setup.cfg", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")
INSTALL_LINE = "pip install ../beammcp-django"
# Another page's install of an extra, from the same checkout, in backquotes.
EXTRA_LINE = re.compile(r'`(pip install "\.\./beammcp-django\[\w+\]")`')
DOCUMENTED_PORT = "127.0.0.1:8000"
CONFIG_ROOT = "/path/to/quickstart"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
FILE_HEADER = re.compile(r"# (?P<path>[\w./-]+)(?P<append> \(add at the end\))?")
KINDS = ("sh", "sh server", "text output", "json output", "python", "json client-config")
COMMAND_TIMEOUT = 300  # pip install on a cold cache
CALL_TIMEOUT = 60


@dataclass(frozen=True)
class Block:
    kind: str
    body: str
    line: int


def blocks(text: str) -> list[Block]:
    """The page's fenced blocks in order (its HTML comments, which explain them, left out)."""
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    found = [
        Block(" ".join(m["info"].split()), m["body"], text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]
    unknown = [(block.line, block.kind) for block in found if block.kind not in KINDS]
    assert not unknown, f"fenced blocks this test cannot execute (line, info): {unknown}"
    return found


@dataclass
class Shell:
    """One terminal: the directory and the environment carry over from command to command."""

    cwd: Path
    env: dict[str, str]
    state: Path
    results: list[subprocess.CompletedProcess[str]] = field(default_factory=list)

    def script(self, body: str) -> list[str]:
        # The trailer records where the commands left the terminal, for the next block.
        trailer = 'pwd > "$1/cwd"; env -0 > "$1/env"'
        return [
            "bash",
            "--noprofile",
            "--norc",
            "-c",
            f"{body}\n{trailer}",
            "bash",
            str(self.state),
        ]

    def run(self, body: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.script(f"set -eo pipefail\n{body}"),
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, f"{body}\nexited {done.returncode}:\n{done.stderr[-3000:]}"
        self.cwd = Path((self.state / "cwd").read_text().strip())
        entries = (self.state / "env").read_bytes().split(b"\0")
        self.env = dict(e.decode().split("=", 1) for e in entries if b"=" in e)
        self.results.append(done)
        return done

    def start(self, command: str, log_path: Path) -> subprocess.Popen[bytes]:
        """``command`` left running in the background, its output in ``log_path``."""
        with log_path.open("wb") as log:
            return subprocess.Popen(
                ["bash", "--noprofile", "--norc", "-c", command],
                cwd=self.cwd,
                env={**self.env, "PYTHONUNBUFFERED": "1"},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )


class DocumentedServer(ServerProcess):
    """The page's long-running command, in the shell's directory and environment, with its
    output in a log file; ``ServerProcess`` waits for the port and stops it."""

    def __init__(self, command: str, shell: Shell, log_dir: Path, port: int) -> None:
        self.kind = command.split()[-1]
        self.port = port
        self.log_path = log_dir / "server.log"
        self.records = log_dir
        self.proc = shell.start(f"exec {command} --port {port}", self.log_path)


def checkout_beside(directory: Path) -> None:
    """A copy of this checkout's sources at ``directory / "beammcp-django"``: the checkout the
    page asks for beside the reader's directory (a copy, so that pip's build leaves nothing in
    the repository)."""
    checkout = directory / "beammcp-django"
    checkout.mkdir()
    for name in SOURCES:
        origin = REPO_ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif origin.exists():
            shutil.copy2(origin, checkout / name)


def reader_environment() -> dict[str, str]:
    """A terminal without the test suite's venv or settings: its ``python3`` is the machine's."""
    ours = str(Path(sys.executable).parent)
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p != ours]
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"VIRTUAL_ENV", "PYTHONPATH", "DJANGO_SETTINGS_MODULE", "PYTHONHOME"}
    }
    env["PATH"] = os.pathsep.join(path)
    return env


def observed_calls(database: Path, tool: str) -> int:
    """The calls of ``tool`` the server's connectome flushed to the project's database."""
    with sqlite3.connect(database) as connection:
        (count,) = connection.execute(
            "SELECT COALESCE(SUM(count), 0) FROM beammcp_django_observededge WHERE target LIKE ?",
            (f"%/tool/{tool}",),
        ).fetchone()
    return count


def run(scenario: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(CALL_TIMEOUT):
            return await scenario()

    return anyio.run(bounded)


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The page walked up to its end, with the documented server still running."""
    assert shutil.which("curl"), "the page's first call is curl (Debian: apt-get install curl)"
    scratch = tmp_path_factory.mktemp("quickstart")
    checkout_beside(scratch)
    home = scratch / "quickstart"  # the reader's empty directory, beside the checkout
    home.mkdir()
    state = scratch / "state"
    state.mkdir()
    shell = Shell(home, reader_environment(), state)
    page = blocks(PAGE.read_text(encoding="utf-8"))
    install_lines = [
        line
        for block in page
        if block.kind == "sh"
        for line in block.body.splitlines()
        if line.startswith("pip install")
    ]
    assert install_lines == [INSTALL_LINE]
    port = free_port()
    server: DocumentedServer | None = None
    config: dict[str, Any] | None = None
    files: list[Path] = []
    previous: Block | None = None
    try:
        for block in page:
            where = f"docs/quickstart.md line {block.line}"
            if block.kind == "sh":
                shell.run(block.body.replace(DOCUMENTED_PORT, f"127.0.0.1:{port}"))
            elif block.kind == "sh server":
                (command,) = block.body.strip().splitlines()
                assert server is None, f"{where}: a second server"
                server = DocumentedServer(command, shell, scratch, port)
                server.wait_ready()
            elif block.kind.endswith(" output"):
                assert previous is not None and previous.kind == "sh", f"{where}: output of what?"
                done = shell.results[-1]
                assert done.stderr == "", f"{where}: the command above wrote to stderr"
                if block.kind == "json output":
                    assert json.loads(done.stdout) == json.loads(block.body), where
                else:
                    assert done.stdout == block.body, where
            elif block.kind == "python":
                header, _, _ = block.body.partition("\n")
                named = FILE_HEADER.fullmatch(header)
                assert named, f"{where}: a python block starts with '# <path>'"
                target = shell.cwd / named["path"]
                with target.open("a" if named["append"] else "w", encoding="utf-8") as out:
                    out.write(("\n" if named["append"] else "") + block.body)
                files.append(target)
            else:  # json client-config
                config = json.loads(block.body.replace(CONFIG_ROOT, str(home)))
            previous = block
        assert server is not None, "the page never starts the server"
        assert config is not None, "the page gives no client configuration"
        yield {
            "home": home,
            "project": shell.cwd,
            "server": server,
            "config": config,
            "files": files,
            "shell": shell,
            "scratch": scratch,
        }
    finally:
        if server is not None:
            server.stop()


def test_the_page_writes_the_files_it_names(walked):
    project = walked["project"]
    assert {path.relative_to(project).as_posix() for path in walked["files"]} == {
        "notes/models.py",
        "notes/mcp.py",
        "notes/tests.py",
        "mysite/settings.py",
        "mysite/urls.py",
        "mysite/asgi.py",
    }


def test_the_documented_server_answers_the_sdk_client_over_http(walked):
    server = walked["server"]

    async def scenario() -> None:
        async with Client(server.url, mode="auto") as client:
            assert client.protocol_version == MODERN
            tools = await client.list_tools()
            assert sorted(tool.name for tool in tools.tools) == ["add_note", "list_notes"]
            saved = await client.call_tool("add_note", {"text": "Call the plumber"})
            assert not saved.is_error
            assert texts(saved) == ["Saved note 2."]
            listed = await client.call_tool("list_notes", {})
            assert texts(listed) == ["2: Call the plumber\n1: Buy milk"]
            # "a call with an empty text, or a limit of 500, is answered with an error naming
            # the rule, and this code never runs"
            empty = await client.call_tool("add_note", {"text": ""})
            assert empty.is_error
            assert "arguments/text" in texts(empty)[0]
            too_many = await client.call_tool("list_notes", {"limit": 500})
            assert too_many.is_error
            assert "arguments/limit" in texts(too_many)[0]
            listed = await client.call_tool("list_notes", {"limit": 1})
            assert texts(listed) == ["2: Call the plumber"]
            listed = await client.call_tool("list_notes", {})
            assert texts(listed) == ["2: Call the plumber\n1: Buy milk"]  # nothing saved

    run(scenario)


def test_the_client_configuration_starts_the_stdio_server_for_the_sdk_client(walked, tmp_path):
    (entry,) = walked["config"]["mcpServers"].values()
    errors = tmp_path / "stdio-stderr.log"

    async def scenario() -> list[str]:
        # A client starts the server from a directory of its own: not the project's.
        parameters = StdioServerParameters(
            command=entry["command"], args=entry["args"], cwd=str(tmp_path)
        )
        with errors.open("w") as errlog:
            async with (
                stdio_client(parameters, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                discovered = await session.discover()
                assert MODERN in discovered.supported_versions
                listed = await session.call_tool("list_notes", {})
                return texts(listed)

    (listed,) = run(scenario)
    assert "1: Buy milk" in listed.splitlines()  # the note saved over HTTP: one database
    assert errors.read_text() == ""


def test_runserver_in_the_new_project_says_the_endpoint_needs_mcp_serve(walked):
    shell: Shell = walked["shell"]
    port = free_port()
    log = walked["scratch"] / "runserver.log"
    process = shell.start(f"exec python manage.py runserver --noreload 127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 30
        while "Serve with `manage.py mcp_serve`" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert "the MCP endpoint answers 501" in log.read_text()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_every_page_s_install_of_an_extra_runs_as_written_in_the_reader_s_directory(walked):
    """The extras other pages name (tasks, jwt, redis) install from the checkout the same way,
    each line as the page writes it, in the quickstart's venv."""
    lines = sorted(
        {
            line
            for page in sorted((REPO_ROOT / "docs").glob("*.md"))
            for line in EXTRA_LINE.findall(page.read_text(encoding="utf-8"))
        }
    )
    assert len(lines) >= 3, lines
    shell: Shell = walked["shell"]
    reader = Shell(walked["home"], shell.env, walked["scratch"] / "state")
    for line in lines:
        reader.run(line)
    # Each extra's distribution, by its import name (pip's spelling of names varies).
    reader.run("python -c 'import django_tasks, jwt, channels_redis'")


def test_the_server_flushes_its_observed_calls_and_logs_nothing_amiss(walked):
    """Runs last in this module: it stops the documented server."""
    server: DocumentedServer = walked["server"]
    database = walked["project"] / "db.sqlite3"
    deadline = time.monotonic() + 20  # CONNECTOME_FLUSH_SECONDS is 5 by default
    while observed_calls(database, "add_note") < 2:  # curl's call and the SDK's
        assert server.alive(), server.log_tail()
        assert time.monotonic() < deadline, f"no flush wrote the calls:\n{server.log_tail()}"
        time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)  # uvicorn's graceful stop, the whole of it logged
    server.proc.wait(timeout=15)
    lines = server.log_path.read_text().splitlines()
    assert lines[0].startswith("beammcp-django: mysite.asgi:application on http://127.0.0.1:")
    assert any(line.startswith("  heads: at most 16384 bytes") for line in lines)
    # Past the banner, uvicorn's own INFO lines and nothing else: no warning, no traceback,
    # no failed flush.
    unexpected = [
        line for line in lines if not line.startswith(("beammcp-django: ", "  ", "INFO:"))
    ]
    assert unexpected == [], "\n".join(lines)
    assert any("Application shutdown complete" in line for line in lines)
