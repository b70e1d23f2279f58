"""Benchmark: how long validating one argument takes under a catastrophic host ``pattern``.

What it measures
    A host schema such as ``{"type": "string", "pattern": "^(a+)+$"}`` is matched against
    the caller's string. Python's ``re`` backtracks: on ``"a" * n + "!"`` the time doubles
    with each added character. Each case below is validated by two validators built from
    the same schema: ``jsonschema`` as shipped (``Draft202012Validator``, Python's ``re``)
    and this package's ``CompiledSchema`` (what ``tools/call`` uses). The input grows until
    one validation takes longer than ``--cutoff`` seconds, then that series stops; a series
    goes on to the long inputs (100 to 100,000 characters) only when it stayed flat up to 32
    characters, since an exponential one would run for ages there. Every figure is the best
    of a few runs (one run when a single run is slow). A benign pattern
    and a schema without any pattern give the everyday cost per validation for comparison.

How to run (from the repository root; bounded, under a minute)
    .venv/bin/python bench/regex.py [--cutoff SECONDS]

It always exits 0; the figures go into the threat model with their date.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jsonschema import Draft202012Validator

from beammcp_django.protocol.schema import CompiledSchema

SHORT = tuple(range(8, 34, 2))
LONG = (100, 1_000, 10_000, 100_000)
# The whole run stops measuring past this many seconds, whatever is left.
BUDGET_SECONDS = 45.0


@dataclass(frozen=True)
class Case:
    name: str
    schema: Mapping[str, Any]
    instance: Callable[[int], Any]


def adversarial(n: int) -> str:
    """n 'a's and one character no alternative accepts: every split is tried before failing."""
    return "a" * n + "!"


CASES = (
    Case("pattern ^(a+)+$", {"type": "string", "pattern": "^(a+)+$"}, adversarial),
    Case("pattern ^(a|aa)+$", {"type": "string", "pattern": "^(a|aa)+$"}, adversarial),
    Case(r"pattern ^(\w+\s?)*$", {"type": "string", "pattern": r"^(\w+\s?)*$"}, adversarial),
    Case(
        "patternProperties ^(a+)+$ + additionalProperties false (a property name)",
        {"type": "object", "patternProperties": {"^(a+)+$": {}}, "additionalProperties": False},
        lambda n: {adversarial(n): 1},
    ),
    Case(
        "propertyNames pattern ^(a+)+$ (a property name)",
        {"type": "object", "propertyNames": {"pattern": "^(a+)+$"}},
        lambda n: {adversarial(n): 1},
    ),
)
EVERYDAY = (
    Case("no pattern (maxLength)", {"type": "string", "maxLength": 64}, lambda n: "a" * n),
    Case("benign pattern ^[a-z]+$", {"type": "string", "pattern": "^[a-z]+$"}, lambda n: "a" * n),
)


def validators(schema: Mapping[str, Any]) -> dict[str, Callable[[Any], bool]]:
    """Each validator under test, as 'is this instance valid?'."""
    plain = Draft202012Validator(schema)
    compiled = CompiledSchema(schema)
    return {
        "jsonschema (Python re)": plain.is_valid,
        "CompiledSchema": lambda instance: compiled.violation(instance, "arguments") is None,
    }


def best_time(check: Callable[[Any], bool], instance: Any) -> tuple[float, bool]:
    """The best of up to five runs (one if a run is slow), and the verdict."""
    times = []
    verdict = False
    for _ in range(5):
        started = time.perf_counter()
        verdict = check(instance)
        times.append(time.perf_counter() - started)
        if times[-1] > 0.05:
            break
    return min(times), verdict


def flat(timings: Mapping[int, float]) -> bool:
    """True when the longest short input took at most a few times the shortest (+ noise)."""
    return timings[SHORT[-1]] <= 4 * timings[SHORT[0]] + 0.000_1


def series(case: Case, cutoff: float, deadline: float) -> None:
    print(f"\n{case.name}   input: 'a' * n + '!'")
    for label, check in validators(case.schema).items():
        cells = []
        timings: dict[int, float] = {}
        for n in (*SHORT, *LONG):
            if n == LONG[0] and not flat(timings):
                cells.append("(not flat up to 32: long inputs skipped)")
                break
            if time.monotonic() > deadline:
                cells.append("(time budget spent)")
                break
            seconds, verdict = best_time(check, case.instance(n))
            timings[n] = seconds
            if verdict:
                cells.append(f"n={n}: ACCEPTED (wrong)")
                break
            cells.append(f"n={n}: {seconds * 1000:.3g} ms")
            if seconds > cutoff:
                cells.append(f"(stopped: over {cutoff} s)")
                break
        print(f"  {label:24} " + "; ".join(cells))


def everyday(case: Case) -> None:
    instance = case.instance(30)
    for label, check in validators(case.schema).items():
        runs = 20_000
        assert check(instance)
        started = time.perf_counter()
        for _ in range(runs):
            check(instance)
        per_call = (time.perf_counter() - started) / runs
        print(f"  {case.name:28} {label:24} {per_call * 1e6:7.2f} us per validation")


def main(cutoff: float) -> None:
    started = time.monotonic()
    print(f"date:     {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC")
    print(f"python:   {sys.version.split()[0]}  platform: {platform.platform()}")
    print(
        "method:   one validation of one instance per figure, best of up to 5 runs; "
        f"a series stops past {cutoff} s per validation"
    )
    print("\neveryday cost, a 30-character valid string:")
    for case in EVERYDAY:
        everyday(case)
    deadline = started + BUDGET_SECONDS
    for case in CASES:
        series(case, cutoff, deadline)
    print(f"\ntotal run time {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cutoff", type=float, default=0.5)
    main(parser.parse_args().cutoff)
