"""What the "no oracle" benchmarks share: two requests that must be answered alike, timed.

``bench/hidden_names.py`` (a hidden tool against an unknown one) and ``bench/handles.py``
(another principal's handle against a made-up id) ask the same question of a real uvicorn
worker: does anything, bytes or time, tell the two apart? Each names its pair; this module
sends them shuffled on one keep-alive connection, each timed from send to the last byte read,
checks that the answers are one once the word that differs is swapped out, and reports the
median, p10 and p90 of each and the ratio of the medians per round (target 1.00 ± 0.05).
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from bench.http import MODERN

WARM_UP = 200
TOLERANCE = 0.05


def stateless_call(tool: str, arguments: dict, headers: dict[str, str]) -> tuple[bytes, dict]:
    """A 2026-07-28 ``tools/call`` with its routing headers, plus the caller's ``headers``."""
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
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        **headers,
    }
    return json.dumps(body, separators=(",", ":")).encode(), sent


def post_once(port: int, request: tuple[bytes, dict]) -> tuple[int, bytes]:
    """One request on a connection of its own (a set-up step, never timed)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/mcp", *request)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@dataclass(frozen=True)
class Side:
    """One of the pair: its column's label, its request, and the word its answer may carry
    that the other's does not (swapped out before the answers are compared)."""

    label: str
    request: tuple[bytes, dict]
    word: str


class PairedCaller:
    """One keep-alive connection sending either side of a pair, keeping every answer seen."""

    def __init__(self, port: int, sides: tuple[Side, Side]) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.sides = sides
        self.answers: dict[str, set[tuple[int, bytes]]] = {side.label: set() for side in sides}

    def call(self, side: Side) -> float:
        body, headers = side.request
        started = time.perf_counter()
        self.connection.request("POST", "/mcp", body, headers)
        response = self.connection.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - started
        self.answers[side.label].add((response.status, data.replace(side.word.encode(), b"<>")))
        return elapsed

    def problems(self, expected: Callable[[bytes], bool]) -> list[str]:
        """Empty when each side had one answer, the same, and ``expected`` of its body."""
        first, second = (self.answers[side.label] for side in self.sides)
        if len(first) == 1 and first == second and expected(next(iter(first))[1]):
            return []
        labels = [side.label for side in self.sides]
        return [
            f"the answers differ: {labels[0]} {sorted(first)!r}, {labels[1]} {sorted(second)!r}"
        ]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def spread(times: list[float]) -> str:
    """The median, and the 10th to 90th percentiles, in ms."""
    low, high = percentile(times, 0.1) * 1e3, percentile(times, 0.9) * 1e3
    return f"{statistics.median(times) * 1e3:7.3f} ({low:.3f}-{high:.3f})"


def measure(caller: PairedCaller, rounds: int, calls: int, seed: int) -> tuple[list[str], bool]:
    """Warm up, then ``rounds`` rounds of ``calls`` of each side, shuffled; the table's lines
    (printed as they come) and whether every round's ratio of medians was within tolerance."""
    first, second = caller.sides
    ratio_label = f"{first.label}/{second.label}"
    width = max(len(ratio_label), 8) + 1
    lines = [
        f"{'round':<6} {first.label + ' ms (p10-p90)':>22} {second.label + ' ms (p10-p90)':>22} "
        f"{ratio_label:>{width}}  verdict"
    ]
    for _ in range(WARM_UP):
        caller.call(first)
        caller.call(second)
    rng = random.Random(seed)
    ratios = []
    for index in range(rounds):
        order = [first] * calls + [second] * calls
        rng.shuffle(order)
        times: dict[str, list[float]] = {first.label: [], second.label: []}
        for side in order:
            times[side.label].append(caller.call(side))
        kept = (times[first.label], times[second.label])
        ratio = statistics.median(kept[0]) / statistics.median(kept[1])
        ratios.append(ratio)
        verdict = "same" if abs(ratio - 1) <= TOLERANCE else "DIFFERS"
        columns = " ".join(spread(values).rjust(22) for values in kept)
        lines.append(f"{index + 1:<6} {columns} {ratio:{width - 1}.3f}x  {verdict}")
        print(lines[-1], flush=True)
    held = all(abs(ratio - 1) <= TOLERANCE for ratio in ratios)
    lines += [
        "",
        f"every round within 1.00 ± {TOLERANCE:.2f}: {'yes' if held else 'NO'} "
        f"(ratios {min(ratios):.3f}-{max(ratios):.3f})",
    ]
    return lines, held


def report(header: str, lines: list[str], problems: list[str]) -> int:
    """Print the whole table again under its header; 1 when an answer was not the expected."""
    print()
    print("\n".join([header, "", *lines]))
    print("problems: " + ("; ".join(problems) if problems else "none"))
    return 1 if problems else 0
