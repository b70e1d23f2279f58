"""Benchmark: argument validation on the hot path, per call.

What it measures
    The time to validate one ``tools/call``'s arguments against a small object schema (the
    sample's ``echo``: one required string) and a larger one (six properties, enum, bounds,
    an array), valid and invalid: jsonschema's compiled validator (``is_valid`` and
    ``iter_errors``), jsonschema-rs's ``is_valid``, and ``CompiledSchema.violation`` (what the
    server runs: jsonschema-rs accepts and refuses, and a refusal's first error is
    described). Target (issue 6): under 5 µs for a small object schema. Medians of
    interleaved rounds.

How to run (from the repository root; about 20 seconds)
    .venv/bin/python bench/validator.py [--rounds N]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jsonschema_rs
from jsonschema import Draft202012Validator

from beammcp_django.protocol.schema import CompiledSchema

SMALL = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
LARGER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["amsterdam", "lisbon", "nairobi", "oslo", "sydney"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "hours": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 23}},
        "detail": {"type": "boolean"},
        "note": {"type": "string", "maxLength": 200},
    },
    "required": ["city"],
    "additionalProperties": False,
}
CASES = {
    "small, valid": (SMALL, {"text": "hello"}),
    "small, invalid": (SMALL, {"text": 7}),
    "larger, valid": (
        LARGER,
        {"city": "oslo", "days": 3, "units": "metric", "hours": [6, 12, 18], "detail": True},
    ),
    "larger, invalid": (LARGER, {"city": "paris", "days": 9}),
}
CALLS = 2_000


def per_call(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        function()
    return (time.perf_counter() - started) / CALLS * 1e6


def measure(schema: dict[str, Any], instance: Any, rounds: int) -> dict[str, float]:
    """Median µs per call of each validator on one instance, rounds interleaved."""
    reference = Draft202012Validator(schema)
    fast = jsonschema_rs.validator_for(schema)
    compiled = CompiledSchema(schema)
    contenders: dict[str, Callable[[], Any]] = {
        "is_valid": lambda: reference.is_valid(instance),
        "iter": lambda: list(reference.iter_errors(instance)),
        "rs": lambda: fast.is_valid(instance),
        "ours": lambda: compiled.violation(instance, "arguments"),
    }
    timings: dict[str, list[float]] = {key: [] for key in contenders}
    for _ in range(rounds):
        for key, contender in contenders.items():
            timings[key].append(per_call(contender))
    return {key: statistics.median(values) for key, values in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    print(f"validator bench, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"Python {platform.python_version()}, {platform.machine()}, {rounds} rounds")
    print(
        f"{'case':<18}{'jsonschema is_valid':>22}{'iter_errors':>14}{'rs is_valid':>14}"
        f"{'violation()':>14}"
    )
    gc.disable()
    for name, (schema, instance) in CASES.items():
        medians = measure(schema, instance, rounds)
        print(
            f"{name:<18}{medians['is_valid']:>19.2f} µs{medians['iter']:>11.2f} µs"
            f"{medians['rs']:>11.2f} µs{medians['ours']:>11.2f} µs"
        )
    gc.enable()


if __name__ == "__main__":
    main()
