"""Benchmark: another principal's handle against a made-up id, answered at the same cost.

What it measures (issue 40)
    A caller who presents a handle minted by someone else must learn nothing: the answer is a
    made-up id's, byte for byte (the tool error names the kind, never the id), and it must take
    as long. One server, started as ``bench/hidden_names.py`` starts its own (``bench/http.py``'s
    uvicorn command line, ``bench/handles_settings.py``, a fresh migrated SQLite file), whose
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

from bench.hidden_names import spread  # noqa: E402
from bench.http import (  # noqa: E402
    BOUNDED_HTTP,
    MODERN,
    SERVERS,
    UVICORN_FLAGS,
    Server,
    prepare_environment,
    provenance,
)

WARM_UP = 200
TOLERANCE = 0.05
MADE_UP = "bwl_" + "M" * 32
KINDS = ("another's", "made up")


def request(tool: str, arguments: dict, principal: str) -> tuple[bytes, dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
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
        "Mcp-Name": tool,
        "X-Bench-Principal": principal,
    }
    return json.dumps(body, separators=(",", ":")).encode(), headers


class Caller:
    """One keep-alive connection; each call timed from send to the last byte of the body."""

    def __init__(self, port: int, principal: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.principal = principal
        self.prepared: dict[str, tuple[bytes, dict[str, str]]] = {}
        self.ids: dict[str, str] = {}
        self.answers: dict[str, set[tuple[int, bytes]]] = {kind: set() for kind in KINDS}

    def send(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        self.connection.request("POST", "/mcp", body, headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    def mint(self) -> str:
        status, data = self.send(*request("bench_create_watch_list", {}, self.principal))
        assert status == 200, data
        return json.loads(data)["result"]["content"][0]["text"]

    def aim(self, kind: str, handle_id: str) -> None:
        self.ids[kind] = handle_id
        arguments = {"watch_list_id": handle_id}
        self.prepared[kind] = request("bench_read_watch_list", arguments, self.principal)

    def call(self, kind: str) -> float:
        started = time.perf_counter()
        status, data = self.send(*self.prepared[kind])
        elapsed = time.perf_counter() - started
        # The answer with the id swapped out: another's and a made-up one must leave the same.
        self.answers[kind].add((status, data.replace(self.ids[kind].encode(), b"<id>")))
        return elapsed

    def problems(self) -> list[str]:
        theirs, made_up = (self.answers[kind] for kind in KINDS)
        if len(theirs) == 1 and theirs == made_up and b'"isError":true' in next(iter(theirs))[1]:
            return []
        return [f"the answers differ: another's {sorted(theirs)!r}, made up {sorted(made_up)!r}"]


def one_round(caller: Caller, calls: int, rng: random.Random) -> dict[str, list[float]]:
    order = [kind for kind in KINDS for _ in range(calls)]
    rng.shuffle(order)
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for kind in order:
        times[kind].append(caller.call(kind))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--calls", type=int, default=1000, help="calls of each id per round")
    parser.add_argument("--seed", type=int, default=40, help="the shuffle's seed")
    arguments = parser.parse_args()
    header = (
        f"{provenance('handles.py')}\nuvicorn --workers 1 --http {BOUNDED_HTTP} "
        f"{' '.join(UVICORN_FLAGS)}; one keep-alive connection, {arguments.rounds} rounds of "
        f"{arguments.calls} calls of each id, shuffled; handles on SQLite"
    )
    print(header, flush=True)
    rng = random.Random(arguments.seed)
    lines = [
        f"{'round':<6} {'another s ms (p10-p90)':>22} {'made up ms (p10-p90)':>22} "
        f"{'another/made up':>16}  verdict"
    ]
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-handles-") as temporary:
        directory = Path(temporary)
        env = {**prepare_environment(directory), "DJANGO_SETTINGS_MODULE": "bench.handles_settings"}
        spec = replace(SERVERS["ours"], key="handles", label="ours, handles")
        server = Server(spec, env, directory)
        try:
            server.wait_ready()
            owned = Caller(server.port, "owner").mint()
            caller = Caller(server.port, "someone-else")
            caller.aim(KINDS[0], owned)
            caller.aim(KINDS[1], MADE_UP)
            for _ in range(WARM_UP):
                for kind in KINDS:
                    caller.call(kind)
            for index in range(arguments.rounds):
                times = one_round(caller, arguments.calls, rng)
                theirs, made_up = (times[kind] for kind in KINDS)
                ratio = statistics.median(theirs) / statistics.median(made_up)
                ratios.append(ratio)
                verdict = "same" if abs(ratio - 1) <= TOLERANCE else "DIFFERS"
                columns = " ".join(spread(kept).rjust(22) for kept in (theirs, made_up))
                lines.append(f"{index + 1:<6} {columns} {ratio:15.3f}x  {verdict}")
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
