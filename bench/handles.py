"""Benchmark: another principal's handle against a made-up id, answered at the same cost.

What it measures (issue 40)
    A caller who presents a handle minted by someone else must learn nothing: the answer is a
    made-up id's, byte for byte (the tool error names the kind, never the id), and it must take
    as long. One server, started as ``bench/hidden_names.py`` starts its own (``bench/http.py``'s
    uvicorn command line, ``bench/handles_settings.py``, a fresh migrated SQLite file, or a
    fresh PostgreSQL database with ``--postgres``), whose
    ``AUTHORIZE`` names the caller from a header. The owner mints a watch list; then one
    keep-alive connection sends, as another principal, stateless 2026-07-28 ``tools/call``
    requests of ``bench_read_watch_list`` naming the owner's id (another's) or an id of the
    same shape nobody minted (made up), shuffled, each timed from send to the last byte read.
    Per round: the median, p10 and p90 of each, and the ratio of the medians (another's / made
    up); the target is 1.00 ± 0.05 in every round. Every answer is checked: the same status
    and the same bytes once the id is swapped.

How to run (from the repository root; needs ``requirements/bench.txt``)
    .venv/bin/python bench/handles.py               # 5 rounds of 1,000 calls each: ~1 min
    .venv/bin/python bench/handles.py --rounds 7 --calls 2000
    . tests/postgres.sh && start_postgres && \
        .venv/bin/python bench/handles.py --postgres "$BEAMMCP_TEST_POSTGRES_URL"

It exits 0 when every answer was the expected one (a missed target is a finding, not a
failure) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    SERVERS,
    UVICORN_FLAGS,
    Server,
    prepare_environment,
    provenance,
)
from bench.same_cost import (  # noqa: E402
    PairedCaller,
    Side,
    measure,
    post_once,
    report,
    stateless_call,
)
from tests.databases import create_postgres_database, drop_created_databases  # noqa: E402
from tests.support import manage  # noqa: E402

MADE_UP = "bwl_" + "M" * 32
READ = "bench_read_watch_list"


def mint(port: int, principal: str) -> str:
    """A watch list minted by ``principal``: its id."""
    headers = {"X-Bench-Principal": principal}
    status, data = post_once(port, stateless_call("bench_create_watch_list", {}, headers))
    assert status == 200, data
    return json.loads(data)["result"]["content"][0]["text"]


def side(label: str, handle_id: str) -> Side:
    headers = {"X-Bench-Principal": "someone-else"}
    return Side(label, stateless_call(READ, {"watch_list_id": handle_id}, headers), handle_id)


def environment(directory: Path, postgres: str | None) -> dict[str, str]:
    """The server's environment: the handles' settings on a fresh migrated database."""
    env = {**prepare_environment(directory), "DJANGO_SETTINGS_MODULE": "bench.handles_settings"}
    if postgres:
        env["DATABASE_URL"] = create_postgres_database(postgres)
        manage(env, "migrate", "--noinput", "-v", "0")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--calls", type=int, default=1000, help="calls of each id per round")
    parser.add_argument("--seed", type=int, default=40, help="the shuffle's seed")
    parser.add_argument(
        "--postgres", help="a PostgreSQL URL whose role has CREATEDB (default: SQLite)"
    )
    arguments = parser.parse_args()
    header = (
        f"{provenance('handles.py')}\nuvicorn --workers 1 --http {BOUNDED_HTTP} "
        f"{' '.join(UVICORN_FLAGS)}; one keep-alive connection, {arguments.rounds} rounds of "
        f"{arguments.calls} calls of each id, shuffled; handles on "
        f"{'PostgreSQL' if arguments.postgres else 'SQLite'}"
    )
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-handles-") as temporary:
        directory = Path(temporary)
        spec = replace(SERVERS["ours"], key="handles", label="ours, handles")
        server = Server(spec, environment(directory, arguments.postgres), directory)
        try:
            server.wait_ready()
            pair = (side("another's", mint(server.port, "owner")), side("made up", MADE_UP))
            caller = PairedCaller(server.port, pair)
            lines, _ = measure(caller, arguments.rounds, arguments.calls, arguments.seed)
            problems = caller.problems(lambda body: b'"isError":true' in body)
        finally:
            server.stop()
            drop_created_databases()
    return report(header, lines, problems)


if __name__ == "__main__":
    sys.exit(main())
