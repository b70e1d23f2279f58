"""Benchmark: the cyclic garbage collector's pauses while our endpoint serves, with and
without ``FREEZE_HEAP_AT_STARTUP``.

What it measures
    The same in-process load as ``bench/instructions.py`` (the sample's endpoint, 32
    concurrent callers sending ``tools/call``; ``echo_async`` by default: driven in-process,
    the sync ``echo``'s allocations and frees balance so closely that the collector hardly
    runs, unlike under a real server), in two fresh processes: one with the
    sample's ``FREEZE_HEAP_AT_STARTUP`` (``gc.freeze()`` after the server is built), one
    without (``BENCH_FREEZE=0``). ``gc.callbacks`` times every collection. It prints the
    objects the collector tracks when the load starts (and how many are frozen), then per
    generation: collections per 1,000 requests and the mean and longest pause. A full
    (generation 2) collection walks every tracked object, and the loop answers nobody while
    it runs: what the freeze is for (docs/performance.md).

How to run (from the repository root; under a minute)
    .venv/bin/python bench/gc_pauses.py [--tool echo_async] [--requests 32000]

It always exits 0; the figures go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def timed_collections(report: dict[str, Any]) -> Iterator[None]:
    """Time every collection while the block runs; fill ``report`` when it ends."""
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started: list[float] = []

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        else:
            pauses[info["generation"]].append(time.perf_counter() - started.pop())

    report["tracked"] = len(gc.get_objects())
    report["frozen"] = gc.get_freeze_count()
    gc.callbacks.append(callback)
    try:
        yield
    finally:
        gc.callbacks.remove(callback)
        report["pauses"] = pauses


def measure_here(tool: str, requests: int) -> None:
    """In this process: the load, then the report as one JSON line on stdout."""
    from bench.instructions import drive

    report: dict[str, Any] = {}
    drive(tool, requests, lambda: timed_collections(report))
    print(json.dumps(report))


def measure(tool: str, requests: int, env: dict[str, str]) -> dict[str, Any]:
    from bench.http import json_from_module

    return json_from_module("bench.gc_pauses", ["--measure-here", tool, str(requests)], env, 600)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default="echo_async")
    parser.add_argument("--requests", type=int, default=32_000)
    parser.add_argument("--measure-here", nargs=2, metavar=("TOOL", "N"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure_here:
        measure_here(arguments.measure_here[0], int(arguments.measure_here[1]))
        return 0
    sys.path.insert(0, str(REPO_ROOT))
    from bench.http import prepare_environment, provenance

    print(provenance("gc_pauses.py"))
    with tempfile.TemporaryDirectory(prefix="beammcp-gc-") as directory:
        env = prepare_environment(Path(directory))
        for label, freeze in (("FREEZE_HEAP_AT_STARTUP on", "1"), ("off", "0")):
            report = measure(arguments.tool, arguments.requests, {**env, "BENCH_FREEZE": freeze})
            print(
                f"{label}: {report['tracked']:,} objects tracked, {report['frozen']:,} frozen, "
                f"when {arguments.requests:,} tools/call {arguments.tool} requests start"
            )
            for generation, pauses in sorted(report["pauses"].items()):
                per_thousand = len(pauses) * 1000 / arguments.requests
                mean = sum(pauses) / len(pauses) * 1000 if pauses else 0.0
                longest = max(pauses, default=0.0) * 1000
                print(
                    f"  generation {generation}: {per_thousand:6.2f} per 1,000 requests, "
                    f"mean {mean:7.2f} ms, longest {longest:7.2f} ms"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
