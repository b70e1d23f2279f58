"""Benchmark: the tasks extension's cost in the request, and a queue of tasks drained by one
worker.

What it measures (issue 17)
    One server of ours, the HTTP bench's ``ours`` (``bench/http.py``'s uvicorn command line,
    ``bench/tasks_settings.py``: ``bench/bench_settings.py``, the sample's settings with
    DEBUG off and ``allow_all``, with ``TASKS["PER_PRINCIPAL"]`` raised so one caller may
    queue them all), on a fresh migrated
    SQLite file (WAL, immediate write transactions: the sample's), or on the database
    ``--database-url`` names (migrated by the bench, which must be empty).

    1. In the request, with no worker running (the tasks only queue): three requests over one
       keep-alive connection, one at a time, in interleaved rounds whose order reverses
       every other round:
       ``plain``  ``tools/call`` ``echo``, the 2026-07-28 call ``bench/http.py`` sends;
       ``create`` ``tools/call`` ``echo_task`` (``bench/benchapp``: the same tool declared
                  ``task = "optional"``) from a client declaring the extension: the
                  ``McpTask`` row committed, the run enqueued (django-tasks-db's row), the
                  ``CreateTaskResult`` answered;
       ``get``    ``tasks/get`` of one task made in the first round.
       Per kind: the median of the rounds' median latencies and the p99 of every request,
       in ms; ratios create / plain and get / plain, from medians in the same run.
    2. Through one worker: the bench makes tasks until ``--queued`` wait (those of step 1
       included), then starts one ``manage.py db_worker --no-reload`` (django-tasks-db,
       polling every 0.1 s) and reads the database every 0.1 s until every task is
       completed: tasks per second, from the worker's log saying it started to the reading
       that found the last one done.
    3. What a worker running several tasks at once buys (``TASKS['WORKER_CONCURRENCY']``,
       a shift): for each of ``wait_task`` (``bench/taskapp``: a sync tool waiting 0.1 s
       with ``time.sleep``), ``wait_task_async`` (the same wait awaited on the event loop)
       and ``echo_task`` (no wait at all), ``--shift-tasks`` tasks queued, then one worker
       started with each concurrency of ``--concurrency`` in turn and timed as in step 2.
       One drain a pair; the order of the concurrencies reverses from one tool to the next.

    Every answer is checked (the echoed text, ``resultType`` ``task``, the polled status);
    at the end every task must be completed with the echoed text, none failed.

How to run (from the repository root, with ``requirements/bench.txt``)
    .venv/bin/python bench/tasks.py --quick       # 3 rounds of 200, 1,000 queued, 100 a shift
    .venv/bin/python bench/tasks.py               # 5 rounds of 500, 10,000 queued, 400 a shift
    .venv/bin/python bench/tasks.py --database-url postgres://user@127.0.0.1:5432/empty_db
    BENCH_DB_MODE=documented .venv/bin/python bench/tasks.py --database-url postgres://...
                                                  # PostgreSQL through docs/deployment.md's pool

It exits 0 when every answer and every task was as it must be, and 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

# The standard library's http (bench/ is off the path now: its http.py would shadow it).
import http.client  # noqa: E402

from bench.http import (  # noqa: E402
    ECHO_TEXT,
    MODERN,
    REPO_ROOT,
    SERVERS,
    Server,
    prepare_environment,
    provenance,
)

EXTENSION = "io.modelcontextprotocol/tasks"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
}
KINDS = ("plain", "create", "get")
POLL_SECONDS = 0.1
SHIFT_TOOLS = ("wait_task", "wait_task_async", "echo_task")
DRAIN_TIMEOUT = 1800.0


def request(method: str, params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}


class Exchange:
    """One request's bytes and headers, built once, and the check its answer must pass."""

    def __init__(self, kind: str, task_id: str = "", tool: str = "echo_task") -> None:
        tasks = {"extensions": {EXTENSION: {}}}
        echo = {"arguments": {"text": ECHO_TEXT}}
        if kind == "plain":
            message, name = request("tools/call", {"name": "echo", **echo}, {}), "echo"
        elif kind == "create":
            message, name = request("tools/call", {"name": tool, **echo}, tasks), tool
        else:
            message, name = request("tasks/get", {"taskId": task_id}, tasks), task_id
        self.kind = kind
        self.body = json.dumps(message, separators=(",", ":")).encode()
        self.headers = {**HEADERS, "Mcp-Method": message["method"], "Mcp-Name": name}

    def check(self, status: int, body: bytes) -> dict[str, Any]:
        answer = json.loads(body) if status == 200 else {}
        result = answer.get("result", {})
        if self.kind == "plain":
            good = result.get("content") == [{"type": "text", "text": ECHO_TEXT}]
        elif self.kind == "create":
            good = result.get("resultType") == "task" and result.get("status") == "working"
        else:
            good = result.get("status") == "working"
        if not good:
            raise RuntimeError(f"{self.kind} answered {status}: {body[:300]!r}")
        return result


class Client:
    """One keep-alive connection, one request at a time."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, exchange: Exchange) -> tuple[float, dict[str, Any]]:
        """The request's latency in seconds, and its checked result."""
        started = time.perf_counter()
        self.http.request("POST", "/mcp", body=exchange.body, headers=exchange.headers)
        response = self.http.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - started
        return elapsed, exchange.check(response.status, body)


def in_the_request(client: Client, rounds: int, per_round: int) -> dict[str, Any]:
    """Step 1: latencies of each kind, in interleaved rounds."""
    exchanges = {"plain": Exchange("plain"), "create": Exchange("create")}
    _, first = client.send(exchanges["create"])
    exchanges["get"] = Exchange("get", first["taskId"])
    for exchange in exchanges.values():  # warm-up: what the first requests import or cache
        for _ in range(50):
            client.send(exchange)
    medians: dict[str, list[float]] = {kind: [] for kind in KINDS}
    every: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for number in range(rounds):
        order = KINDS if number % 2 == 0 else tuple(reversed(KINDS))
        for kind in order:
            times = [client.send(exchanges[kind])[0] for _ in range(per_round)]
            medians[kind].append(statistics.median(times))
            every[kind].extend(times)
    return {
        kind: {
            "median_ms": statistics.median(medians[kind]) * 1000,
            "p99_ms": statistics.quantiles(every[kind], n=100)[98] * 1000,
        }
        for kind in KINDS
    }


def counts(url: str) -> dict[str, int]:
    """The tasks by status, read from the database the server writes."""
    from tests.databases import rows

    query = "SELECT status, count(*) FROM beammcp_django_mcptask GROUP BY status"
    return {status: count for status, count in rows(url, query)}


def results(url: str) -> list[Any]:
    """The distinct results the tasks completed with (one, the echo, when all went well)."""
    from tests.databases import rows

    query = "SELECT DISTINCT result FROM beammcp_django_mcptask"
    return [json.loads(value) if isinstance(value, str) else value for (value,) in rows(url, query)]


def drain(
    env: dict[str, str], client: Client, made: int, log_dir: Path, tool: str = "echo_task"
) -> dict[str, Any]:
    """Make ``made`` tasks of ``tool``, then time one worker (started with ``env``) through
    every task not yet done, from its log saying it started to the reading that found the
    last one done."""
    url = env["DATABASE_URL"]
    create = Exchange("create", tool=tool)
    client.http.close()  # the server closes a connection idle past its keep-alive timeout
    for _ in range(made):
        client.send(create)
    total = sum(counts(url).values())
    log_path = log_dir / f"db_worker-{tool}-{env.get('BENCH_WORKER_CONCURRENCY', '1')}.log"
    log = log_path.open("wb")
    command = [sys.executable, "manage.py", "db_worker", "--no-reload"]
    spawned = time.perf_counter()
    worker = subprocess.Popen(
        [*command, "--interval", "0.1", "--no-startup-delay"],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        while b"Starting worker" not in log_path.read_bytes():
            if worker.poll() is not None or time.perf_counter() - spawned > 60:
                raise RuntimeError(f"the worker did not start: {log_path.read_bytes()[-500:]!r}")
            time.sleep(0.01)
        started = time.perf_counter()
        while True:
            now = counts(url)
            if now.get("completed", 0) + now.get("failed", 0) >= total:
                break
            if worker.poll() is not None or time.perf_counter() - started > DRAIN_TIMEOUT:
                raise RuntimeError(f"the worker stopped or stalled at {now}")
            time.sleep(POLL_SECONDS)
        seconds = time.perf_counter() - started
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        log.close()
    return {"tasks": total, "seconds": seconds, "statuses": now, "results": results(url)}


def shifts(
    env: dict[str, str], client: Client, per_drain: int, levels: list[int], log_dir: Path
) -> dict[tuple[str, int], float]:
    """Step 3: tasks a second through one worker, per tool and concurrency."""
    rates: dict[tuple[str, int], float] = {}
    for number, tool in enumerate(SHIFT_TOOLS):
        for level in levels if number % 2 == 0 else list(reversed(levels)):
            drained = drain(
                {**env, "BENCH_WORKER_CONCURRENCY": str(level)}, client, per_drain, log_dir, tool
            )
            if set(drained["statuses"]) != {"completed"}:
                raise RuntimeError(f"{tool} at {level}: {drained['statuses']}")
            rates[tool, level] = per_drain / drained["seconds"]
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 200, 1,000 queued")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--per-round", type=int, default=None)
    parser.add_argument("--queued", type=int, default=None)
    parser.add_argument("--shift-tasks", type=int, default=None, help="tasks a shift drains")
    parser.add_argument("--concurrency", default="1,4,16", help="WORKER_CONCURRENCY values")
    parser.add_argument("--database-url", default=None, help="an empty database (SQLite file)")
    options = parser.parse_args()
    rounds = options.rounds or (3 if options.quick else 5)
    per_round = options.per_round or (200 if options.quick else 500)
    queued = options.queued or (1_000 if options.quick else 10_000)
    per_drain = options.shift_tasks or (100 if options.quick else 400)
    levels = [int(level) for level in options.concurrency.split(",")]

    print(provenance("tasks.py"))
    with tempfile.TemporaryDirectory(prefix="bench-tasks-") as scratch:
        directory = Path(scratch)
        env = prepare_environment(directory)
        env["DJANGO_SETTINGS_MODULE"] = "bench.tasks_settings"
        if options.database_url:
            env["DATABASE_URL"] = options.database_url
            migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
            subprocess.run(migrate, cwd=REPO_ROOT, env=env, check=True, timeout=180)
        server = Server(SERVERS["ours"], env, directory)
        try:
            server.wait_ready()
            client = Client(server.port)
            latencies = in_the_request(client, rounds, per_round)
            drained = drain(
                env, client, queued - sum(counts(env["DATABASE_URL"]).values()), directory
            )
            rates = shifts(env, client, per_drain, levels, directory)
        finally:
            server.stop()

    print(f"\nin the request: {rounds} rounds of {per_round} of each, one keep-alive connection")
    print(f"{'request':<8} {'median ms':>10} {'p99 ms':>8} {'x plain':>8}")
    plain = latencies["plain"]["median_ms"]
    for kind in KINDS:
        figures = latencies[kind]
        ratio = figures["median_ms"] / plain
        print(f"{kind:<8} {figures['median_ms']:>10.3f} {figures['p99_ms']:>8.3f} {ratio:>7.2f}x")
    rate = drained["tasks"] / drained["seconds"]
    print(
        f"\none worker: {drained['tasks']} queued tasks done in {drained['seconds']:.1f} s "
        f"({rate:.0f} tasks/s), statuses {drained['statuses']}"
    )
    print(f"\none worker, {per_drain} tasks a drain: tasks/s by WORKER_CONCURRENCY")
    print(f"{'tool':<16}" + "".join(f"{level:>9}" for level in levels))
    for tool in SHIFT_TOOLS:
        print(f"{tool:<16}" + "".join(f"{rates[tool, level]:>9.1f}" for level in levels))
    echoed = [{"content": [{"type": "text", "text": ECHO_TEXT}], "resultType": "complete"}]
    good = drained["statuses"] == {"completed": drained["tasks"]} and drained["results"] == echoed
    if not good:
        print(f"FAILED: not every task completed with the echoed text: {drained['results']}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
