"""Benchmark: our Streamable HTTP endpoint against the official MCP Python SDK, side by side.

What it measures (issue 6)
    Every server runs under the same uvicorn command line, with the main command's parser and
    limits (``--workers 1 --http beammcp_django.serving.http11:BoundedHttpToolsProtocol --loop
    uvloop --backlog 2048 --limit-concurrency 2048 --no-access-log``: what ``manage.py
    mcp_serve`` runs, uvloop installed) on 127.0.0.1, and wrk (Debian's package) drives each
    with the same POST: the same body, the same headers. Rounds are interleaved (ours, SDK,
    ours, SDK, ...; the order reverses every other round) and each figure is the median over
    rounds.

    Servers: ours (``sample_project.asgi:application`` with ``bench/bench_settings.py``: DEBUG
    off, ``allow_all``, a fresh migrated SQLite file, ``CONNECTOME_OBSERVE`` and
    ``FREEZE_HEAP_AT_STARTUP`` on as the sample ships them); the SDK peer
    (``bench/sdk_peer.py``: ``mcp``'s stateless JSON-response app with the same tools, its
    startup heap frozen too); the bare ASGI ceiling (``bench/bare_asgi.py``); ours under
    daphne; ours with 2 and 4 uvicorn workers; ours with ``CONNECTOME_OBSERVE`` off; ours
    with ``FREEZE_HEAP_AT_STARTUP`` off.

    Requests: 2026-07-28 stateless POSTs, as a client sends them (``MCP-Protocol-Version``,
    ``Mcp-Method``, ``Mcp-Name``, and ``_meta`` with the protocol version and client
    capabilities in params). The SDK serves the same revision on its single-exchange path;
    the ``sdk-legacy`` group also drives its 2025-11-25 stateless path. Tools: ``echo`` (a
    sync tool: a worker thread in both servers) and ``echo_async`` (a coroutine), one string
    argument ``"hello"``; ``tools/list`` lists the sample catalog's four tools.

    Per load: requests/s and latency percentiles from wrk (its Lua ``done`` hook prints them
    as JSON); the server's CPU per request, from ``/proc/<pid>/stat`` utime+stime of the
    server and all its processes, before and after, divided by the requests served; the rest
    of the machine's load during the run (all busy CPU less the server's and wrk's), since the
    machine is shared. Before its first load and after its last one, every server answers
    one request that the driver checks (the tool's text, the catalog's tool names); wrk's
    non-2xx and socket errors are reported and must be 0, or the run exits 1.

    Ratios (ours / SDK, from medians in the same run) against the issue's targets: tools/call
    sync echo c=32 at least 3x, async echo at least 2x, tools/list at least 2x, p99 at c=1 no
    worse than the SDK's (ratio at most 1), and our CPU per request under 90 µs, also read as
    at most 4.5x the bare ceiling's in the same run (the issue's 90 µs over its 20 µs), a
    form that survives a busy machine.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``)
    .venv/bin/python bench/http.py --quick          # about 1.5 minutes: the issue's ratios
    .venv/bin/python bench/http.py                  # 5 rounds of 10 s, every group: ~13 min
    .venv/bin/python bench/http.py --groups call-sync,list --rounds 3 --seconds 5
    .venv/bin/python bench/http.py --profile 20     # py-spy summaries into bench/profiles/

It exits 0 when every load was served without errors (a missed target is a finding, not a
failure) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "bench"
PROFILES_DIR = BENCH_DIR / "profiles"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ECHO_TEXT = "hello"
CATALOG_TOOLS = {"echo", "echo_async", "get_forecast", "record_observation"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 60.0
# Extra seconds wrk may take past its -d before it is killed (it never should).
WRK_GRACE = 20.0
# The main command's parser (manage.py mcp_serve: httptools with the package's bounds on
# request heads) and its connection limits, for every server under uvicorn; the "parsers"
# group prices the bounded parser against uvicorn's own two.
BOUNDED_HTTP = "beammcp_django.serving.http11:BoundedHttpToolsProtocol"
UVICORN_FLAGS = (
    "--loop",
    "uvloop",
    "--backlog",
    "2048",
    "--limit-concurrency",
    "2048",
    "--no-access-log",
)


# -- what is sent and what must come back ----------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    """One POST as a client sends it, and the check its answer must pass."""

    method: str
    tool: str | None = None
    version: str = MODERN

    def message(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.tool is not None:
            params = {"name": self.tool, "arguments": {"text": ECHO_TEXT}}
        if self.version == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        return {"jsonrpc": "2.0", "id": 1, "method": self.method, "params": params}

    def body(self) -> bytes:
        return json.dumps(self.message(), separators=(",", ":")).encode()

    def headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": self.version,
        }
        if self.version == MODERN:
            headers["Mcp-Method"] = self.method
            if self.tool is not None:
                headers["Mcp-Name"] = self.tool
        return headers

    def problem(self, status: int, body: bytes) -> str | None:
        """Why this answer is wrong, or None when it is the expected one."""
        if status != 200:
            return f"status {status}: {body[:300]!r}"
        try:
            result = json.loads(body)["result"]
        except (ValueError, KeyError, TypeError):
            return f"not a JSON-RPC result: {body[:300]!r}"
        if self.method == "tools/list":
            names = {tool.get("name") for tool in result.get("tools", [])}
            return None if names == CATALOG_TOOLS else f"tools listed: {sorted(map(str, names))}"
        content = result.get("content") or [{}]
        if result.get("isError") or content[0].get("text") != ECHO_TEXT:
            return f"not the echo: {body[:300]!r}"
        return None


@dataclass(frozen=True)
class FixedAnswer(Exchange):
    """The bare ASGI ceiling's answer: 200 and its fixed 150 bytes, whatever was sent."""

    def problem(self, status: int, body: bytes) -> str | None:
        return None if status == 200 and len(body) == 150 else f"status {status}, {len(body)} B"


CALL_SYNC = Exchange("tools/call", "echo")
CALL_ASYNC = Exchange("tools/call", "echo_async")
LIST = Exchange("tools/list")
CALL_SYNC_LEGACY = Exchange("tools/call", "echo", version=LEGACY)
ANY_POST = FixedAnswer("tools/call", "echo")


# -- servers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server; every uvicorn gets the same flags."""

    key: str
    label: str
    app: str
    runner: str = "uvicorn"
    workers: int = 1
    environment: tuple[tuple[str, str], ...] = ()
    http: str = BOUNDED_HTTP

    def command(self, port: int) -> list[str]:
        if self.runner == "daphne":
            return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), self.app]
        return [
            sys.executable,
            "-m",
            "uvicorn",
            self.app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(self.workers),
            "--http",
            self.http,
            *UVICORN_FLAGS,
        ]


OURS_APP = "sample_project.asgi:application"
SERVERS = {
    spec.key: spec
    for spec in (
        ServerSpec("ours", "ours (uvicorn, 1 worker)", OURS_APP),
        ServerSpec("sdk", "SDK mcp 2.3.0 (uvicorn, 1 worker)", "bench.sdk_peer:application"),
        ServerSpec("bare", "bare ASGI (uvicorn, 1 worker)", "bench.bare_asgi:application"),
        ServerSpec("daphne", "ours (daphne)", OURS_APP, runner="daphne"),
        ServerSpec(
            "ours-httptools", "ours (uvicorn's httptools, unbounded)", OURS_APP, http="httptools"
        ),
        ServerSpec("ours-h11", "ours (uvicorn's h11)", OURS_APP, http="h11"),
        ServerSpec("ours-w2", "ours (uvicorn, 2 workers)", OURS_APP, workers=2),
        ServerSpec("ours-w4", "ours (uvicorn, 4 workers)", OURS_APP, workers=4),
        ServerSpec(
            "ours-nofreeze",
            "ours, FREEZE_HEAP_AT_STARTUP off",
            OURS_APP,
            environment=(("BENCH_FREEZE", "0"),),
        ),
        ServerSpec(
            "ours-noobs",
            "ours, CONNECTOME_OBSERVE off",
            OURS_APP,
            environment=(("BENCH_OBSERVE", "0"),),
        ),
    )
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare_environment(directory: Path) -> dict[str, str]:
    """The servers' environment: bench settings on a fresh migrated SQLite database."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("BEAMMCP_", "DJANGO_"))
    }
    env.update(
        {
            # The repository root, where ``bench`` is a namespace package (never put bench/
            # itself on the path: this file's name would shadow the standard library's http).
            "PYTHONPATH": str(REPO_ROOT),
            "DJANGO_SETTINGS_MODULE": "bench.bench_settings",
            "DATABASE_URL": f"sqlite:///{directory / 'bench.sqlite3'}",
        }
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        timeout=180,
    )
    return env


class Server:
    """One running server, in a process group of its own so ``stop`` ends all its workers."""

    def __init__(self, spec: ServerSpec, env: dict[str, str], log_dir: Path) -> None:
        self.spec = spec
        self.port = free_port()
        self.log_path = log_dir / f"{spec.key}.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                spec.command(self.port),
                cwd=REPO_ROOT,
                env={**env, **dict(spec.environment)},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.spec.label} exited:\n{self.log_tail()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5),
            ):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.spec.label} did not listen:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_tail(self) -> str:
        return self.log_path.read_bytes()[-3000:].decode(errors="replace")

    def cpu_seconds(self) -> float:
        """utime + stime of the server and every process under it (uvicorn's workers)."""
        return process_tree_ticks(self.process.pid) / CLOCK_TICKS

    def check(self, exchange: Exchange) -> None:
        """One request by hand; raises when the answer is not the expected one."""
        status, body = post_once(self.port, exchange)
        problem = exchange.problem(status, body)
        if problem is not None:
            raise RuntimeError(f"{self.spec.label} answered {exchange.method} wrongly: {problem}")

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def post_once(port: int, exchange: Exchange) -> tuple[int, bytes]:
    """One POST on a fresh connection, read to EOF: the status and the body.

    Plain sockets, not ``http.client``: this file is named ``http.py``, and run as a script
    its folder comes first on ``sys.path``, where it would shadow the standard library's
    ``http`` package for anything imported here.
    """
    body = exchange.body()
    head = "".join(f"{name}: {value}\r\n" for name, value in exchange.headers().items())
    request = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + body
    received = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        while chunk := connection.recv(65_536):
            received += chunk
    head_bytes, _, answer = bytes(received).partition(b"\r\n\r\n")
    status_line = head_bytes.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        return 0, bytes(received[:300])
    return int(status_line[1]), answer


def process_tree_ticks(root: int) -> int:
    """Clock ticks of CPU used by ``root`` and its descendants (from /proc/<pid>/stat)."""
    parent_of: dict[int, int] = {}
    ticks_of: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        # After the command name: state, ppid (field 4), ..., utime (14), stime (15).
        parent_of[int(entry.name)] = int(fields[1])
        ticks_of[int(entry.name)] = int(fields[11]) + int(fields[12])
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += ticks_of.get(pid, 0)
        pending.extend(child for child, parent in parent_of.items() if parent == pid)
    return total


def machine_busy_seconds() -> float:
    """CPU-seconds the whole machine spent busy (all cores), from /proc/stat."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CLOCK_TICKS


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# -- loads and wrk ------------------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One wrk run against one server."""

    key: str
    server: str
    exchange: Exchange
    connections: int

    @property
    def threads(self) -> int:
        return min(2, self.connections)

    @property
    def label(self) -> str:
        what = self.exchange.method
        if self.exchange.tool:
            what += f" {self.exchange.tool}"
        if self.exchange.version != MODERN:
            what += f" @{self.exchange.version}"
        return f"{SERVERS[self.server].label}: {what}, c={self.connections}"


@dataclass
class Sample:
    """What one wrk run measured."""

    requests: int
    seconds: float
    errors: int
    non_2xx: int
    p50_us: float
    p90_us: float
    p99_us: float
    cpu_us_per_request: float
    other_load_cores: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = {body}
{headers}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT {{\\"requests\\":%d,\\"duration_us\\":%d,\\"non_2xx\\":%d,"
    .. "\\"errors\\":%d,\\"p50\\":%d,\\"p90\\":%d,\\"p99\\":%d}}\\n",
    summary.requests, summary.duration, e.status,
    e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
"""


def lua_string(text: str) -> str:
    """``text`` as a Lua long-bracket literal whose closing bracket does not occur in it."""
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def wrk_script(load: Load, directory: Path) -> Path:
    """The Lua file that makes wrk send ``load``'s POST and print its figures as JSON."""
    exchange = load.exchange
    path = directory / f"wrk-{load.key}.lua"
    headers = "\n".join(
        f"wrk.headers[ {lua_string(name)} ] = {lua_string(value)}"
        for name, value in exchange.headers().items()
    )
    path.write_text(WRK_SCRIPT.format(body=lua_string(exchange.body().decode()), headers=headers))
    return path


def run_wrk(load: Load, server: Server, seconds: float, script: Path) -> Sample:
    """One bounded wrk run on loopback, with the server's CPU measured around it."""
    command = [
        "wrk",
        f"-t{load.threads}",
        f"-c{load.connections}",
        f"-d{seconds:g}s",
        "--timeout",
        "5s",
        "-s",
        str(script),
        f"http://127.0.0.1:{server.port}/mcp",
    ]
    server_before = server.cpu_seconds()
    machine_before = machine_busy_seconds()
    wrk_before = children_cpu_seconds()
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + WRK_GRACE, check=False
    )
    server_cpu = server.cpu_seconds() - server_before
    wrk_cpu = children_cpu_seconds() - wrk_before
    machine = machine_busy_seconds() - machine_before
    line = next(
        (text for text in finished.stdout.splitlines() if text.startswith("BENCH_RESULT ")), None
    )
    if finished.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr[-2000:]}")
    result = json.loads(line.removeprefix("BENCH_RESULT "))
    elapsed = result["duration_us"] / 1e6
    requests = max(result["requests"], 1)
    return Sample(
        requests=result["requests"],
        seconds=elapsed,
        errors=result["errors"],
        non_2xx=result["non_2xx"],
        p50_us=result["p50"],
        p90_us=result["p90"],
        p99_us=result["p99"],
        cpu_us_per_request=server_cpu / requests * 1e6,
        other_load_cores=max(0.0, (machine - server_cpu - wrk_cpu) / elapsed),
    )


# -- what is compared -----------------------------------------------------------------------

LOADS = {
    load.key: load
    for load in (
        Load("ours.echo.c32", "ours", CALL_SYNC, 32),
        Load("sdk.echo.c32", "sdk", CALL_SYNC, 32),
        Load("ours.echo_async.c32", "ours", CALL_ASYNC, 32),
        Load("sdk.echo_async.c32", "sdk", CALL_ASYNC, 32),
        Load("ours.list.c32", "ours", LIST, 32),
        Load("sdk.list.c32", "sdk", LIST, 32),
        Load("ours.echo.c1", "ours", CALL_SYNC, 1),
        Load("sdk.echo.c1", "sdk", CALL_SYNC, 1),
        Load("sdk.echo-2025.c32", "sdk", CALL_SYNC_LEGACY, 32),
        Load("bare.c32", "bare", ANY_POST, 32),
        Load("daphne.echo.c32", "daphne", CALL_SYNC, 32),
        Load("ours-w2.echo.c32", "ours-w2", CALL_SYNC, 32),
        Load("ours-w4.echo.c32", "ours-w4", CALL_SYNC, 32),
        Load("ours-noobs.echo.c32", "ours-noobs", CALL_SYNC, 32),
        Load("ours-nofreeze.echo.c32", "ours-nofreeze", CALL_SYNC, 32),
        Load("ours-httptools.echo.c32", "ours-httptools", CALL_SYNC, 32),
        Load("ours-h11.echo.c32", "ours-h11", CALL_SYNC, 32),
    )
}


@dataclass(frozen=True)
class Comparison:
    """A ratio of medians, ``numerator / denominator``, and the target it is held to."""

    title: str
    numerator: str
    denominator: str
    metric: str  # "rps", "p99_us" or "cpu_us_per_request"
    at_least: float | None = None
    at_most: float | None = None

    def verdict(self, ratio: float) -> str:
        if self.at_least is not None:
            return "meets" if ratio >= self.at_least else "MISSES"
        if self.at_most is not None:
            return "meets" if ratio <= self.at_most else "MISSES"
        return "info"

    @property
    def target(self) -> str:
        if self.at_least is not None:
            return f">= {self.at_least:g}x"
        if self.at_most is not None:
            return f"<= {self.at_most:g}x"
        return ""


@dataclass(frozen=True)
class Group:
    loads: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    quick: bool


OURS_SYNC = "ours.echo.c32"
GROUPS = {
    "call-sync": Group(
        (OURS_SYNC, "sdk.echo.c32"),
        (Comparison("tools/call echo (sync) c=32, req/s", OURS_SYNC, "sdk.echo.c32", "rps", 3),),
        quick=True,
    ),
    "call-async": Group(
        ("ours.echo_async.c32", "sdk.echo_async.c32"),
        (
            Comparison(
                "tools/call echo_async c=32, req/s",
                "ours.echo_async.c32",
                "sdk.echo_async.c32",
                "rps",
                2,
            ),
        ),
        quick=True,
    ),
    "list": Group(
        ("ours.list.c32", "sdk.list.c32"),
        (Comparison("tools/list c=32, req/s", "ours.list.c32", "sdk.list.c32", "rps", 2),),
        quick=True,
    ),
    "c1": Group(
        ("ours.echo.c1", "sdk.echo.c1"),
        (
            Comparison(
                "tools/call echo c=1, p99 latency",
                "ours.echo.c1",
                "sdk.echo.c1",
                "p99_us",
                at_most=1,
            ),
        ),
        quick=True,
    ),
    "bare": Group(
        ("bare.c32", OURS_SYNC),
        (
            Comparison("ours echo c=32 / bare ASGI ceiling, req/s", OURS_SYNC, "bare.c32", "rps"),
            # The issue measured the ceiling at 20 µs and asks under 90 µs for ours: 4.5x the
            # ceiling, a form of the CPU target that survives a busy machine.
            Comparison(
                "ours echo c=32 / bare ASGI ceiling, CPU per request",
                OURS_SYNC,
                "bare.c32",
                "cpu_us_per_request",
                at_most=4.5,
            ),
        ),
        quick=True,
    ),
    "daphne": Group(
        ("daphne.echo.c32", OURS_SYNC),
        (
            Comparison(
                "ours: daphne / uvicorn, echo c=32 req/s", "daphne.echo.c32", OURS_SYNC, "rps"
            ),
        ),
        quick=True,
    ),
    "parsers": Group(
        (OURS_SYNC, "ours-httptools.echo.c32", "ours-h11.echo.c32"),
        (
            Comparison(
                "bounded httptools / uvicorn's httptools, echo c=32 req/s",
                OURS_SYNC,
                "ours-httptools.echo.c32",
                "rps",
            ),
            Comparison(
                "bounded httptools / uvicorn's h11, echo c=32 req/s",
                OURS_SYNC,
                "ours-h11.echo.c32",
                "rps",
            ),
        ),
        quick=False,
    ),
    "sdk-legacy": Group(
        ("sdk.echo-2025.c32", OURS_SYNC),
        (
            Comparison(
                "tools/call echo c=32 vs the SDK's 2025-11-25 stateless path, req/s",
                OURS_SYNC,
                "sdk.echo-2025.c32",
                "rps",
                3,
            ),
        ),
        quick=True,
    ),
    "workers": Group(
        (OURS_SYNC, "ours-w2.echo.c32", "ours-w4.echo.c32"),
        (
            Comparison(
                "ours 2 workers / 1 worker, echo c=32 req/s", "ours-w2.echo.c32", OURS_SYNC, "rps"
            ),
            Comparison(
                "ours 4 workers / 1 worker, echo c=32 req/s", "ours-w4.echo.c32", OURS_SYNC, "rps"
            ),
        ),
        quick=False,
    ),
    "freeze": Group(
        (OURS_SYNC, "ours-nofreeze.echo.c32"),
        (
            Comparison(
                "freeze on / off, echo c=32 req/s", OURS_SYNC, "ours-nofreeze.echo.c32", "rps"
            ),
            Comparison(
                "freeze on / off, echo c=32 p99 latency",
                OURS_SYNC,
                "ours-nofreeze.echo.c32",
                "p99_us",
            ),
        ),
        quick=False,
    ),
    "observe": Group(
        (OURS_SYNC, "ours-noobs.echo.c32"),
        (
            Comparison(
                "observe on / off, echo c=32 req/s", OURS_SYNC, "ours-noobs.echo.c32", "rps"
            ),
            Comparison(
                "observe on / off, echo c=32 CPU per request",
                OURS_SYNC,
                "ours-noobs.echo.c32",
                "cpu_us_per_request",
            ),
        ),
        quick=False,
    ),
}
CPU_TARGET_US = 90.0


# -- running the rounds -----------------------------------------------------------------------


@contextlib.contextmanager
def running(keys: set[str], directory: Path) -> Iterator[dict[str, Server]]:
    """Start every server named in ``keys`` (checked by hand), stop them all on the way out."""
    env = prepare_environment(directory)
    servers: dict[str, Server] = {}
    try:
        for key in sorted(keys):
            servers[key] = Server(SERVERS[key], env, directory)
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def round_order(loads: list[str], round_index: int) -> list[str]:
    """Every other round runs the loads in reverse, so no server always goes first."""
    return loads if round_index % 2 == 0 else loads[::-1]


def sampled(load: Load, server: Server, seconds: float, script: Path, where: str) -> Sample:
    """One measured wrk run, its figures printed in one line after ``where``."""
    sample = run_wrk(load, server, seconds, script)
    print(
        f"  {where} {sample.rps:9,.0f} req/s {sample.cpu_us_per_request:7.1f} µs CPU/req  "
        f"p99 {sample.p99_us / 1000:7.2f} ms  other load {sample.other_load_cores:.2f} cores",
        flush=True,
    )
    return sample


def measure(
    load_keys: list[str], rounds: int, seconds: float, directory: Path
) -> tuple[dict[str, list[Sample]], list[str]]:
    """Interleaved rounds of every load; returns the samples and the problems seen."""
    problems: list[str] = []
    samples: dict[str, list[Sample]] = {key: [] for key in load_keys}
    scripts = {key: wrk_script(LOADS[key], directory) for key in load_keys}
    with running({LOADS[key].server for key in load_keys}, directory) as servers:
        for key in load_keys:
            load = LOADS[key]
            servers[load.server].check(load.exchange)
            run_wrk(load, servers[load.server], 1, scripts[key])  # warm-up, not kept
        for round_index in range(rounds):
            for key in round_order(load_keys, round_index):
                load = LOADS[key]
                where = f"round {round_index + 1}/{rounds}  {key:<22}"
                sample = sampled(load, servers[load.server], seconds, scripts[key], where)
                samples[key].append(sample)
                if sample.errors or sample.non_2xx:
                    problems.append(
                        f"{key} round {round_index + 1}: {sample.non_2xx} non-2xx, "
                        f"{sample.errors} socket errors"
                    )
        for key in load_keys:
            load = LOADS[key]
            try:
                servers[load.server].check(load.exchange)
            except RuntimeError as error:
                problems.append(f"after the run: {error}")
    return samples, problems


def median_of(samples: list[Sample], metric: str) -> float:
    return statistics.median(getattr(sample, metric) for sample in samples)


def report(
    samples: dict[str, list[Sample]], groups: list[str], problems: list[str], header: str
) -> str:
    width = max(len(LOADS[key].label) for key in samples)
    lines = [header, ""]
    lines.append(
        f"{'load':<{width}} {'req/s':>9} {'range':>15} {'CPU µs/req':>10} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'errors':>6} {'other load':>10}"
    )
    for key, runs in samples.items():
        rates = [run.rps for run in runs]
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}"
        lines.append(
            f"{LOADS[key].label:<{width}} {statistics.median(rates):9,.0f} {spread:>15} "
            f"{median_of(runs, 'cpu_us_per_request'):10.1f} "
            f"{median_of(runs, 'p50_us') / 1000:7.2f} {median_of(runs, 'p99_us') / 1000:7.2f} "
            f"{sum(run.errors + run.non_2xx for run in runs):6d} "
            f"{median_of(runs, 'other_load_cores'):8.2f} c"
        )
    lines += ["", f"{'comparison':<68} {'ratio':>7} {'per round':>13} {'target':>8}  verdict"]
    for group in groups:
        for comparison in GROUPS[group].comparisons:
            top, bottom = samples[comparison.numerator], samples[comparison.denominator]
            ratio = median_of(top, comparison.metric) / median_of(bottom, comparison.metric)
            per_round = [
                getattr(a, comparison.metric) / getattr(b, comparison.metric)
                for a, b in zip(top, bottom, strict=True)
            ]
            lines.append(
                f"{comparison.title:<68} {ratio:6.2f}x "
                f"{f'{min(per_round):.2f}-{max(per_round):.2f}x':>13} "
                f"{comparison.target:>8}  {comparison.verdict(ratio)}"
            )
    if OURS_SYNC in samples:
        cpu = median_of(samples[OURS_SYNC], "cpu_us_per_request")
        verdict = "meets" if cpu < CPU_TARGET_US else "MISSES"
        lines.append(
            f"{'our CPU per request, tools/call echo c=32 (µs)':<68} {cpu:7.1f} {'':>13} "
            f"{'< 90 µs':>8}  {verdict}"
        )
    lines.append("")
    lines.append("problems: " + ("; ".join(problems) if problems else "none"))
    return "\n".join(lines)


def _git(*arguments: str) -> str:
    done = subprocess.run(
        ["git", *arguments], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def json_from_module(module: str, arguments: list[str], env: dict[str, str], timeout: float) -> Any:
    """Run ``python -m <module> <arguments>`` from the repository root (as a module: bench/
    itself must not be on the path, where this file would shadow the standard library's
    http) and return the JSON its last line of output holds; exit naming it when it fails."""
    where = {"cwd": REPO_ROOT, "env": env, "timeout": timeout}
    completed = subprocess.run(
        [sys.executable, "-m", module, *arguments], capture_output=True, text=True, **where
    )
    if completed.returncode != 0:
        output = f"{completed.stderr[-3000:]}{completed.stdout[-2000:]}"
        raise SystemExit(f"{module} {' '.join(arguments)} failed:\n{output}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def provenance(script: str) -> str:
    """When, on what, from which commit, with which command: shared by the bench reports."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = _git("rev-parse", "--short", "HEAD")
    changed = _git("status", "--porcelain", "beammcp_django")
    tree = "beammcp_django/ with uncommitted changes" if changed else "clean beammcp_django/"
    load = Path("/proc/loadavg").read_text().split()[:3]
    return (
        f"{now}, commit {commit or '?'} ({tree}), Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs (shared), load average {' '.join(load)} at start\n"
        f"command: .venv/bin/python bench/{script} {' '.join(sys.argv[1:])}"
    )


def run_header(method: str) -> str:
    """The first lines of every report of this script."""
    flags = " ".join(UVICORN_FLAGS)
    return f"{provenance('http.py')}\nuvicorn --workers N --http {BOUNDED_HTTP} {flags}; {method}"


# -- profiles -------------------------------------------------------------------------------

# Which layer a frame's file belongs to, first match wins.
LAYERS: tuple[tuple[str, str], ...] = (
    ("beammcp_django/transports/http.py", "beammcp transports/http.py"),
    ("beammcp_django/protocol/server.py", "beammcp protocol/server.py"),
    ("beammcp_django/protocol/wire.py", "beammcp protocol/wire.py"),
    ("beammcp_django/protocol/schema.py", "beammcp protocol/schema.py (arguments)"),
    ("beammcp_django/protocol/", "beammcp protocol/ (other)"),
    ("beammcp_django/connectome/", "beammcp connectome/"),
    ("beammcp_django/runtime/host_threads.py", "beammcp host_calls.py (run_sync_host)"),
    ("beammcp_django/registry.py", "beammcp registry.py"),
    ("beammcp_django/", "beammcp (asgi, authorization, other)"),
    ("bench/", "host code (tools)"),
    ("sample_project/", "host code (tools)"),
    ("jsonschema", "jsonschema"),
    ("asgiref/", "asgiref (sync_to_async)"),
    ("concurrent/futures/", "thread pool (concurrent.futures)"),
    ("threading.py", "threading"),
    ("django/db/", "django.db (close_old_connections)"),
    ("django/", "django (other)"),
    ("uvicorn/", "uvicorn"),
    # A sample whose innermost Python frame is the loop's run is in uvloop's or httptools'
    # C code (reading sockets, parsing, scheduling callbacks).
    ("asyncio/runners.py", "event loop run (uvloop/httptools C code)"),
    ("asyncio/", "asyncio"),
    ("json/", "json"),
    ("<frozen runpy>", "process entry (runpy, click)"),
    ("click/", "process entry (runpy, click)"),
)
# Frames every sample of a thread passes through: left out of the by-function tables.
ENTRY_FRAMES = (
    "<frozen runpy>",
    "click/",
    "uvicorn/__main__.py",
    "uvicorn/main.py",
    "uvicorn/server.py",
    "uvicorn/_compat.py",
    "Thread._bootstrap",
    "Thread.run (threading.py",
)


def layer_of(frame: str) -> str:
    for needle, layer in LAYERS:
        if needle in frame:
            return layer
    return "other"


def same_frame(frame: str) -> str:
    return frame


@dataclass
class Profile:
    """py-spy's raw (collapsed) stacks: one line per distinct stack, root first, then a count."""

    stacks: list[tuple[list[str], int]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Profile:
        profile = cls()
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                profile.stacks.append((stack.split(";"), int(count)))
        return profile

    @property
    def total(self) -> int:
        return sum(count for _, count in self.stacks)

    def own(self, key: Callable[[str], str]) -> Counter[str]:
        """Samples by the innermost frame."""
        counts: Counter[str] = Counter()
        for frames, count in self.stacks:
            counts[key(frames[-1])] += count
        return counts

    def inclusive(self, key: Callable[[str], str]) -> Counter[str]:
        """Samples by every frame on the stack, each key counted once per sample."""
        counts: Counter[str] = Counter()
        for frames, count in self.stacks:
            for name in {key(frame) for frame in frames}:
                counts[name] += count
        return counts

    def share_where(self, needle: str) -> float:
        found = sum(count for frames, count in self.stacks if any(needle in f for f in frames))
        return found / self.total


def profile_table(
    title: str, counts: Counter[str], total: int, us_per_request: float, limit: int
) -> list[str]:
    lines = [title, f"  {'share':>6} {'µs/req':>7}  what"]
    for name, count in counts.most_common(limit):
        share = count / total
        lines.append(f"  {share:6.1%} {share * us_per_request:7.1f}  {name}")
    lines.append("")
    return lines


# A frame on every stack of a worker thread running sync host code (beammcp_django/threads.py).
HOST_THREADS_FRAME = "HostThreads._work"


def summarise_profile(profile: Profile, heading: str, us_per_request: float) -> str:
    total = profile.total
    in_pool = profile.share_where(HOST_THREADS_FRAME)
    in_flusher = profile.share_where("connectome/store.py")
    lines = [
        heading,
        "",
        f"{total} samples. Column µs/req = share x the measured server CPU per request "
        f"({us_per_request:.1f} µs).",
        f"Threads: event loop {1 - in_pool - in_flusher:.1%}, worker threads (sync tools, "
        f"sync hooks) {in_pool:.1%}, connectome flusher {in_flusher:.1%}.",
        "",
    ]
    lines += profile_table(
        "Own time by layer (the innermost frame's file):",
        profile.own(layer_of),
        total,
        us_per_request,
        30,
    )
    lines += profile_table(
        "Inclusive time by layer (a sample counts once per layer on its stack):",
        profile.inclusive(layer_of),
        total,
        us_per_request,
        30,
    )
    lines += profile_table(
        "Own time by function (top 45):", profile.own(same_frame), total, us_per_request, 45
    )
    by_function = profile.inclusive(same_frame)
    for name in list(by_function):
        if any(entry in name for entry in ENTRY_FRAMES):
            del by_function[name]
    lines += profile_table(
        "Inclusive time by function (top 70; entry frames left out):",
        by_function,
        total,
        us_per_request,
        70,
    )
    ours = Counter(
        {name: count for name, count in by_function.items() if "beammcp_django/" in name}
    )
    lines += profile_table(
        "Inclusive time of every beammcp_django function sampled:",
        ours,
        total,
        us_per_request,
        200,
    )
    return "\n".join(lines)


PROFILED = (
    ("echo-c32", OURS_SYNC),
    ("echo-async-c32", "ours.echo_async.c32"),
    ("tools-list-c32", "ours.list.c32"),
)


def sampled_by_py_spy(
    pid: int, options: list[str], raw: Path, seconds: float, load: Callable[[], Any]
) -> tuple[Any, Profile]:
    """Run ``load`` while py-spy records ``pid`` into ``raw``; the load's sample and the
    profile read back."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    spy = subprocess.Popen(
        [py_spy, "record", *options, "--pid", str(pid), "-o", str(raw)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sample = load()
        _, spy_errors = spy.communicate(timeout=seconds + 60)
    finally:
        if spy.poll() is None:
            spy.kill()
            spy.wait()
    if not raw.exists():
        raise RuntimeError(f"py-spy wrote nothing: {spy_errors[-2000:]}")
    return sample, Profile.read(raw)


def record_profiles(arguments: argparse.Namespace, directory: Path) -> None:
    """Ours under each load while py-spy samples it; text summaries into bench/profiles/.

    ``--gil`` keeps only samples of the thread holding the GIL: Python running, or C code
    run under the GIL (uvloop, httptools, json). Waits (epoll, the pool's queue, locks) are
    left out, which py-spy's own idle detection does not manage on this machine.
    """
    seconds = arguments.profile
    PROFILES_DIR.mkdir(exist_ok=True)
    with running({"ours"}, directory) as servers:
        server = servers["ours"]
        for name, key in PROFILED:
            load = LOADS[key]
            script = wrk_script(load, directory)
            server.check(load.exchange)
            run_wrk(load, server, 2, script)  # warm-up
            raw = directory / f"{name}.raw"
            options = [
                "--rate",
                str(arguments.profile_rate),
                "--duration",
                f"{seconds:g}",
                "--gil",
                "--function",
                "--format",
                "raw",
                *(["--native"] if arguments.native else []),
            ]
            sample, profile = sampled_by_py_spy(
                server.process.pid,
                options,
                raw,
                seconds,
                lambda: run_wrk(load, server, seconds + 2, script),  # noqa: B023 - called at once
            )
            gil_us = profile.total / arguments.profile_rate / (sample.rps * seconds) * 1e6
            heading = "\n".join(
                [
                    run_header(
                        f"py-spy record {' '.join(options)} --pid <the uvicorn process>, "
                        f"during a wrk -t{load.threads} -c{load.connections} run of "
                        f"{seconds + 2:g} s"
                    ),
                    f"profiled: {load.label}",
                    f"during the profiled run: {sample.rps:,.0f} req/s, "
                    f"{sample.cpu_us_per_request:.1f} µs server CPU per request (utime+stime), "
                    f"{gil_us:.1f} µs GIL-held per request (samples/rate/requests), p99 "
                    f"{sample.p99_us / 1000:.2f} ms, {sample.non_2xx + sample.errors} errors, "
                    f"other load {sample.other_load_cores:.2f} cores (py-spy included)",
                ]
            )
            summary = summarise_profile(profile, heading, sample.cpu_us_per_request)
            (PROFILES_DIR / f"{name}.txt").write_text(summary + "\n")
            print(f"wrote bench/profiles/{name}.txt ({sample.rps:,.0f} req/s while profiled)")


# -- the command line -----------------------------------------------------------------------


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 2 s, the quick groups")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 3)")
    parser.add_argument("--seconds", type=float, help="length of one load (default 10; quick 2)")
    parser.add_argument(
        "--groups",
        help=f"comma-separated, from: {', '.join(GROUPS)} (default: all; quick: the issue's)",
    )
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument(
        "--profile",
        type=float,
        metavar="SECONDS",
        help="instead of comparing, profile ours with py-spy under each load for SECONDS",
    )
    parser.add_argument("--profile-rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--native", action="store_true", help="py-spy --native (C frames too)")
    arguments = parser.parse_args()
    arguments.rounds = arguments.rounds or (3 if arguments.quick else 5)
    arguments.seconds = arguments.seconds or (2.0 if arguments.quick else 10.0)
    if arguments.groups:
        arguments.group_list = arguments.groups.split(",")
        unknown = [name for name in arguments.group_list if name not in GROUPS]
        if unknown:
            parser.error(f"unknown groups: {', '.join(unknown)}")
    else:
        arguments.group_list = [
            name for name, group in GROUPS.items() if group.quick or not arguments.quick
        ]
    return arguments


def main() -> int:
    arguments = parse_arguments()
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-http-") as temporary:
        directory = Path(temporary)
        if arguments.profile:
            record_profiles(arguments, directory)
            return 0
        load_keys = list(
            dict.fromkeys(key for name in arguments.group_list for key in GROUPS[name].loads)
        )
        estimate = len(load_keys) * (arguments.rounds * arguments.seconds + 1)
        print(f"{len(load_keys)} loads x {arguments.rounds} rounds: about {estimate / 60:.1f} min")
        header = run_header(
            f"wrk -t2 (-t1 at c=1) -d{arguments.seconds:g}s, {arguments.rounds} interleaved "
            "rounds, medians"
        )
        samples, problems = measure(load_keys, arguments.rounds, arguments.seconds, directory)
    print()
    print(report(samples, arguments.group_list, problems, header))
    if arguments.json:
        arguments.json.write_text(
            json.dumps(
                {
                    "header": header,
                    "samples": {
                        key: [vars(sample) for sample in runs] for key, runs in samples.items()
                    },
                    "problems": problems,
                },
                indent=1,
            )
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
