"""Benchmark: a message at the 1 MiB cap decoded in a Django process, the cyclic collector
running, against ``json.loads`` with and without the collector in the same run.

What it measures
    ``wire.decode`` pauses the cyclic garbage collector while it decodes a message of
    ``LARGE_MESSAGE_BYTES`` (64 KiB) or more: decoding makes containers by the hundred
    thousand and never a cycle, and every collection that their count triggers walks the
    whole heap, which in a Django process starts at about 90,000 tracked objects. That is
    invisible to ``bench/decode.py``, which times with the collector off; here the collector
    is on, as in a server, and the heap is a Django process's (``django.setup()`` with
    ``bench/bench_settings.py`` and the server built, no ``gc.freeze()``: the package's
    default).

    The message is a ``tools/call`` whose one argument is small nested arrays
    (``[[[[1, 2], [3]]]]`` repeated: the shape of ``tests/validation_families.py``'s
    recursive ``$ref`` family) up to just under 1,048,576 bytes. Timed, one call per sample,
    in interleaved rounds (the order turning each round):

    - ``json.loads``, collector on: the baseline, what an unguarded decoder costs;
    - ``json.loads``, collector off around the call: the floor;
    - ``wire.decode``, the collector on in the caller (it pauses it itself), depth walk and
      key count included.

    It prints the medians, the per-round ranges and the ratios to the baseline.

How to run (from the repository root; about ten seconds)
    .venv/bin/python bench/large_decode.py [--rounds 9]

It always exits 0; the figures go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(REPO_ROOT)  # the repository root, not bench/ (its http.py is not the stdlib's)

TARGET_BYTES = 1_048_576 - 64


def message() -> bytes:
    """A ``tools/call`` whose argument is small nested arrays, just under the cap."""
    unit = [[[1, 2], [3]]]
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'
    one = len(json.dumps(unit, separators=(",", ":"))) + 1
    count = (TARGET_BYTES - len(head) - len(b'{"a":[]}}}')) // one
    argument = json.dumps({"a": [unit] * count}, separators=(",", ":")).encode()
    return head + argument + b"}}"


def timed(function: Callable[[], Any], collector: bool) -> float:
    """One call's wall time in ms, with the collector on or off around it."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        function()
        return (time.perf_counter() - start) * 1000
    finally:
        gc.enable()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (9)")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.bench_settings")
    os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
    import django

    django.setup()
    from beammcp_django import endpoint
    from beammcp_django.protocol import wire
    from bench.http import provenance

    endpoint.get_server()  # the heap a serving process has
    data = message()
    if wire.decode(data) != json.loads(data):
        raise SystemExit("wire.decode and json.loads disagree on the message")
    print(provenance("large_decode.py"))
    print(
        f"message: {len(data):,} bytes of small nested arrays; heap: {len(gc.get_objects()):,} "
        f"objects tracked, {gc.get_freeze_count():,} frozen; {arguments.rounds} interleaved "
        "rounds, one call per sample, median (range)"
    )
    ways: dict[str, tuple[Callable[[], Any], bool]] = {
        "json.loads, collector on (baseline)": (lambda: json.loads(data), True),
        "json.loads, collector off": (lambda: json.loads(data), False),
        "wire.decode, collector on (paused inside)": (lambda: wire.decode(data), True),
    }
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for function, collector in ways.values():
        timed(function, collector)  # warm-up
    for round_number in range(arguments.rounds):
        names = list(ways) if round_number % 2 == 0 else list(reversed(ways))
        for name in names:
            function, collector = ways[name]
            samples[name].append(timed(function, collector))
    baseline = statistics.median(samples[next(iter(ways))])
    for name, values in samples.items():
        median = statistics.median(values)
        print(
            f"  {name:44} {median:8.1f} ms ({min(values):.1f}-{max(values):.1f})  "
            f"{median / baseline:5.2f}x the baseline"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
