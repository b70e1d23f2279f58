"""Benchmark: what the observability hooks cost a request (issue 12, item 12).

What it measures
    One ``tools/call`` through the HTTP endpoint in this process (no server, no socket: the
    ASGI messages are handed over in memory), one request after another, CPU time per
    request (``time.process_time``: every thread of the process, so a sync tool's worker
    thread counts too). Two ways to serve alternate round by round, and each round's pair is
    compared:

    - ``bypassed``: the bare ``McpEndpoint`` and a server whose ``trace_host`` seam is None:
      the code path of the commit before the hooks;
    - ``hooks``: what ``get_asgi_application()`` serves: ``ObservedEndpoint`` around the
      endpoint and ``host_span`` on the seam.

    Each setting runs in a process of its own (``bench.bench_settings``, a fresh migrated
    SQLite file, the heap frozen as the sample ships it); within a round the two ways take
    turns every 100 requests, with the cyclic garbage collector off (a full collection runs
    between rounds, untimed):

    - ``api-absent``: ``opentelemetry`` cannot be imported (the extra not installed);
    - ``api-only``: ``opentelemetry-api`` installed, no tracer provider set (no SDK);
    These two are the claim: the hooks cost at most 3 µs a request when nothing exports.
    - ``access-log``: the access logger enabled, writing to /dev/null;
    - ``sdk``: the OpenTelemetry SDK's provider with an in-memory exporter (spans made,
      ended and exported);
    - ``signal``: a host's no-op receiver on ``request_started`` (the signals are then sent
      as Django's ASGI handler sends them, through ``sync_to_async``).

    It also times Django's two request signals sent inline (``Signal.send``, Django's own
    receivers only), the figure the observability module's choice rests on.

    The figure is the median over rounds of (hooks - bypassed) µs, with the ratio of the
    medians; the machine is shared, so read the per-round range too.

How to run (from the repository root; about 2 minutes)
    .venv/bin/python bench/observability.py [--rounds 11] [--requests 3000] [--tool echo_async]
    .venv/bin/python bench/observability.py --settings api-absent,api-only   # the claim only

Exits 0 when every answer was right (a missed target is a finding, printed), 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ("api-absent", "api-only", "access-log", "sdk", "signal")
CLAIMED = ("api-absent", "api-only")
TARGET_US = 3.0
WARM_UP = 300
CHUNK = 100


def prepare(setting: str) -> Any:
    """Set the process up for ``setting`` before Django starts; what the run needs after."""
    if setting == "api-absent":
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]  # import fails
    exporter = None
    if setting == "sdk":
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    return exporter


def configure(setting: str) -> None:
    """After Django's set-up (which configures logging from settings)."""
    if setting == "access-log":
        access = logging.getLogger("beammcp_django.access")
        access.setLevel(logging.INFO)
        access.addHandler(logging.StreamHandler(Path(os.devnull).open("w")))  # noqa: SIM115
        access.propagate = False
    if setting == "signal":
        from django.core.signals import request_started

        request_started.connect(_host_receiver, dispatch_uid="bench-observability")


def _host_receiver(**kwargs: Any) -> None:
    """A host's receiver that does nothing: what sending the signals costs by itself."""


def inline_signals_us(count: int = 20_000) -> float:
    """Django's request signals sent inline with Django's own receivers, µs for the pair."""
    from django.core.signals import request_finished, request_started

    scope = {"type": "http"}

    def both() -> None:
        request_started.send(sender=object, scope=scope)
        request_finished.send(sender=object)

    return min(timeit.repeat(both, number=count, repeat=5)) / count * 1e6


def run_setting(setting: str, rounds: int, requests: int, tool: str) -> dict[str, Any]:
    """In this process: interleaved rounds of both ways to serve; µs of CPU per request."""
    exporter = prepare(setting)
    from beammcp_django.asgi import get_asgi_application

    router = get_asgi_application()
    configure(setting)
    from beammcp_django import observability
    from beammcp_django.process import get_server
    from bench.http import Exchange
    from bench.instructions import InProcessPost

    exchange = Exchange("tools/call", tool)
    post = InProcessPost(exchange)
    observed = router.endpoint
    server = get_server()
    seam = server._trace_host
    ways = {"bypassed": (observed.endpoint, None), "hooks": (observed, seam)}

    async def serve(way: str, count: int, check: bool) -> float:
        """CPU seconds for ``count`` requests served ``way``."""
        application, trace_host = ways[way]
        server._trace_host = trace_host
        problem = None
        started = time.process_time()
        for _ in range(count):
            sent = await post(application)
            if sent[0]["status"] != 200 or (
                check and (problem := exchange.problem(200, sent[1]["body"])) is not None
            ):
                raise SystemExit(f"{setting}/{way}: a wrong answer: {sent[:2]} {problem}")
        spent = time.process_time() - started
        if exporter is not None:
            exporter.clear()
        return spent

    async def main() -> dict[str, list[float]]:
        for way in ways:
            await serve(way, WARM_UP, check=True)
        figures: dict[str, list[float]] = {way: [] for way in ways}
        # The cyclic collector off while a round runs, and a full collection between rounds:
        # a collection's pause (tens of ms) landing on one way's turn would swamp the
        # microseconds measured here.
        gc.disable()
        for index in range(rounds):
            gc.collect()
            # Within a round the two ways alternate every CHUNK requests, so a change in the
            # machine's load lands on both alike.
            spent = dict.fromkeys(ways, 0.0)
            for chunk in range(requests // CHUNK):
                order = list(ways) if (index + chunk) % 2 == 0 else list(reversed(ways))
                for way in order:
                    spent[way] += await serve(way, CHUNK, check=False)
            for way in ways:
                figures[way].append(spent[way] / (requests // CHUNK * CHUNK) * 1e6)
        gc.enable()
        return figures

    import uvloop

    figures = uvloop.run(main())
    return {
        "setting": setting,
        "tracing_installed": observability.TRACING_INSTALLED,
        "seam": seam is not None,
        "figures": figures,
        "inline_signals_us": inline_signals_us() if setting == "api-only" else None,
    }


def in_subprocess(setting: str, arguments: argparse.Namespace, env: dict[str, str]) -> Any:
    from bench.http import json_from_module

    options = ["--rounds", str(arguments.rounds), "--requests", str(arguments.requests)]
    run = ["--run", setting, *options, "--tool", arguments.tool]
    return json_from_module("bench.observability", run, env, 1800)


def report(results: list[dict[str, Any]]) -> list[str]:
    """The table; the claim's misses, as findings."""
    misses = []
    print(
        f"\n{'setting':<12} {'bypassed µs':>12} {'hooks µs':>10} {'cost µs':>8} "
        f"{'per round':>16} {'ratio':>7}  target"
    )
    for result in results:
        bypassed, hooks = result["figures"]["bypassed"], result["figures"]["hooks"]
        pairs = [after - before for before, after in zip(bypassed, hooks, strict=True)]
        cost = statistics.median(pairs)
        ratio = statistics.median(hooks) / statistics.median(bypassed)
        claimed = result["setting"] in CLAIMED
        verdict = ""
        if claimed:
            verdict = f"<= {TARGET_US:g} µs " + ("meets" if cost <= TARGET_US else "MISSES")
            if cost > TARGET_US:
                misses.append(result["setting"])
        print(
            f"{result['setting']:<12} {statistics.median(bypassed):>12.1f} "
            f"{statistics.median(hooks):>10.1f} {cost:>8.2f} "
            f"{min(pairs):>7.2f} to {max(pairs):>5.2f} {ratio:>6.3f}x  {verdict}"
        )
        if result["inline_signals_us"] is not None:
            inline_us = result["inline_signals_us"]
            print(f"{'':<12} (request signals sent inline, Django's receivers: {inline_us:.1f} µs)")
    return misses


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--requests", type=int, default=3000, help="requests per round and way")
    parser.add_argument("--tool", default="echo_async", help="echo (sync) or echo_async")
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--run", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    if arguments.run:
        result = run_setting(arguments.run, arguments.rounds, arguments.requests, arguments.tool)
        print(json.dumps(result))
        return 0
    sys.path.insert(0, str(REPO_ROOT))
    from bench.http import prepare_environment, provenance

    print(provenance("observability.py"))
    print(
        f"tools/call {arguments.tool}, in process, one request at a time: {arguments.rounds} "
        f"interleaved rounds of {arguments.requests} requests per way; CPU µs per request"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="beammcp-observability-") as directory:
        env = prepare_environment(Path(directory))
        for setting in arguments.settings.split(","):
            print(f"  {setting} ...", flush=True)
            results.append(in_subprocess(setting, arguments, env))
    for result in results:
        if result["setting"] == "api-absent" and (result["tracing_installed"] or result["seam"]):
            raise SystemExit("api-absent: the OpenTelemetry API was importable after all")
        if result["setting"] == "api-only" and not result["seam"]:
            raise SystemExit("api-only: opentelemetry-api is not installed; pip install it")
    misses = report(results)
    if misses:
        print(f"\nfinding: the hooks cost more than {TARGET_US:g} µs under {', '.join(misses)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
