"""Benchmark: what the connectome's query hook adds to one query of a host call.

What it measures
    The observed graph's query hook (``beammcp_django.connectome.query_observer``) is an
    execute wrapper on every connection; inside a host call it classifies the statement
    (cached per text), reads the stack for the host functions that ran it and counts the
    effect. Target (issue 18): at most 3 µs added per query.

    The hook's own cost: on a host worker thread (``runtime.host_threads.run_sync_host``, where the
    server runs sync host code), at the stack depth a real ORM query reaches the hook (probed
    first), the hook is called with a no-op in place of the database, against that no-op
    called directly; inside a host call (``host_call`` set, this module in scope: the stack
    is read and the effect counted) and outside one. In context, end to end: a host function
    running one ORM query (``Observation.objects.filter(pk=...).exists()``, a
    SQLite file) a thousand times, with no hook and with the hook inside a host call. Interleaved
    rounds in one process; medians.

How to run (from the repository root; about half a minute)
    .venv/bin/python bench/effects.py [--rounds N]

It always exits 0; the figures go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

QUERIES = 1_000
CALLS = 50_000


def setup(directory: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "sample_project.settings"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def placed(hook: object, installed: bool) -> None:
    from django.db import connection

    wrappers = connection.execute_wrappers
    if installed and hook not in wrappers:
        wrappers.insert(0, hook)
    if not installed and hook in wrappers:
        wrappers.remove(hook)


def queries(hook: object, installed: bool) -> float:
    """The end-to-end workload on this (host worker) thread: ns per query."""
    from sample_project.demo.models import Observation

    placed(hook, installed)
    exists = Observation.objects.filter
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for number in range(QUERIES):
            exists(pk=number).exists()
        return (time.perf_counter_ns() - started) / QUERIES
    finally:
        gc.enable()


def probed_depth() -> int:
    """How many frames a real ORM query puts between the host function calling it and an
    execute wrapper, on this thread."""
    from django.db import connection

    from sample_project.demo.models import Observation

    depths = []

    def probe(execute, sql, params, many, context):
        frame, depth = sys._getframe(), 0
        while frame is not None:
            frame, depth = frame.f_back, depth + 1
        depths.append(depth)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(probe):
        Observation.objects.filter(pk=1).exists()
    return depths[0]


def at_depth(depth: int, step: Callable[[], object]) -> object:
    """``step`` called ``depth`` frames down: the frames of the ORM between a host function
    and the hook (out of scope, as Django's are)."""
    return at_depth(depth - 1, step) if depth > 0 else step()


def hook_alone(hook: object, depth: int) -> tuple[float, float]:
    """(ns per direct no-op, ns per no-op through the hook), called from the host function
    ``depth`` frames down."""
    from django.db import connections

    from bench.benchapp.effects_host import run

    sql = 'SELECT 1 AS "a" FROM "demo_observation" WHERE "demo_observation"."id" = %s LIMIT 1'
    # What Django hands an execute wrapper: this thread's connection itself, not the proxy.
    context = {"connection": connections["default"], "cursor": None}

    def noop(sql, params, many, context):
        return None

    steps = (
        lambda: at_depth(depth, lambda: noop(sql, None, False, context)),
        lambda: at_depth(depth, lambda: hook(noop, sql, None, False, context)),
    )
    timed = []
    for step in steps:
        gc.disable()
        try:
            started = time.perf_counter_ns()
            run(CALLS, step)
            timed.append((time.perf_counter_ns() - started) / CALLS)
        finally:
            gc.enable()
    return timed[0], timed[1]


async def on_host_thread(function: object, *args: object, inside: bool) -> object:
    from beammcp_django.protocol.calling import host_call
    from beammcp_django.runtime.host_threads import run_sync_host

    token = host_call.set(("tools/call", "bench")) if inside else None
    try:
        return await run_sync_host(function, *args)
    finally:
        if token is not None:
            host_call.reset(token)


async def main(rounds: int) -> None:
    from beammcp_django.connectome.core.effect_observer import EffectObserver
    from beammcp_django.connectome.query_observer import QueryObserver
    from bench.benchapp import effects_host

    observer = EffectObserver([effects_host.__name__], lambda call: effects_host.run.__code__)
    hook = QueryObserver(observer)
    depth = await on_host_thread(probed_depth, inside=False)
    # The probe counts itself and the ORM's frames; hook_alone puts two lambdas and one more
    # at_depth between the host function and the hook.
    down = max(depth - 4, 0)
    for inside in (False, True):  # warm (the statement cache, the code cache)
        await on_host_thread(hook_alone, hook, down, inside=inside)
        await on_host_thread(queries, hook, inside, inside=inside)
    alone: dict[bool, list[float]] = {False: [], True: []}
    end_to_end: dict[bool, list[float]] = {False: [], True: []}
    for number in range(rounds):
        for inside in (number % 2 == 0, number % 2 == 1):
            direct, hooked = await on_host_thread(hook_alone, hook, down, inside=inside)
            alone[inside].append(hooked - direct)
            end_to_end[inside].append(await on_host_thread(queries, hook, inside, inside=inside))
    counted = sum(seen.count for seen in observer.collector.snapshot().values())
    print(f"date:     {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC")
    print(f"python:   {sys.version.split()[0]}  platform: {platform.platform()}")
    print(f"rounds:   {rounds} interleaved; {CALLS} hook calls and {QUERIES} queries per loop,")
    print(f"          GC disabled; a query's ORM frames between host code and the hook: {depth}")
    print(f"effects counted inside host calls: {counted}\n")
    outside_us = statistics.median(alone[False]) / 1000
    inside_us = statistics.median(alone[True]) / 1000
    print(f"the hook, outside a host call      {outside_us:6.2f} us added per query")
    print(f"the hook, inside a host call       {inside_us:6.2f} us added per query  target <= 3 us")
    plain = statistics.median(end_to_end[False]) / 1000
    hooked = statistics.median(end_to_end[True]) / 1000
    print(f"\nend to end, one ORM query (SQLite file): {plain:.2f} us without the hook,")
    print(f"{hooked:.2f} us with it inside a host call ({hooked / plain:.3f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        setup(directory)
        asyncio.run(main(arguments.rounds))
