"""Benchmark: 2025-11-25 sessions beside stateless 2026-07-28 requests on one HTTP endpoint.

What it measures (issue 15)
    One server of ours, the HTTP bench's ``ours`` (``bench/http.py``'s uvicorn command line,
    ``bench/bench_settings.py``: ``allow_all``, so a session has no principal and counts
    against ``SESSION_LIMIT`` only), on 127.0.0.1.

    1. Memory, first, while the heap has not yet been grown by the loads (free space it holds
       would absorb the sessions' allocations and hide them): the server's VmRSS, a second
       after each step, before and after ``--sessions`` sessions are opened (``initialize``
       then ``notifications/initialized``, one after another over one keep-alive
       connection), then with one GET stream open per session (each held on its own socket,
       its first bytes read). Per open session and per open stream: the rise divided by
       their number, in KiB. Then every session must still answer ``ping`` with its stream
       open; the streams are closed and the sessions ended with DELETE (204). A few
       sessions and streams are opened and ended before the first reading, so what the
       first ones import or cache is not counted.
    2. Throughput: wrk -t2 -c32 sending ``tools/call`` ``echo`` (a sync tool) in one
       2025-11-25 session, opened before the loads (every request carries its
       ``Mcp-Session-Id`` and ``MCP-Protocol-Version``; no ``_meta``), against the stateless
       2026-07-28 ``tools/call`` echo ``bench/http.py`` sends (``CALL_SYNC``). Interleaved
       rounds, the order reversing every other round; medians of req/s, the server's CPU per
       request (utime+stime of its process tree) and p99. Ratio session / stateless, from
       medians in the same run, against the issue's target: req/s at least 0.85x.

    3. ``--store redis``: the same, with the sessions in a redis-server of the bench's own
       (Debian's; ``BEAMMCP["SESSION_CACHE"]``, the store several workers share) instead of
       the serving process. Memory per session is then also read from Redis (``INFO
       memory``'s used_memory), and the CPU per request from Redis' own (``INFO cpu``)
       besides the server's.

    Each load's answer is checked by hand before and after the rounds (the echoed text);
    wrk's non-2xx answers and socket errors must be 0. wrk does not read bodies: in a session
    a JSON-RPC error is answered 200, so those two checks are what shows the answers were
    the echo.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``)
    .venv/bin/python bench/sessions.py --quick    # 2 rounds of 3 s, 200 sessions: ~25 s
    .venv/bin/python bench/sessions.py            # 5 rounds of 5 s, 1,000 sessions: ~1.5 min
    .venv/bin/python bench/sessions.py --rounds 3 --seconds 10 --sessions 2000
    .venv/bin/python bench/sessions.py --store redis   # sessions in Redis (needs redis-server)

    ``--sessions`` is bounded by the server's ``SESSION_LIMIT`` (10,000) and by uvicorn's
    ``--limit-concurrency 2048`` (each open stream holds a connection).

It exits 0 when every load was served without errors and every session answered (a missed
target is a finding, not a failure), and 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

# The standard library's http (bench/ is off the path now: its http.py would shadow it).
import http.client  # noqa: E402

from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    CALL_SYNC,
    LEGACY,
    SERVERS,
    UVICORN_FLAGS,
    Comparison,
    Exchange,
    Load,
    Sample,
    Server,
    free_port,
    median_of,
    prepare_environment,
    provenance,
    round_order,
    run_wrk,
    sampled,
    wrk_script,
)
from bench.memory import rss_kib  # noqa: E402

CONNECTIONS = 32
WARM_UP_SESSIONS = 20
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


def session_headers(session_id: str) -> dict[str, str]:
    """What every request in a session carries after ``initialize``."""
    return {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}


@dataclass(frozen=True)
class SessionExchange(Exchange):
    """The 2025-11-25 ``tools/call`` (no ``_meta``, no Mcp-Method/Mcp-Name), in a session."""

    session_id: str = ""

    def headers(self) -> dict[str, str]:
        return {**super().headers(), **session_headers(self.session_id)}


class Connection:
    """One keep-alive connection to the endpoint, for opening, checking and ending sessions.

    Used for one step at a time and closed after it: uvicorn closes a connection idle for
    5 s, and a request sent on one it closed would fail."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(
        self, method: str, message: dict[str, Any] | None = None, session_id: str | None = None
    ) -> tuple[int, str | None, bytes]:
        """The status, the ``mcp-session-id`` header and the body of one request."""
        headers = {**JSON_HEADERS, **(session_headers(session_id) if session_id else {})}
        body = None if message is None else json.dumps(message).encode()
        self.http.request(method, "/mcp", body=body, headers=headers)
        response = self.http.getresponse()
        return response.status, response.getheader("mcp-session-id"), response.read()

    def open_session(self) -> str:
        """``initialize`` and ``notifications/initialized``: the new session's id."""
        status, session_id, body = self.send("POST", INITIALIZE)
        if status != 200 or not session_id or "result" not in json.loads(body):
            raise RuntimeError(f"initialize answered {status} {session_id!r}: {body[:300]!r}")
        status, _, body = self.send("POST", INITIALIZED, session_id)
        if status != 202:
            raise RuntimeError(f"notifications/initialized answered {status}: {body[:300]!r}")
        return session_id

    def answers_ping(self, session_id: str) -> bool:
        status, _, body = self.send("POST", PING, session_id)
        try:
            return status == 200 and json.loads(body).get("result") == {}
        except ValueError:  # a 200 that is not JSON: no answer either
            return False

    def end(self, session_id: str) -> bool:
        return self.send("DELETE", None, session_id)[0] == 204

    def close(self) -> None:
        self.http.close()


def open_stream(port: int, session_id: str) -> http.client.HTTPConnection:
    """A session's GET stream, held open on its own socket once its first comment is read."""
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    stream.request(
        "GET", "/mcp", headers={"Accept": "text/event-stream", **session_headers(session_id)}
    )
    response = stream.getresponse()
    first = response.read(3) if response.status == 200 else response.read()
    if first != b":\n\n":
        stream.close()
        raise RuntimeError(f"GET answered {response.status}: {first[:300]!r}")
    return stream


class RedisServer:
    """A redis-server of the bench's own (``--store redis``), in the bench's directory."""

    def __init__(self, directory: Path) -> None:
        import redis

        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: apt-get install -y redis-server")
        port = free_port()
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def used_memory(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    def cpu_seconds(self) -> float:
        cpu = self.client.info("cpu")
        return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=10)


def settled_rss_kib(pid: int) -> int:
    """The server's resident set a second after the last step, once its work is done."""
    time.sleep(1.0)
    return rss_kib(pid)


def memory(server: Server, count: int, redis: RedisServer | None) -> tuple[list[str], list[str]]:
    """Open ``count`` sessions, then a stream for each, the resident set read around each
    step (and Redis' memory, with ``--store redis``); every session pinged with its stream
    open. The report's lines and the problems."""
    pid, port = server.process.pid, server.port
    with contextlib.closing(Connection(port)) as warm_up:
        for _ in range(WARM_UP_SESSIONS):
            session_id = warm_up.open_session()
            open_stream(port, session_id).close()
            warm_up.end(session_id)
    before = settled_rss_kib(pid)
    redis_before = redis.used_memory() if redis else 0
    started = time.monotonic()
    with contextlib.closing(Connection(port)) as opener:
        sessions = [opener.open_session() for _ in range(count)]
    opening = time.monotonic() - started
    with_sessions = settled_rss_kib(pid)
    redis_with_sessions = redis.used_memory() if redis else 0
    streams: list[http.client.HTTPConnection] = []
    try:
        started = time.monotonic()
        streams = [open_stream(port, session_id) for session_id in sessions]
        streaming = time.monotonic() - started
        with_streams = settled_rss_kib(pid)
        with contextlib.closing(Connection(port)) as checker:
            lost = sum(not checker.answers_ping(session_id) for session_id in sessions)
    finally:
        for stream in streams:
            stream.close()
    with contextlib.closing(Connection(port)) as ender:
        not_ended = sum(not ender.end(session_id) for session_id in sessions)
    lines = [
        f"memory: VmRSS {before / 1024:.1f} MiB before; {with_sessions / 1024:.1f} MiB with "
        f"{count:,} sessions open ({opening:.1f} s to open): "
        f"{(with_sessions - before) / count:.1f} KiB per open session",
        f"        {with_streams / 1024:.1f} MiB with a GET stream open on each "
        f"({streaming:.1f} s to open): {(with_streams - with_sessions) / count:.1f} KiB per "
        "open GET stream",
        f"        {count - lost:,} of {count:,} sessions answered ping with their stream open; "
        f"{count - not_ended:,} ended with DELETE (204)",
    ]
    if redis:
        lines.insert(
            1,
            f"        Redis used_memory {redis_before / 1024:.0f} KiB before, "
            f"{redis_with_sessions / 1024:.0f} KiB with them: "
            f"{(redis_with_sessions - redis_before) / 1024 / count:.2f} KiB per session in Redis",
        )
    problems = [f"{lost} sessions did not answer ping"] if lost else []
    problems += [f"{not_ended} sessions not ended (DELETE)"] if not_ended else []
    return lines, problems


def throughput(
    server: Server, rounds: int, seconds: float, directory: Path, redis: RedisServer | None
) -> tuple[dict[str, list[Sample]], dict[str, list[float]], list[str]]:
    """Interleaved wrk rounds of both eras' echo; the samples by era, Redis' CPU per request
    by era (with ``--store redis``), and the problems seen."""
    with contextlib.closing(Connection(server.port)) as opener:
        session_id = opener.open_session()
    in_session = SessionExchange("tools/call", "echo", version=LEGACY, session_id=session_id)
    loads = {
        "2026-07-28 stateless": Load("stateless", "ours", CALL_SYNC, CONNECTIONS),
        "2025-11-25 session": Load("session", "ours", in_session, CONNECTIONS),
    }
    scripts = {era: wrk_script(load, directory) for era, load in loads.items()}
    for era, load in loads.items():
        server.check(load.exchange)
        run_wrk(load, server, 1, scripts[era])  # warm-up, not kept
    samples: dict[str, list[Sample]] = {era: [] for era in loads}
    redis_cpu: dict[str, list[float]] = {era: [] for era in loads}
    problems: list[str] = []
    for round_index in range(rounds):
        for era in round_order(list(loads), round_index):
            where = f"round {round_index + 1}/{rounds}  {era:<21}"
            redis_started = redis.cpu_seconds() if redis else 0.0
            sample = sampled(loads[era], server, seconds, scripts[era], where)
            samples[era].append(sample)
            if redis:
                spent = redis.cpu_seconds() - redis_started
                redis_cpu[era].append(spent * 1e6 / max(1, sample.requests))
            if sample.errors or sample.non_2xx:
                problems.append(
                    f"{era} round {round_index + 1}: {sample.non_2xx} non-2xx, "
                    f"{sample.errors} socket errors"
                )
    for era, load in loads.items():
        try:
            server.check(load.exchange)
        except RuntimeError as error:
            problems.append(f"{era} after the rounds: {error}")
    with contextlib.closing(Connection(server.port)) as ender:
        if not ender.end(session_id):
            problems.append("the loads' session was not ended (DELETE)")
    return samples, redis_cpu, problems


COMPARISONS = (
    Comparison(
        "tools/call echo c=32, req/s", "2025-11-25 session", "2026-07-28 stateless", "rps", 0.85
    ),
    Comparison(
        "tools/call echo c=32, CPU per request",
        "2025-11-25 session",
        "2026-07-28 stateless",
        "cpu_us_per_request",
    ),
    Comparison(
        "tools/call echo c=32, p99 latency", "2025-11-25 session", "2026-07-28 stateless", "p99_us"
    ),
)


def throughput_lines(
    samples: dict[str, list[Sample]], redis_cpu: dict[str, list[float]], store: str
) -> list[str]:
    lines = [
        f"{f'ours (uvicorn, 1 worker, sessions in {store}), tools/call echo c=32':<48} "
        f"{'req/s':>9} {'range':>15} {'CPU µs/req':>10} {'p99 ms':>7} {'errors':>6} "
        f"{'other load':>10}"
    ]
    for era, runs in samples.items():
        rates = [run.rps for run in runs]
        lines.append(
            f"{era:<48} {statistics.median(rates):9,.0f} "
            f"{f'{min(rates):,.0f}-{max(rates):,.0f}':>15} "
            f"{median_of(runs, 'cpu_us_per_request'):10.1f} "
            f"{median_of(runs, 'p99_us') / 1000:7.2f} "
            f"{sum(run.errors + run.non_2xx for run in runs):6d} "
            f"{median_of(runs, 'other_load_cores'):8.2f} c"
        )
        if redis_cpu.get(era):
            lines.append(
                f"{'  and Redis CPU µs/req':<48} {statistics.median(redis_cpu[era]):36.1f}"
            )
    lines += ["", f"{'session / stateless':<48} {'ratio':>9} {'per round':>15} {'target':>10}"]
    for comparison in COMPARISONS:
        top, bottom = samples[comparison.numerator], samples[comparison.denominator]
        ratio = median_of(top, comparison.metric) / median_of(bottom, comparison.metric)
        per_round = [
            getattr(a, comparison.metric) / getattr(b, comparison.metric)
            for a, b in zip(top, bottom, strict=True)
        ]
        lines.append(
            f"{comparison.title:<48} {ratio:8.2f}x "
            f"{f'{min(per_round):.2f}-{max(per_round):.2f}x':>15} {comparison.target:>10}  "
            f"{comparison.verdict(ratio)}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3 s, 200 sessions")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 2)")
    parser.add_argument("--seconds", type=float, help="length of one load (default 5; quick 3)")
    parser.add_argument("--sessions", type=int, help="sessions opened (default 1000; quick 200)")
    parser.add_argument(
        "--store",
        choices=("process", "redis"),
        default="process",
        help="where the sessions live: the serving process (default) or a redis-server",
    )
    arguments = parser.parse_args()
    rounds = arguments.rounds or (2 if arguments.quick else 5)
    seconds = arguments.seconds or (3.0 if arguments.quick else 5.0)
    count = arguments.sessions or (200 if arguments.quick else 1000)
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    # A socket per open stream here and in the server, which inherits this limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    header = (
        f"{provenance('sessions.py')}\nuvicorn --workers 1 --http {BOUNDED_HTTP} "
        f"{' '.join(UVICORN_FLAGS)}; wrk -t2 -c{CONNECTIONS} -d{seconds:g}s, {rounds} "
        f"interleaved rounds, medians; {count:,} sessions, held in "
        + ("Redis (SESSION_CACHE)" if arguments.store == "redis" else "the serving process")
    )
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as temporary:
        directory = Path(temporary)
        environment = prepare_environment(directory)
        redis = RedisServer(directory) if arguments.store == "redis" else None
        if redis:
            environment["BENCH_REDIS_URL"] = redis.url
        server = Server(SERVERS["ours"], environment, directory)
        try:
            server.wait_ready()
            memory_lines, problems = memory(server, count, redis)
            print("\n".join(memory_lines), flush=True)
            samples, redis_cpu, load_problems = throughput(
                server, rounds, seconds, directory, redis
            )
        finally:
            server.stop()
            if redis:
                redis.stop()
    problems += load_problems
    report = throughput_lines(samples, redis_cpu, arguments.store)
    print()
    print("\n".join([header, "", *report, "", *memory_lines, ""]))
    print("problems: " + ("; ".join(problems) if problems else "none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
