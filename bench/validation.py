"""Benchmark: what one request costs to validate at the 1 MiB cap, keyword family by family.

What it measures (issue 11, "Validation that blocks the loop")
    Every family of ``tests/validation_families.py``: a tool input schema and the costliest
    arguments for it, accepted and refused at the last place it looks, filling a
    ``tools/call`` message to ``--size`` bytes (default the 1 MiB cap). For each:

    - **ours**: the message decoded (``wire.decode``) and served by ``Server.handle`` as the
      transports hand it over (``size`` given, so arguments from 64 KiB on are validated in a
      worker thread), the tool itself answering at once: the median of ``--rounds``;
    - **the loop's longest stall** during that request: a probe task on the same event loop
      wakes every millisecond and records its longest lateness, which is what every other
      request of the process waited;
    - **the baseline**: jsonschema as the server used it before (a refusal picked by
      ``best_match`` over every error) on the same instance, in a child process cut off at
      ``--cutoff`` seconds (a cut run prints ``>cutoff``).

    Target: ours under 100 ms per request for every family. Ratios are baseline / ours.

How to run (from the repository root; a few minutes, most of them the baseline's)
    .venv/bin/python bench/validation.py [--size BYTES] [--rounds N] [--cutoff SECONDS]
    .venv/bin/python bench/validation.py --families "uniqueItems, objects;anyOf" --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import datetime
import json
import multiprocessing
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jsonschema import Draft202012Validator, exceptions

from beammcp_django.protocol import wire
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.server import Server, ServerOptions
from tests.validation_families import FAMILIES, Family

TARGET_MS = 100.0
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class OneTool:
    """A catalog of one tool, ``f``, answering at once: only the server's work is timed."""

    resources: tuple[Any, ...] = ()
    prompts: tuple[Any, ...] = ()

    def __init__(self, schema: dict[str, Any]) -> None:
        self.tools = (ToolSpec("f", schema),)

    async def dispatch(self, name: str, arguments: Any, context: Any) -> str:
        return "accepted"

    def read_resource(self, match: Any, context: Any) -> Any:
        raise NotImplementedError

    def get_prompt(self, name: str, arguments: Any, context: Any) -> Any:
        raise NotImplementedError


def message_bytes(family: Family, size: int, refused: bool) -> bytes:
    arguments = family.arguments(size, refused)
    return wire.encode(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "f", "arguments": arguments, "_meta": META},
        }
    )


async def serve_once(server: Server, data: bytes) -> tuple[float, float, bool]:
    """(seconds to decode and answer, the loop's longest stall meanwhile, refused?)."""
    stalls: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        loop = asyncio.get_running_loop()
        while not done.is_set():
            before = loop.time()
            await asyncio.sleep(0.001)
            stalls.append(loop.time() - before - 0.001)

    prober = asyncio.create_task(probe())
    await asyncio.sleep(0.005)  # the probe is running
    started = time.perf_counter()
    reply = await server.handle(wire.decode(data), size=len(data))
    elapsed = time.perf_counter() - started
    done.set()
    await prober
    assert reply is not None and "result" in reply, reply
    return elapsed, max(stalls, default=0.0), bool(reply["result"].get("isError"))


def ours(family: Family, data: bytes, rounds: int) -> dict[str, float]:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)

    async def run_sync(function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, function, *args)

    server = Server(
        OneTool(family.schema),
        ServerOptions(name="bench", version="0"),
        cursor_key=b"bench",
        offload=run_sync,
    )
    asyncio.run(serve_once(server, data))  # warm: the index built, the threads started
    times, stalls = [], []
    for _ in range(rounds):
        elapsed, stall, _ = asyncio.run(serve_once(server, data))
        times.append(elapsed)
        stalls.append(stall)
    pool.shutdown()
    return {"ms": statistics.median(times) * 1000, "stall_ms": statistics.median(stalls) * 1000}


def _baseline_child(schema: dict[str, Any], data: bytes, sending: Any) -> None:
    instance = wire.decode(data)["params"]["arguments"]
    validator = Draft202012Validator(schema)
    started = time.perf_counter()
    errors = list(validator.iter_errors(instance))
    if errors:
        exceptions.best_match(errors)
    sending.send(time.perf_counter() - started)


def baseline(family: Family, data: bytes, cutoff: float) -> float | None:
    """jsonschema's seconds on the same instance, or None when cut off."""
    fork = multiprocessing.get_context("fork")
    receiving, sending = fork.Pipe(duplex=False)
    child = fork.Process(target=_baseline_child, args=(family.schema, data, sending), daemon=True)
    child.start()
    try:
        if receiving.poll(cutoff):
            return receiving.recv()
        return None
    finally:
        child.kill()
        child.join()


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=wire.MAX_MESSAGE_BYTES)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cutoff", type=float, default=10.0)
    parser.add_argument("--families", help="names separated by ';' (default: every family)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    arguments = parser.parse_args()
    chosen = FAMILIES
    if arguments.families:
        wanted = {name.strip() for name in arguments.families.split(";")}
        chosen = tuple(family for family in FAMILIES if family.name in wanted)

    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, commit {commit()}, "
        f"Python {platform.python_version()}, size {arguments.size} bytes, "
        f"{arguments.rounds} rounds (median), baseline cut off at {arguments.cutoff:g} s"
    )
    header = f"{'family':34} {'case':8} {'bytes':>9} {'ours ms':>8} {'stall ms':>8} "
    print(header + f"{'jsonschema':>11} {'ratio':>8}  target")
    rows, missed = [], []
    for family in chosen:
        for refused in (False, True):
            data = message_bytes(family, arguments.size, refused)
            mine = ours(family, data, arguments.rounds)
            theirs = baseline(family, data, arguments.cutoff)
            shown = f">{arguments.cutoff:g} s" if theirs is None else f"{theirs * 1000:.1f} ms"
            ratio = (
                f">{arguments.cutoff * 1000 / mine['ms']:.0f}x"
                if theirs is None
                else f"{theirs * 1000 / mine['ms']:.1f}x"
            )
            meets = mine["ms"] < TARGET_MS
            if not meets:
                missed.append(f"{family.name} ({'refused' if refused else 'accepted'})")
            case = "refused" if refused else "accepted"
            print(
                f"{family.name:34} {case:8} {len(data):9} {mine['ms']:8.1f} "
                f"{mine['stall_ms']:8.1f} {shown:>11} {ratio:>8}  "
                f"{'meets' if meets else 'MISSES'}"
            )
            rows.append(
                {
                    "family": family.name,
                    "case": case,
                    "bytes": len(data),
                    **mine,
                    "jsonschema_ms": None if theirs is None else theirs * 1000,
                }
            )
    print(f"\nover the {TARGET_MS:g} ms target: {', '.join(missed) if missed else 'none'}")
    if arguments.json:
        arguments.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
