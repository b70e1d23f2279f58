"""Benchmark: what the bounded tracer costs a call-heavy pure-Python workload.

What it measures
    The connectome's tracer (``beammcp_django.connectome.core.tracer.Tracer``) runs a Python
    profile function on every event of every traced thread. The workload is a naive recursive
    Fibonacci defined in this script (every call is a Python call to a Python function, the
    worst case for a profile function). It runs four ways in interleaved rounds (the order
    rotates each round): untraced; under an empty profile function (the floor: what CPython's
    profiling hook costs before the tracer does anything); traced with this script's module
    in scope (every call is an edge counted); traced with a scope that does not hold the
    workload (every event is counted toward the limit and classified, no edge recorded). Each
    figure is the median over rounds of the time per workload call; the ratios divide by the
    untraced median.

How to run (from the repository root; under half a minute)
    .venv/bin/python bench/tracer.py [--rounds N]

It always exits 0; the figures go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beammcp_django.connectome.core.tracer import Tracer

DEPTH = 20  # fib(20) is 21,891 calls
REPEATS = 5  # workload runs per timed loop
BUDGET_SECONDS = 25.0  # rounds stop early past this, so a run stays under half a minute
OUTSIDE_SCOPE = ("bench_tracer_not_the_workload",)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def calls_of_fib(n: int) -> int:
    return 1 if n < 2 else 1 + calls_of_fib(n - 1) + calls_of_fib(n - 2)


CALLS = calls_of_fib(DEPTH) * REPEATS


# Each variant's tracer scope (None: no tracer).
VARIANTS: dict[str, tuple[str, ...] | None] = {
    "untraced": None,
    "empty profile function": None,
    "traced, workload in scope": (__name__,),
    "traced, workload outside scope": OUTSIDE_SCOPE,
}


def empty_profile(frame, event, arg):
    return None


def a_tracer(scope: tuple[str, ...]) -> Tracer:
    return Tracer(scope, max_events=10**9, max_seconds=120)


def timed_ns_per_call(variant: str) -> float:
    scope = VARIANTS[variant]
    tracer = a_tracer(scope) if scope else None
    gc.disable()
    try:
        if tracer is not None:
            tracer.start()
        elif variant == "empty profile function":
            sys.setprofile(empty_profile)
        started = time.perf_counter_ns()
        for _ in range(REPEATS):
            fib(DEPTH)
        elapsed = time.perf_counter_ns() - started
        if tracer is not None:
            tracer.stop()
            assert tracer.stopped_because == "stopped", "a limit cut the measurement short"
        else:
            sys.setprofile(None)
        return elapsed / CALLS
    finally:
        gc.enable()


def main(rounds: int) -> None:
    names = list(VARIANTS)
    for name in names:  # warm every path once
        timed_ns_per_call(name)
    figures: dict[str, list[float]] = {name: [] for name in names}
    began = time.monotonic()
    for number in range(rounds):
        order = names[number % len(names) :] + names[: number % len(names)]
        for name in order:
            figures[name].append(timed_ns_per_call(name))
        if time.monotonic() - began > BUDGET_SECONDS:
            break
    check = a_tracer((__name__,))
    check.start()
    fib(DEPTH)
    check.stop()
    recorded = sum(check.edges().values())

    done = len(figures["untraced"])
    medians = {name: statistics.median(values) for name, values in figures.items()}
    base = medians["untraced"]
    print(f"date:     {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC")
    print(f"python:   {sys.version.split()[0]}  platform: {platform.platform()}")
    print(
        f"method:   fib({DEPTH}) x{REPEATS} ({CALLS} Python calls) per timed loop, {done} "
        "interleaved rounds (order rotating), GC disabled, median ns per call\n"
    )
    for name in names:
        ratio = medians[name] / base
        print(f"{name:32} {medians[name]:8.1f} ns/call   x{ratio:5.2f}")
    floor = medians["empty profile function"]
    print("\nadded per call over the empty profile function (the tracer's own work):")
    for name in names[2:]:
        print(f"  {name:30} {medians[name] - floor:8.1f} ns")
    print(f"edges counted for one fib({DEPTH}): {recorded} (expected {calls_of_fib(DEPTH)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    main(parser.parse_args().rounds)
