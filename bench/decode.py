"""Benchmark: the bounded wire decoder against plain ``json.loads``.

What it measures
    ``beammcp_django.protocol.wire.decode(bytes) -> dict`` refuses messages past its bounds
    (1,048,576 bytes, nesting deeper than 64, a repeated key in one object) and must cost at
    most 1.3x plain ``json.loads`` on every message shape. This script times both on six
    shapes, built deterministically (no randomness):

    1. a 218-byte MCP ``tools/call`` request (compact JSON, the common case);
    2. a string body: a request whose one string argument brings the message just under
       1,048,576 bytes;
    3. an array of ~82,000 numbers (~600 KB; integers and floats) inside a request;
    4. an object of 60,000 keys (~880 KB) inside a request;
    5. objects nested four deep, 16x16x16x16 = 65,536 leaves (~640 KB), inside a request;
    6. the worst nest under the size bound: ``'[' * n + ']' * n`` with 2n just under
       1,048,576. ``wire.decode`` must refuse it (``ProtocolError``) in under 1 ms; the
       ``json.loads`` column is the time it takes to fail with ``RecursionError``.

How
    Each shape is first checked (``wire.decode`` returns what ``json.loads`` returns, or
    refuses shape 6). Then, per shape and function, an iteration count is calibrated so that
    one timed loop lasts at least 20 ms, and ``--rounds`` rounds (7 by default) are run,
    each round timing both functions back to back, the order alternating from one round to
    the next. Timed loops use ``time.perf_counter_ns`` with the garbage collector
    disabled (re-enabled after each loop). The table gives the median per-call time of each
    function over the rounds and the ratio decode/loads against the 1.3x target. ``--json``
    also keeps every sample and the median of the per-round ratios, which is steadier on a
    noisy (shared, virtual) machine where whole seconds can run 1.5-2x slower.

    ``wire.decode`` is looked up when the benchmark runs, so a prototype can be measured by
    assigning ``beammcp_django.protocol.wire.decode`` before calling ``main()``.

How to run (from the repository root; takes well under a minute)
    .venv/bin/python bench/decode.py
    .venv/bin/python bench/decode.py --rounds 11 --json /tmp/decode-bench.json

    It always exits 0: a MISS is a finding to act on, not a failed test.

The figures, with the machine they come from, go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from beammcp_django.protocol import wire  # noqa: E402
from beammcp_django.protocol.errors import ProtocolError  # noqa: E402

RATIO_TARGET = 1.3
REFUSAL_TARGET_NS = 1_000_000  # shape 6: refused in under 1 ms
MIN_LOOP_NS = 20_000_000  # every timed loop lasts at least 20 ms
DEFAULT_ROUNDS = 7

PROTOCOL_VERSION = "2026-07-28"
FILLER = "The quick brown fox jumps over the lazy dog. "


def _compact(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def _filler(length: int) -> str:
    repeats = length // len(FILLER) + 1
    return (FILLER * repeats)[:length]


def shape_small_call() -> bytes:
    """A 2026-07-28 tools/call of "echo", padded to exactly 218 bytes."""

    def build(text: str) -> bytes:
        message = _call(1, "echo", {"text": text})
        message["params"]["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        return _compact(message)

    data = build(_filler(218 - len(build(""))))
    assert len(data) == 218, len(data)
    return data


def shape_string_body() -> bytes:
    """One string argument bringing the message to MAX_MESSAGE_BYTES - 1 bytes."""
    target = wire.MAX_MESSAGE_BYTES - 1
    empty = _compact(_call(2, "echo", {"text": ""}))
    data = _compact(_call(2, "echo", {"text": _filler(target - len(empty))}))
    assert len(data) == target, len(data)
    return data


def shape_number_array() -> bytes:
    """~600 KB array of numbers: integers and three-decimal floats, alternating."""
    target = 600_000
    values: list[int | float] = []
    size = len(_compact(_call(3, "sum", {"values": []})))
    i = 0
    while size < target:
        n = (i * 7919) % 1_000_003
        value: int | float = n if i % 2 == 0 else n / 1000
        size += len(json.dumps(value)) + (1 if values else 0)
        values.append(value)
        i += 1
    data = _compact(_call(3, "sum", {"values": values}))
    assert len(data) == size, (len(data), size)
    return data


def shape_wide_object() -> bytes:
    """An object of 60,000 keys ("k00000": 0, ...), ~880 KB."""
    table = {f"k{i:05d}": i for i in range(60_000)}
    return _compact(_call(4, "store", {"table": table}))


def shape_deep_object() -> bytes:
    """Objects nested four deep, 16 keys each: 65,536 integer leaves, ~640 KB."""
    counter = iter(range(16**4))

    def level(depth: int) -> dict[str, Any] | int:
        if depth == 4:
            return next(counter) % 20_000
        return {format(k, "x"): level(depth + 1) for k in range(16)}

    return _compact(_call(5, "store", {"tree": level(0)}))


def shape_worst_nest() -> bytes:
    """'[' * n + ']' * n, the deepest nest that fits under the size bound."""
    n = (wire.MAX_MESSAGE_BYTES - 1) // 2
    data = b"[" * n + b"]" * n
    assert len(data) < wire.MAX_MESSAGE_BYTES
    return data


# (name, builder, refused): a refused shape is timed to its refusal, against a 1 ms target.
SHAPES: list[tuple[str, Callable[[], bytes], bool]] = [
    ("1 tools/call 218 B", shape_small_call, False),
    ("2 string body 1 MiB", shape_string_body, False),
    ("3 number array", shape_number_array, False),
    ("4 object 60k keys", shape_wide_object, False),
    ("5 nest 16^4", shape_deep_object, False),
    ("6 '['*n+']'*n", shape_worst_nest, True),
]


def _loop(function: Callable[[bytes], Any], data: bytes, iterations: int, refused: bool) -> int:
    """Total ns for `iterations` calls, GC disabled. Refused shapes catch the refusal."""
    refusals = 0
    gc.collect()
    gc.disable()
    try:
        if refused:
            start = time.perf_counter_ns()
            for _ in range(iterations):
                try:
                    function(data)
                except (ProtocolError, RecursionError, ValueError):
                    refusals += 1
            end = time.perf_counter_ns()
            assert refusals == iterations, "a refused shape was accepted"
        else:
            start = time.perf_counter_ns()
            for _ in range(iterations):
                function(data)
            end = time.perf_counter_ns()
    finally:
        gc.enable()
    return end - start


def _calibrate(function: Callable[[bytes], Any], data: bytes, refused: bool) -> int:
    """Smallest power-of-two iteration count at which one loop lasts MIN_LOOP_NS."""
    iterations = 1
    while _loop(function, data, iterations, refused) < MIN_LOOP_NS:
        iterations *= 2
    return iterations


def _check(decode: Callable[[bytes], Any], data: bytes, refused: bool) -> tuple[str | None, str]:
    """(what went wrong or None, the refusal's message) for one call of decode on a shape."""
    try:
        value = decode(data)
    except ProtocolError as error:
        if refused:
            return None, error.message
        return f"refused a valid message: {error.message}", error.message
    except Exception as error:  # a benchmark reports a broken decoder, it does not crash on it
        return f"raised {type(error).__name__} instead of ProtocolError", ""
    if refused:
        return "accepted a message past the nesting bound", ""
    if value != json.loads(data):
        return "returned a value different from json.loads", ""
    return None, ""


def run_shape(
    name: str, data: bytes, refused: bool, rounds: int, decode: Callable[[bytes], Any]
) -> dict[str, Any]:
    result: dict[str, Any] = {"shape": name, "bytes": len(data), "refused": refused}
    error, refusal = _check(decode, data, refused)
    if error is not None:
        result.update(error=error, verdict="ERROR")
        return result
    if refused:
        result["refusal"] = refusal
    functions = {"json.loads": json.loads, "wire.decode": decode}
    # Each function gets its own count, so a fast one does not make a slow one run for ages.
    iterations = {label: _calibrate(f, data, refused) for label, f in functions.items()}
    samples: dict[str, list[float]] = {label: [] for label in functions}
    for round_number in range(rounds):
        order = list(functions) if round_number % 2 == 0 else list(reversed(functions))
        for label in order:
            total = _loop(functions[label], data, iterations[label], refused)
            samples[label].append(total / iterations[label])
    loads_ns = statistics.median(samples["json.loads"])
    decode_ns = statistics.median(samples["wire.decode"])
    ratio = decode_ns / loads_ns
    # Both calls of a round share the machine's state: on a noisy host the median of the
    # per-round ratios is steadier than the ratio of the medians (kept in the JSON only).
    paired = statistics.median(
        d / loads for d, loads in zip(samples["wire.decode"], samples["json.loads"], strict=True)
    )
    if refused:
        target = f"<{REFUSAL_TARGET_NS / 1e6:g} ms"
        passed = decode_ns < REFUSAL_TARGET_NS
    else:
        target = f"<={RATIO_TARGET:g}x"
        passed = ratio <= RATIO_TARGET
    result.update(
        iterations=iterations,
        loads_median_ns=loads_ns,
        decode_median_ns=decode_ns,
        ratio=ratio,
        ratio_paired_median=paired,
        target=target,
        verdict="PASS" if passed else "MISS",
        samples_ns=samples,
    )
    return result


def _duration(ns: float) -> str:
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1_000:.2f} us"
    return f"{ns / 1_000_000:.2f} ms"


def _table(results: list[dict[str, Any]]) -> str:
    header = ("shape", "bytes", "json.loads", "wire.decode", "ratio", "target", "result")
    rows = [header]
    for r in results:
        if "error" in r:
            rows.append((r["shape"], f"{r['bytes']:,}", "-", "-", "-", "-", "ERROR"))
            continue
        rows.append(
            (
                r["shape"],
                f"{r['bytes']:,}",
                _duration(r["loads_median_ns"]),
                _duration(r["decode_median_ns"]),
                f"{r['ratio']:.2f}x",
                r["target"],
                r["verdict"],
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {1, 2, 3, 4}

    def line(row: tuple[str, ...]) -> str:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    out = [line(rows[0]), "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in rows[1:])
    for r in results:
        if "error" in r:
            out.append(f"ERROR {r['shape']}: {r['error']}")
    return "\n".join(out)


def environment() -> dict[str, Any]:
    return {
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "python": sys.version.replace("\n", " "),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="interleaved rounds (default 7)"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results as JSON")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    env = environment()
    print(f"date:     {env['date_utc']}")
    print(f"python:   {env['python']}")
    print(f"platform: {env['platform']}")
    print(f"cpus:     {env['cpu_count']}")
    print(
        f"rounds:   {args.rounds} interleaved, each timed loop >= {MIN_LOOP_NS // 1_000_000} ms, "
        "median per call, GC disabled"
    )
    print()

    decode = wire.decode  # looked up now, so a prototype assigned beforehand is measured
    results = []
    for name, build, refused in SHAPES:
        results.append(run_shape(name, build(), refused, args.rounds, decode))
    print(_table(results))

    if args.json is not None:
        report = {
            "benchmark": "bench/decode.py",
            "environment": env,
            "rounds": args.rounds,
            "min_loop_ns": MIN_LOOP_NS,
            "ratio_target": RATIO_TARGET,
            "refusal_target_ns": REFUSAL_TARGET_NS,
            "decoder": f"{decode.__module__}.{decode.__qualname__}",
            "results": results,
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
