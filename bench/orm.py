"""Benchmark: the sample's ``record_observation`` (one ORM insert in a host worker thread)
on SQLite and on PostgreSQL with three ways of handling connections, in one run.

What it measures (issue 12, item 7)
    Four real servers, each ``uvicorn sample_project.asgi:application`` with one worker and
    ``bench/http.py``'s flags (``--loop uvloop --http httptools --no-access-log``), settings
    ``bench/orm_settings.py`` (the bench's production-like sample: DEBUG off, the connectome
    observed), each on a fresh migrated database of its own:

    - ``sqlite``: the sample's default, a SQLite file (the baseline);
    - ``pg-max-age-0``: PostgreSQL with Django's default ``CONN_MAX_AGE`` 0, a connection
      opened and closed around every host call;
    - ``pg-persistent``: ``CONN_MAX_AGE`` 600 with ``CONN_HEALTH_CHECKS``, a connection kept
      by each host worker thread;
    - ``pg-documented``: the ``DATABASES`` block of docs/deployment.md, as written
      (Django's psycopg pool).

    wrk (Debian's) sends the same 2026-07-28 ``tools/call record_observation`` POST (the
    headers and ``_meta`` a client sends) at each concurrency, rounds interleaved (the order
    reverses every other round), figures the median over rounds. Every server answers one
    call checked by hand before and after; after the run, each database must hold at least
    one row per answered call (a 200 carrying a JSON-RPC error would write none), or the run
    exits 1. For each PostgreSQL database the run also prints the sessions PostgreSQL opened
    for it over the run (``pg_stat_database.sessions``): what each setting costs the server.

    The PostgreSQL server is the test suite's (``tests/postgres.sh``: Debian's package, its
    default durable configuration, on this machine); it and wrk share the machine's cores
    with uvicorn, so ratios, not absolute figures, are the result.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``)
    . tests/postgres.sh && start_postgres && .venv/bin/python bench/orm.py
    .venv/bin/python bench/orm.py --postgres postgres://USER:PASSWORD@HOST:PORT/NAME
    .venv/bin/python bench/orm.py --rounds 3 --seconds 3 --connections 1,16

The role in the URL needs CREATEDB (the run creates and drops its databases).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script, this folder would come first on the path, where bench/http.py shadows
# the standard library's http: the repository root goes there instead.
REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [
    str(REPO_ROOT),
    *(p for p in sys.path if Path(p or ".").resolve() != REPO_ROOT / "bench"),
]

from bench.http import (  # noqa: E402
    Exchange,
    Load,
    Sample,
    Server,
    ServerSpec,
    prepare_environment,
    provenance,
    round_order,
    run_wrk,
    sampled,
    wrk_script,
)
from tests.databases import (  # noqa: E402
    create_postgres_database,
    drop_created_databases,
    rows,
    sessions_opened,
    wait_for_no_sessions,
)
from tests.support import manage  # noqa: E402

ARGUMENTS = {"city": "oslo", "temperature_c": 12.5}
ANSWER = "Recorded 12.5 °C for Oslo."
APP = "sample_project.asgi:application"
MODES = {
    "sqlite": ("as-is", "SQLite (the sample's default)"),
    "pg-max-age-0": ("as-is", "PostgreSQL, CONN_MAX_AGE=0"),
    "pg-persistent": ("persistent", "PostgreSQL, CONN_MAX_AGE=600 + health checks"),
    "pg-documented": ("documented", "PostgreSQL, the documented pool"),
}


@dataclass(frozen=True)
class RecordObservation(Exchange):
    """``tools/call record_observation``; its answer must name the reading it stored."""

    def message(self) -> dict:
        message = super().message()
        message["params"]["arguments"] = dict(ARGUMENTS)
        return message

    def problem(self, status: int, body: bytes) -> str | None:
        try:
            result = json.loads(body).get("result") or {}
        except (ValueError, AttributeError):
            result = {}
        stored = result.get("content") == [{"type": "text", "text": ANSWER}]
        if status == 200 and stored and not result.get("isError"):
            return None
        return f"status {status}, not the recorded reading: {body[:300]!r}"


RECORD = RecordObservation("tools/call", "record_observation")


def environments(postgres: str, directory: Path) -> dict[str, dict[str, str]]:
    """Each mode's server environment, its database fresh and migrated."""
    base = prepare_environment(directory)  # bench settings on a migrated SQLite file
    found = {}
    for key, (mode, _) in MODES.items():
        env = {**base, "DJANGO_SETTINGS_MODULE": "bench.orm_settings", "BENCH_DB_MODE": mode}
        if key != "sqlite":
            env["DATABASE_URL"] = create_postgres_database(postgres)
            manage(env, "migrate", "--noinput", "-v", "0")
        found[key] = env
    return found


def measure(
    postgres: str, connections: list[int], rounds: int, seconds: float, directory: Path
) -> tuple[dict[tuple[str, int], list[Sample]], dict[str, int], dict[str, int], list[str]]:
    """Interleaved rounds of every mode at every concurrency: the samples, the calls each
    server answered, the sessions PostgreSQL opened for each of its modes, and the problems
    seen."""
    problems: list[str] = []
    envs = environments(postgres, directory)
    loads = [(key, c) for c in connections for key in MODES]
    samples: dict[tuple[str, int], list[Sample]] = {load: [] for load in loads}
    scripts = {
        (key, c): wrk_script(Load(f"{key}-c{c}", key, RECORD, c), directory) for key, c in loads
    }
    servers = {
        key: Server(ServerSpec(key, label, APP), envs[key], directory)
        for key, (_, label) in MODES.items()
    }
    calls = dict.fromkeys(MODES, 0)
    opened: dict[str, int] = {}
    try:
        for server in servers.values():
            server.wait_ready()
        for key, server in servers.items():
            server.check(RECORD)
            calls[key] += 1
            if key != "sqlite":
                opened[key] = sessions_opened(envs[key]["DATABASE_URL"])
        for key, c in loads:  # warm-up, not kept
            calls[key] += run_wrk(
                Load(f"{key}-c{c}", key, RECORD, c), servers[key], 1, scripts[key, c]
            ).requests
        for round_index in range(rounds):
            for key, c in round_order(loads, round_index):
                load = Load(f"{key}-c{c}", key, RECORD, c)
                where = f"round {round_index + 1}/{rounds}  {key:<14} c={c:<3}"
                sample = sampled(load, servers[key], seconds, scripts[key, c], where)
                samples[key, c].append(sample)
                calls[key] += sample.requests
                if sample.errors or sample.non_2xx:
                    problems.append(f"{where}: {sample.non_2xx} non-2xx, {sample.errors} errors")
        for key, server in servers.items():
            try:
                server.check(RECORD)
                calls[key] += 1
            except RuntimeError as error:
                problems.append(f"after the run: {error}")
    finally:
        for server in servers.values():
            server.stop()
    sessions = {}
    for key in opened:  # read once every backend has ended, its figures flushed
        url = envs[key]["DATABASE_URL"]
        wait_for_no_sessions(url)
        sessions[key] = sessions_opened(url) - opened[key]
    for key, env in envs.items():
        ((stored,),) = rows(env["DATABASE_URL"], "SELECT COUNT(*) FROM demo_observation")
        if stored < calls[key]:
            problems.append(f"{key}: {calls[key]} calls answered, {stored} rows stored")
    return samples, calls, sessions, problems


def report(
    samples: dict[tuple[str, int], list[Sample]],
    calls: dict[str, int],
    sessions: dict[str, int],
    problems: list[str],
    header: str,
) -> str:
    lines = [header, ""]
    lines.append(
        f"{'server':<48} {'c':>3} {'calls/s':>8} {'range':>13} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'CPU µs/call':>11} {'x SQLite':>8} {'x max-age-0':>11} {'sessions':>9}"
    )
    for (key, c), runs in samples.items():
        rate = statistics.median(run.rps for run in runs)
        spread = f"{min(r.rps for r in runs):,.0f}-{max(r.rps for r in runs):,.0f}"
        baseline = statistics.median(run.rps for run in samples["sqlite", c])
        pg_baseline = statistics.median(run.rps for run in samples["pg-max-age-0", c])
        opened = f"{sessions[key]:9,d}" if key in sessions else f"{'':>9}"
        lines.append(
            f"{MODES[key][1]:<48} {c:>3} {rate:8,.0f} {spread:>13} "
            f"{statistics.median(r.p50_us for r in runs) / 1000:7.2f} "
            f"{statistics.median(r.p99_us for r in runs) / 1000:7.2f} "
            f"{statistics.median(r.cpu_us_per_request for r in runs):11.0f} "
            f"{rate / baseline:7.2f}x {rate / pg_baseline:10.2f}x {opened}"
        )
    lines += [
        "",
        "sessions: PostgreSQL sessions opened for the server's database over the whole run, "
        f"against calls answered: {', '.join(f'{k} {n:,}' for k, n in calls.items())}",
        "problems: " + ("; ".join(problems) if problems else "none"),
    ]
    return "\n".join(lines)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--postgres",
        default=os.environ.get("BEAMMCP_TEST_POSTGRES_URL"),
        help="a PostgreSQL URL whose role has CREATEDB (default: BEAMMCP_TEST_POSTGRES_URL)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=5.0, help="one load (default 5 s)")
    parser.add_argument(
        "--connections", default="1,16", help="wrk concurrencies, comma-separated (1,16)"
    )
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    if not arguments.postgres:
        print(
            "no PostgreSQL: . tests/postgres.sh && start_postgres, or --postgres URL",
            file=sys.stderr,
        )
        return 1
    connections = [int(value) for value in arguments.connections.split(",")]
    estimate = len(MODES) * len(connections) * (arguments.rounds * arguments.seconds + 1) + 30
    loads = len(MODES) * len(connections)
    print(f"{loads} loads x {arguments.rounds} rounds: ~{estimate / 60:.1f} min")
    header = (
        f"{provenance('orm.py')}\nuvicorn sample_project.asgi:application --workers 1 --loop "
        f"uvloop --http httptools --no-access-log; wrk -d{arguments.seconds:g}s, "
        f"{arguments.rounds} interleaved rounds, medians; tools/call record_observation"
    )
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-orm-") as temporary:
            samples, calls, sessions, problems = measure(
                arguments.postgres,
                connections,
                arguments.rounds,
                arguments.seconds,
                Path(temporary),
            )
    finally:
        drop_created_databases()
    print()
    print(report(samples, calls, sessions, problems, header))
    print(f"\n(run took {time.monotonic() - started:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
