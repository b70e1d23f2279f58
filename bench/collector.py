"""Benchmark: what the observed collector adds to one tools/call.

What it measures
    The connectome's collector (``beammcp_django.connectome.core.observed.Collector.record``) is
    fed once per call that reaches host code. Target (issue 5): under 1.5 µs added per
    ``tools/call``, median. Two servers over the same in-memory catalog (an ``echo`` tool
    answered inline) differ only in ``observe``; both answer the same message in interleaved
    rounds inside one event loop, and the added cost is the difference of the per-call
    medians. ``record()`` alone is timed too.

How to run (from the repository root; about half a minute)
    .venv/bin/python bench/collector.py [--rounds N]

It always exits 0; the figures go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beammcp_django.connectome.core.observed import Collector
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.server import Server, ServerOptions

ECHO = ToolSpec(
    "echo",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
MESSAGE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "echo",
        "arguments": {"text": "hello"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}
CALLS = 20_000


class EchoCatalog:
    tools = (ECHO,)
    resources = ()
    prompts = ()

    def dispatch(self, name, arguments, context):
        return arguments["text"]

    def read_resource(self, match, context):
        raise AssertionError

    def get_prompt(self, name, arguments, context):
        raise AssertionError


async def per_call_ns(server: Server) -> float:
    handle = server.handle
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in range(CALLS):
            await handle(MESSAGE)
        return (time.perf_counter_ns() - started) / CALLS
    finally:
        gc.enable()


def record_ns(collector: Collector) -> float:
    record = collector.record
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in range(CALLS * 5):
            record("tools/call", "echo")
        return (time.perf_counter_ns() - started) / (CALLS * 5)
    finally:
        gc.enable()


async def main(rounds: int) -> None:
    plain = Server(EchoCatalog(), ServerOptions("bench", "1"), cursor_key=b"k")
    collector = Collector()
    observed = Server(
        EchoCatalog(), ServerOptions("bench", "1"), cursor_key=b"k", observe=collector.record
    )
    await per_call_ns(plain)  # warm both
    await per_call_ns(observed)
    without, with_, records = [], [], []
    for number in range(rounds):
        first, second = (plain, observed) if number % 2 == 0 else (observed, plain)
        a = await per_call_ns(first)
        b = await per_call_ns(second)
        without.append(a if first is plain else b)
        with_.append(b if first is plain else a)
        records.append(record_ns(collector))
    base, observed_median = statistics.median(without), statistics.median(with_)
    added = [w - p for p, w in zip(without, with_, strict=True)]
    print(f"date:     {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC")
    print(f"python:   {sys.version.split()[0]}  platform: {platform.platform()}")
    print(f"rounds:   {rounds} interleaved, {CALLS} tools/call per timed loop, GC disabled\n")
    print(f"tools/call without the collector  {base / 1000:8.2f} us median")
    print(f"tools/call with the collector     {observed_median / 1000:8.2f} us median")
    added_us = statistics.median(added) / 1000
    print(f"added per call (median of rounds) {added_us:8.2f} us  target < 1.5 us")
    print(f"record() alone                    {statistics.median(records) / 1000:8.2f} us median")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    asyncio.run(main(parser.parse_args().rounds))
