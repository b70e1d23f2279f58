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
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

import http.client  # noqa: E402  (bench/http.py would shadow it from bench/)

from bench.bearer import environment  # noqa: E402
from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    MODERN,
    SERVERS,
    UVICORN_FLAGS,
    Server,
    json_from_module,
    provenance,
)

HIDDEN = "delete_observation"
UNKNOWN = "remove_observation"
WARM_UP = 200
TOLERANCE = 0.05


def request(name: str, token: str) -> tuple[bytes, dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {"id": 1},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "Authorization": f"Bearer {token}",
    }
    return json.dumps(body, separators=(",", ":")).encode(), headers


class Caller:
    """One keep-alive connection; each call timed from send to the last byte of the body."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.prepared = {name: request(name, token) for name in (HIDDEN, UNKNOWN)}
        self.answers: dict[str, set[tuple[int, bytes]]] = {HIDDEN: set(), UNKNOWN: set()}

    def call(self, name: str) -> float:
        body, headers = self.prepared[name]
        started = time.perf_counter()
        self.connection.request("POST", "/mcp", body, headers)
        response = self.connection.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - started
        # The answer with the name swapped out: hidden and unknown must leave the same.
        self.answers[name].add((response.status, data.replace(name.encode(), b"<name>")))
        return elapsed

    def problems(self) -> list[str]:
        hidden, unknown = self.answers[HIDDEN], self.answers[UNKNOWN]
        if len(hidden) == 1 and hidden == unknown:
            return []
        return [f"the answers differ: hidden {sorted(hidden)!r}, unknown {sorted(unknown)!r}"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def spread(times: list[float]) -> str:
    """The median, and the 10th to 90th percentiles, in ms."""
    low, high = percentile(times, 0.1) * 1e3, percentile(times, 0.9) * 1e3
    return f"{statistics.median(times) * 1e3:7.3f} ({low:.3f}-{high:.3f})"


def one_round(caller: Caller, calls: int, rng: random.Random) -> dict[str, list[float]]:
    order = [HIDDEN] * calls + [UNKNOWN] * calls
    rng.shuffle(order)
    times: dict[str, list[float]] = {HIDDEN: [], UNKNOWN: []}
    for name in order:
        times[name].append(caller.call(name))
    return times


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
    rng = random.Random(arguments.seed)
    lines = [
        f"{'round':<6} {'hidden ms (p10-p90)':>22} {'unknown ms (p10-p90)':>22} "
        f"{'hidden/unknown':>15}  verdict"
    ]
    ratios = []
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
            caller = Caller(server.port, token)
            for _ in range(WARM_UP):
                caller.call(HIDDEN)
                caller.call(UNKNOWN)
            for index in range(arguments.rounds):
                times = one_round(caller, arguments.calls, rng)
                hidden, unknown = times[HIDDEN], times[UNKNOWN]
                ratio = statistics.median(hidden) / statistics.median(unknown)
                ratios.append(ratio)
                verdict = "same" if abs(ratio - 1) <= TOLERANCE else "DIFFERS"
                columns = " ".join(spread(kept).rjust(22) for kept in (hidden, unknown))
                lines.append(f"{index + 1:<6} {columns} {ratio:14.3f}x  {verdict}")
                print(lines[-1], flush=True)
            problems = caller.problems()
        finally:
            server.stop()
    held = all(abs(ratio - 1) <= TOLERANCE for ratio in ratios)
    print()
    print("\n".join([header, "", *lines, ""]))
    print(
        f"every round within 1.00 ± {TOLERANCE:.2f}: {'yes' if held else 'NO'} "
        f"(ratios {min(ratios):.3f}-{max(ratios):.3f})"
    )
    print("problems: " + ("; ".join(problems) if problems else "none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
