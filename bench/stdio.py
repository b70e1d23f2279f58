"""Benchmark: ``manage.py mcp_stdio`` against the official MCP Python SDK's stdio server.

What it measures (issue 6)
    Round trips per second of ``tools/call`` over stdio (target: ours at least 2x the SDK's,
    in the same run). Each server is a subprocess on pipes, spoken to in newline-delimited
    JSON-RPC: ours is ``manage.py mcp_stdio`` with ``bench/bench_settings.py`` (DEBUG off,
    the sample catalog plus ``echo_async``, a fresh migrated SQLite file); the SDK's is
    ``bench/sdk_stdio_peer.py`` (``mcp``'s ``MCPServer.run("stdio")`` with the HTTP peer's
    tools). Both run on the default asyncio loop of the same interpreter.

    Both revisions, like with like, one process per server and revision: 2025-11-25 after an
    ``initialize`` handshake, and 2026-07-28 with ``_meta`` in every request and no handshake
    (the SDK's stdio loop serves either; a connection's first request decides which). Two
    tools: ``echo`` (a sync function: a worker thread in both servers) and ``echo_async`` (a
    coroutine), one string argument. Two ways of sending: one at a time (send a line, wait for
    its reply: latency-bound round trips, window 1) and pipelined (a window of 32 requests in
    flight, refilled as replies arrive; both servers run requests concurrently).

    Per load, for a fixed time: calls per second (replies over the time from the first send
    to the last reply); client-observed latency p50/p99 (from writing a request's line to
    reading its reply's); the server's CPU per call (utime+stime of the process, all its
    threads, from ``/proc/<pid>/stat``) and the driver's own; the rest of the machine's load
    (busy CPU less the server's and the driver's), since the machine is shared. Every reply is
    checked: its id is one in flight, its text is the one sent (``hello-<id>``), it is not an
    error, and it carries ``resultType`` exactly when the revision is 2026-07-28. A wrong or
    missing reply stops the run with exit status 1.

    Rounds are interleaved (every load once per round, the order reversed every other round,
    so neither server always goes first); each figure is the median over rounds and each
    ratio (ours / SDK) is taken from the medians, with its per-round range beside it.

How to run (from the repository root)
    .venv/bin/python bench/stdio.py --quick         # ~35 s: echo, both revisions, w=1 and 32
    .venv/bin/python bench/stdio.py                 # ~4 min: both tools, 5 rounds of 2.5 s
    .venv/bin/python bench/stdio.py --rounds 3 --seconds 2 --json /tmp/stdio.json
    .venv/bin/python bench/stdio.py --profile 15    # py-spy summary: bench/profiles/stdio-echo.txt

It exits 0 when every reply was the expected one (a missed target is a finding, not a
failure) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder heads sys.path, where bench/http.py would shadow the
# standard library's http package: put the repository root there instead, so the bench
# modules are imported as ``bench.xxx``.
if sys.path and Path(sys.path[0]).resolve() == REPO_ROOT / "bench":
    sys.path[0] = str(REPO_ROOT)

from bench.http import (  # noqa: E402
    CLOCK_TICKS,
    HOST_THREADS_FRAME,
    LAYERS,
    LEGACY,
    MODERN,
    PROFILES_DIR,
    Profile,
    machine_busy_seconds,
    prepare_environment,
    process_tree_ticks,
    profile_table,
    provenance,
    sampled_by_py_spy,
)

WINDOWS = (1, 32)
TARGET_RATIO = 2.0
# The first reply may wait for Django's or the SDK's start on a busy machine; later ones are
# answered in milliseconds, so a reply slower than REPLY_TIMEOUT means a stuck server.
START_TIMEOUT = 60.0
REPLY_TIMEOUT = 10.0
WARM_UP_SECONDS = 0.5
TEXT_PREFIX = "hello-"
ID_MARK = "@ID@"


# -- what is sent and what must come back ----------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """A server the driver starts on pipes."""

    key: str
    label: str
    command: tuple[str, ...]


PEERS = {
    peer.key: peer
    for peer in (
        Peer("ours", "ours", (sys.executable, "manage.py", "mcp_stdio")),
        Peer("sdk", "SDK", (sys.executable, "-m", "bench.sdk_stdio_peer")),
    )
}


@dataclass(frozen=True)
class Load:
    """One server, one revision, one tool, one window: what a timed run sends."""

    peer: str
    era: str
    tool: str
    window: int

    @property
    def key(self) -> str:
        return f"{self.peer}.{self.era}.{self.tool}.w{self.window}"

    @property
    def case(self) -> str:
        """What both servers are asked, without naming the server."""
        sending = "one at a time" if self.window == 1 else f"pipelined w={self.window}"
        return f"{self.era} {self.tool}, {sending}"

    @property
    def label(self) -> str:
        return f"{PEERS[self.peer].label}: {self.case}"

    def line_format(self) -> bytes:
        """The request line as a bytes %-format taking the id twice (the id, then the text).

        Formatting one line costs a fraction of a microsecond, so the driver's own work stays
        small next to the servers' (it shares the two cores with them).
        """
        params: dict[str, Any] = {
            "name": self.tool,
            "arguments": {"text": f"{TEXT_PREFIX}{ID_MARK}"},
        }
        if self.era == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        message = {"jsonrpc": "2.0", "id": ID_MARK, "method": "tools/call", "params": params}
        encoded = json.dumps(message, separators=(",", ":")).replace("%", "%%")
        # The id comes first in the line, then the text that repeats it.
        return encoded.replace(f'"{ID_MARK}"', "%d", 1).replace(ID_MARK, "%d").encode() + b"\n"

    def problem(self, reply: dict[str, Any], request_id: int) -> str | None:
        """Why ``reply`` is not the answer to request ``request_id``, or None when it is."""
        result = reply.get("result")
        if type(result) is not dict:
            return "not a result"
        expected = [{"type": "text", "text": f"{TEXT_PREFIX}{request_id}"}]
        if result.get("content") != expected or result.get("isError"):
            return "not the echo of its request"
        if ("resultType" in result) != (self.era == MODERN):
            return f"resultType {'missing' if self.era == MODERN else 'present'} at {self.era}"
        return None


def all_loads(tools: tuple[str, ...]) -> list[Load]:
    """Every load, ours beside the SDK's for each case."""
    return [
        Load(peer, era, tool, window)
        for era in (LEGACY, MODERN)
        for tool in tools
        for window in WINDOWS
        for peer in PEERS
    ]


# -- one server on pipes ----------------------------------------------------------------------


class WrongReply(RuntimeError):
    """A server answered something other than what was asked, or did not answer."""


class StdioServer:
    """One server process spoken to over its stdin and stdout; stderr goes to a log file."""

    def __init__(self, peer: Peer, era: str, env: dict[str, str], log_dir: Path) -> None:
        self.label = f"{peer.label} at {era}"
        self.peer = peer.key
        self.era = era
        self.log_path = log_dir / f"{peer.key}-{era}.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                peer.command,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                bufsize=0,
                start_new_session=True,
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.write_fd = self.process.stdin.fileno()
        self.read_fd = self.process.stdout.fileno()
        self.poller = select.poll()
        self.poller.register(self.read_fd, select.POLLIN)
        self.received = bytearray()
        self.next_id = 1

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self) -> str:
        return self.log_path.read_bytes()[-3000:].decode(errors="replace")

    def cpu_seconds(self) -> float:
        return process_tree_ticks(self.pid) / CLOCK_TICKS

    def send(self, data: bytes) -> None:
        # Blocking writes: at most a window of short lines is unanswered, far below the pipe's
        # 64 KiB, so a write never waits on the server.
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.write_fd, view) :]
        except BrokenPipeError:
            raise WrongReply(f"{self.label} closed its stdin:\n{self.log_tail()}") from None

    def receive_lines(self, timeout: float = REPLY_TIMEOUT) -> list[bytes]:
        """Every complete line that has arrived, waiting up to ``timeout`` for at least one."""
        while (end := self.received.rfind(b"\n")) < 0:
            if not self.poller.poll(timeout * 1000):
                raise WrongReply(f"{self.label}: no reply within {timeout:g} s")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise WrongReply(f"{self.label} closed its stdout:\n{self.log_tail()}")
            self.received += chunk
        lines = bytes(self.received[:end]).split(b"\n")
        del self.received[: end + 1]
        return lines

    def request(self, message: dict[str, Any], timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """One request by hand, its reply parsed (nothing else may arrive meanwhile)."""
        self.send(json.dumps(message).encode() + b"\n")
        (line,) = self.receive_lines(timeout)
        reply = json.loads(line)
        if reply.get("id") != message["id"]:
            raise WrongReply(f"{self.label}: expected the reply to {message['id']!r}: {line!r}")
        return reply

    def open(self) -> None:
        """The 2025-11-25 handshake (none at 2026-07-28), then one echo checked by hand."""
        if self.era == LEGACY:
            reply = self.request(
                {
                    "jsonrpc": "2.0",
                    "id": "initialize",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "bench/stdio.py", "version": "1"},
                    },
                },
                START_TIMEOUT,
            )
            negotiated = reply.get("result", {}).get("protocolVersion")
            if negotiated != LEGACY:
                raise WrongReply(f"{self.label} negotiated {negotiated!r}: {reply}")
            self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.check(Load(self.peer, self.era, "echo", 1), START_TIMEOUT)

    def check(self, load: Load, timeout: float = REPLY_TIMEOUT) -> None:
        request_id = self.next_id
        self.next_id += 1
        self.send(load.line_format() % (request_id, request_id))
        (line,) = self.receive_lines(timeout)
        reply = json.loads(line)
        problem = load.problem(reply, request_id) if reply.get("id") == request_id else "id"
        if problem is not None:
            raise WrongReply(f"{self.label} answered {load.tool} wrongly ({problem}): {line!r}")

    def stop(self) -> None:
        """Close stdin (both servers exit on end of input); kill what outlives 10 s."""
        assert self.process.stdin is not None and self.process.stdout is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process.stdout.close()


@contextlib.contextmanager
def running(loads: list[Load], directory: Path) -> Iterator[dict[tuple[str, str], StdioServer]]:
    """One opened server per (peer, revision) the loads need; all stopped on the way out."""
    env = prepare_environment(directory)
    servers: dict[tuple[str, str], StdioServer] = {}
    try:
        for load in loads:
            if (load.peer, load.era) not in servers:
                servers[load.peer, load.era] = StdioServer(
                    PEERS[load.peer], load.era, env, directory
                )
        for server in servers.values():
            server.open()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


# -- one timed load ---------------------------------------------------------------------------


@dataclass
class Sample:
    """What one timed run of one load measured."""

    calls: int
    seconds: float
    p50_us: float
    p99_us: float
    server_cpu_us_per_call: float
    driver_cpu_us_per_call: float
    other_load_cores: float

    @property
    def rate(self) -> float:
        return self.calls / self.seconds


def percentile(ordered: list[int], share: float) -> float:
    """The nearest-rank percentile of an ascending list."""
    return float(ordered[min(len(ordered) - 1, int(share * len(ordered)))])


def run_load(server: StdioServer, load: Load, seconds: float) -> Sample:
    """Keep ``load.window`` requests in flight for ``seconds``, then wait for the last replies.

    Every reply is checked against the request it answers; send and receipt times are taken
    at the write and after the read that brought the reply.
    """
    line_format = load.line_format()
    window = load.window
    clock = time.perf_counter_ns
    in_flight: dict[int, int] = {}
    latencies: list[int] = []
    next_id = server.next_id
    server_before = server.cpu_seconds()
    machine_before = machine_busy_seconds()
    driver_before = time.process_time()
    started = now = clock()
    deadline = started + int(seconds * 1e9)
    while True:
        if now < deadline and len(in_flight) < window:
            batch = []
            while len(in_flight) < window:
                in_flight[next_id] = now
                batch.append(line_format % (next_id, next_id))
                next_id += 1
            server.send(b"".join(batch))
        if not in_flight:
            break
        lines = server.receive_lines()
        now = clock()
        for line in lines:
            reply = json.loads(line)
            sent = in_flight.pop(reply.get("id"), None)
            problem = "an id not in flight" if sent is None else load.problem(reply, reply["id"])
            if problem is not None:
                raise WrongReply(f"{load.label}: {problem}: {line[:300]!r}")
            latencies.append(now - sent)
    elapsed = (now - started) / 1e9
    driver_cpu = time.process_time() - driver_before
    server_cpu = server.cpu_seconds() - server_before
    machine = machine_busy_seconds() - machine_before
    server.next_id = next_id
    calls = len(latencies)
    latencies.sort()
    return Sample(
        calls=calls,
        seconds=elapsed,
        p50_us=percentile(latencies, 0.50) / 1000,
        p99_us=percentile(latencies, 0.99) / 1000,
        server_cpu_us_per_call=server_cpu / calls * 1e6,
        driver_cpu_us_per_call=driver_cpu / calls * 1e6,
        other_load_cores=max(0.0, (machine - server_cpu - driver_cpu) / elapsed),
    )


# -- rounds and the report --------------------------------------------------------------------


def measure(
    loads: list[Load], rounds: int, seconds: float, directory: Path
) -> dict[str, list[Sample]]:
    """Interleaved rounds of every load (reversed every other round); samples by load key."""
    samples: dict[str, list[Sample]] = {load.key: [] for load in loads}
    with running(loads, directory) as servers:
        for load in loads:
            run_load(servers[load.peer, load.era], load, WARM_UP_SECONDS)
        for round_index in range(rounds):
            for load in loads if round_index % 2 == 0 else loads[::-1]:
                sample = run_load(servers[load.peer, load.era], load, seconds)
                samples[load.key].append(sample)
                print(
                    f"  round {round_index + 1}/{rounds}  {load.label:<48} "
                    f"{sample.rate:8,.0f} calls/s  {sample.server_cpu_us_per_call:7.1f} µs CPU/call"
                    f"  p99 {sample.p99_us / 1000:6.2f} ms  other load "
                    f"{sample.other_load_cores:.2f} cores",
                    flush=True,
                )
        for load in loads:
            servers[load.peer, load.era].check(load)
    return samples


def median_of(samples: list[Sample], metric: str) -> float:
    return statistics.median(getattr(sample, metric) for sample in samples)


def ratio_line(title: str, ours: list[Sample], sdk: list[Sample], metric: str) -> str:
    ratio = median_of(ours, metric) / median_of(sdk, metric)
    per_round = [getattr(a, metric) / getattr(b, metric) for a, b in zip(ours, sdk, strict=True)]
    spread = f"{min(per_round):.2f}-{max(per_round):.2f}x"
    verdict = ""
    if metric == "rate":
        verdict = f"{f'>= {TARGET_RATIO:g}x':>8}  {'meets' if ratio >= TARGET_RATIO else 'MISSES'}"
    return f"{title:<58} {ratio:6.2f}x {spread:>13} {verdict}".rstrip()


def report(loads: list[Load], samples: dict[str, list[Sample]], header: str) -> str:
    width = max(len(load.label) for load in loads)
    lines = [
        header,
        "",
        f"{'load':<{width}} {'calls/s':>8} {'range':>15} {'server CPU':>10} {'driver':>7} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'other load':>10}",
        f"{'':<{width}} {'':>8} {'':>15} {'µs/call':>10} {'µs/call':>7}",
    ]
    for load in loads:
        runs = samples[load.key]
        rates = [run.rate for run in runs]
        lines.append(
            f"{load.label:<{width}} {statistics.median(rates):8,.0f} "
            f"{f'{min(rates):,.0f}-{max(rates):,.0f}':>15} "
            f"{median_of(runs, 'server_cpu_us_per_call'):10.1f} "
            f"{median_of(runs, 'driver_cpu_us_per_call'):7.1f} "
            f"{median_of(runs, 'p50_us') / 1000:7.3f} {median_of(runs, 'p99_us') / 1000:7.3f} "
            f"{median_of(runs, 'other_load_cores'):8.2f} c"
        )
    lines += ["", f"{'ours / SDK':<58} {'ratio':>7} {'per round':>13} {'target':>8}  verdict"]
    for load in loads:
        if load.peer != "ours":
            continue
        ours = samples[load.key]
        sdk = samples[Load("sdk", load.era, load.tool, load.window).key]
        lines.append(ratio_line(f"{load.case}, calls/s", ours, sdk, "rate"))
        lines.append(ratio_line("    server CPU per call", ours, sdk, "server_cpu_us_per_call"))
        lines.append(ratio_line("    p99 latency", ours, sdk, "p99_us"))
    return "\n".join(lines)


def run_header(method: str) -> str:
    """The first lines of every report of this script."""
    return f"{provenance('stdio.py')}\nmethod: {method}"


# -- profile ----------------------------------------------------------------------------------

# Frames under which ours runs everything: manage.py, Django's command runner, mcp_stdio.
PROCESS_ENTRY = ("manage.py", "django/core/management/", "beammcp_django/management/")
# Layers of the stdio server's frames, ahead of the HTTP bench's (first match wins).
STDIO_LAYERS: tuple[tuple[str, str], ...] = (
    ("beammcp_django/transports/stdio.py", "beammcp transports/stdio.py"),
    *((entry, "process entry (manage.py mcp_stdio)") for entry in PROCESS_ENTRY),
    ("asyncio/base_events.py", "asyncio event loop (base_events)"),
    *LAYERS,
)
# Frames on every sample of a thread (process entry, thread bootstrap): left out by function.
ENTRY_FRAMES = (*PROCESS_ENTRY, "Thread._bootstrap", "Thread.run (threading.py")
PROFILED = (Load("ours", MODERN, "echo", 32), Load("ours", MODERN, "echo", 1))


def stdio_layer(frame: str) -> str:
    return next((layer for needle, layer in STDIO_LAYERS if needle in frame), "other")


def summarise(profile: Profile, heading: str, us_per_call: float) -> str:
    total = profile.total
    pool = profile.share_where(HOST_THREADS_FRAME)
    reader = profile.share_where("_read_forever")
    flusher = profile.share_where("connectome/store.py")
    lines = [
        heading,
        "",
        f"{total} samples. Column µs/req = share x the measured server CPU per call "
        f"({us_per_call:.1f} µs).",
        f"Threads: event loop {1 - pool - reader - flusher:.1%}, stdin reader {reader:.1%}, "
        f"worker threads (sync tools) {pool:.1%}, connectome flusher {flusher:.1%}.",
        "",
    ]
    lines += profile_table("Own time by layer:", profile.own(stdio_layer), total, us_per_call, 25)
    lines += profile_table(
        "Inclusive time by layer (once per layer on a stack):",
        profile.inclusive(stdio_layer),
        total,
        us_per_call,
        25,
    )
    lines += profile_table(
        "Own time by function (top 30):", profile.own(str), total, us_per_call, 30
    )
    inclusive = Counter(
        {
            name: count
            for name, count in profile.inclusive(str).items()
            if not any(entry in name for entry in ENTRY_FRAMES)
        }
    )
    lines += profile_table(
        "Inclusive time by function (top 40; entry frames left out):",
        inclusive,
        total,
        us_per_call,
        40,
    )
    return "\n".join(lines)


def record_profile(seconds: float, rate: int, directory: Path) -> None:
    """Ours under each profiled load while py-spy samples it; one text summary of both."""
    options = ["--rate", str(rate), "--duration", f"{seconds:g}", "--gil", "--function"]
    options += ["--format", "raw"]
    sections = [
        run_header(
            f"py-spy record {' '.join(options)} --pid <manage.py mcp_stdio>, during "
            f"a {seconds + 2:g} s load; --gil keeps only the thread holding the GIL (waits on "
            "pipes, queues and locks are left out)"
        )
    ]
    with running(list(PROFILED), directory) as servers:
        server = servers["ours", MODERN]
        for load in PROFILED:
            run_load(server, load, 1.0)  # warm-up
            raw = directory / f"profile-w{load.window}.raw"
            sample, profile = sampled_by_py_spy(
                server.pid,
                options,
                raw,
                seconds,
                lambda: run_load(server, load, seconds + 2),  # noqa: B023 - called at once
            )
            gil_us = profile.total / rate / (sample.rate * seconds) * 1e6
            heading = (
                f"== profiled: {load.label}\n"
                f"during the profiled run: {sample.rate:,.0f} calls/s, "
                f"{sample.server_cpu_us_per_call:.1f} µs server CPU per call (utime+stime), "
                f"{gil_us:.1f} µs GIL-held per call (samples/rate/calls), p50 "
                f"{sample.p50_us / 1000:.3f} ms, p99 {sample.p99_us / 1000:.3f} ms, other load "
                f"{sample.other_load_cores:.2f} cores (py-spy included)"
            )
            sections.append(summarise(profile, heading, sample.server_cpu_us_per_call))
            print(f"profiled {load.label}: {sample.rate:,.0f} calls/s", flush=True)
    PROFILES_DIR.mkdir(exist_ok=True)
    (PROFILES_DIR / "stdio-echo.txt").write_text("\n\n".join(sections) + "\n")
    print("wrote bench/profiles/stdio-echo.txt")


# -- the command line -------------------------------------------------------------------------


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="echo only, 3 rounds of 1 s (about 35 s)"
    )
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 3)")
    parser.add_argument("--seconds", type=float, help="length of one load (default 2.5; quick 1)")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument(
        "--profile",
        type=float,
        metavar="SECONDS",
        help="instead of comparing, profile ours with py-spy for SECONDS per load",
    )
    parser.add_argument("--profile-rate", type=int, default=250, help="py-spy samples per second")
    arguments = parser.parse_args()
    arguments.rounds = arguments.rounds or (3 if arguments.quick else 5)
    arguments.seconds = arguments.seconds or (1.0 if arguments.quick else 2.5)
    return arguments


def main() -> int:
    arguments = parse_arguments()
    loads = all_loads(("echo",) if arguments.quick else ("echo", "echo_async"))
    with tempfile.TemporaryDirectory(prefix="bench-stdio-") as temporary:
        directory = Path(temporary)
        try:
            if arguments.profile:
                record_profile(arguments.profile, arguments.profile_rate, directory)
                return 0
            estimate = len(loads) * (arguments.rounds * arguments.seconds + WARM_UP_SECONDS)
            print(
                f"{len(loads)} loads x {arguments.rounds} rounds: about {estimate:.0f} s "
                "plus the servers' start"
            )
            header = run_header(
                "each server a subprocess on pipes (newline-delimited JSON-RPC), one process per "
                f"revision; tools/call for {arguments.seconds:g} s per load, one at a time (w=1) "
                f"or {WINDOWS[-1]} in flight; {arguments.rounds} interleaved rounds, medians; "
                "server CPU from /proc/<pid>/stat"
            )
            samples = measure(loads, arguments.rounds, arguments.seconds, directory)
        except WrongReply as error:
            print(f"FAILED: {error}", file=sys.stderr)
            return 1
    print()
    print(report(loads, samples, header))
    if arguments.json:
        arguments.json.write_text(
            json.dumps(
                {
                    "header": header,
                    "samples": {key: [vars(run) for run in runs] for key, runs in samples.items()},
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
