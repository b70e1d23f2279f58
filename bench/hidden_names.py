"""Benchmark: a hidden tool's name against an unknown one, answered at the same cost.

What it measures (issue 32, item 2)
    A caller whose gates hide ``delete_observation`` must learn nothing from calling it: the
    answer is an unknown tool's, byte for byte but the name, and it must take as long. From
    outside (2026-12-06) it did not: p10 0.54 to 0.65 ms hidden against 0.42 to 0.43 ms
    unknown, because the gate ran only for a name that exists.

    One server, started as ``bench/bearer.py`` starts its bearer one (``bench/http.py``'s
    uvicorn command line, ``bench/bearer_settings.py`` with ``BENCH_AUTH=bearer``, a fresh
    migrated SQLite file): a resource server validating django-oauth-toolkit tokens, whose
    user (``bench``, minted by ``bench/bearer_hook.py``) holds no permission, so the sample's
    ``delete_observation`` is hidden from it. One keep-alive connection sends stateless
    2026-07-28 ``tools/call`` requests naming ``delete_observation`` (hidden) or
    ``remove_observation`` (unknown: the same length), shuffled, each timed from send to the
    last byte read. Per round: the median, p10 and p90 of each name, and the ratio of the
    medians (hidden / unknown); the target is 1.00 ± 0.05 in every round. Every answer is
    checked: the same status, and the same bytes once the name is swapped.

How to run (from the repository root; needs ``requirements/bench.txt``)
    .venv/bin/python bench/hidden_names.py               # 5 rounds of 1,000 calls each: ~1 min
    .venv/bin/python bench/hidden_names.py --rounds 7 --calls 2000

It exits 0 when every answer was the expected one (a missed target is a finding, not a
failure) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench.bearer import environment  # noqa: E402
from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    SERVERS,
    UVICORN_FLAGS,
    Server,
    json_from_module,
    provenance,
)
from bench.same_cost import PairedCaller, Side, measure, report, stateless_call  # noqa: E402

HIDDEN = "delete_observation"
UNKNOWN = "remove_observation"


def side(label: str, name: str, token: str) -> Side:
    headers = {"Authorization": f"Bearer {token}"}
    return Side(label, stateless_call(name, {"id": 1}, headers), name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--calls", type=int, default=1000, help="calls of each name per round")
    parser.add_argument("--seed", type=int, default=32, help="the shuffle's seed")
    arguments = parser.parse_args()
    header = (
        f"{provenance('hidden_names.py')}\nuvicorn --workers 1 --http {BOUNDED_HTTP} "
        f"{' '.join(UVICORN_FLAGS)}; one keep-alive connection, {arguments.rounds} rounds of "
        f"{arguments.calls} calls of each name, shuffled; django-oauth-toolkit token, warm cache"
    )
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-hidden-") as temporary:
        directory = Path(temporary)
        env = environment(directory)
        token = json_from_module("bench.bearer_hook", ["mint"], env, 60)["token"]
        spec = replace(
            SERVERS["ours"],
            key="bearer",
            label="ours, bearer tokens",
            environment=(("BENCH_AUTH", "bearer"),),
        )
        server = Server(spec, env, directory)
        try:
            server.wait_ready()
            pair = (side("hidden", HIDDEN, token), side("unknown", UNKNOWN, token))
            caller = PairedCaller(server.port, pair)
            lines, _ = measure(caller, arguments.rounds, arguments.calls, arguments.seed)
            problems = caller.problems(lambda body: True)
        finally:
            server.stop()
    return report(header, lines, problems)


if __name__ == "__main__":
    sys.exit(main())
