"""Benchmark: the README's serving path against the bench's uvicorn line, and the SDK as its
users run it, side by side with ours.

What it measures (issue 41, goals 3 and 6)
    ``bench/http.py``'s machinery (wrk, interleaved rounds, medians, the server's CPU per
    request), with servers of its own beside that script's ``ours``:

    - ``ours-readme``: the README's first command, ``manage.py mcp_serve``, on the sample's own
      settings (``DEBUG`` on, as the sample ships it) with uvicorn's access log on (written
      to a file here, as a terminal would take it);
    - ``ours-debug``: the bench's uvicorn line with ``DEBUG`` on (``bench/debug_settings.py``);
    - ``ours-access``: the bench's uvicorn line with uvicorn's access log on;
    - ``ours-asyncio``: the bench's uvicorn line on asyncio's own event loop (``--loop
      asyncio``), as ``mcp_serve`` serves where uvloop is not installed;
    - ``sdk-shipped``: the SDK peer as its users run it, under uvicorn's own httptools parser
      and without ``gc.freeze()`` (``bench/http.py``'s ``sdk`` runs under the main command's
      parser with its heap frozen, as ours: the fairer engine comparison, not the one a user
      meets);
    - ``bare``: the raw ASGI ceiling, in every run.

    Targets: the README's path at least 0.9x the bench's line (the access log and DEBUG cost
    at most 10% together); ours at least 5x the SDK as shipped.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``)
    .venv/bin/python bench/serve_paths.py                    # 5 rounds of 10 s: ~6 min
    .venv/bin/python bench/serve_paths.py --rounds 3 --seconds 5 --groups readme

It exits 0 when every load was served without errors (a missed target is a finding, not a
failure) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench import reports  # noqa: E402
from bench.http import (  # noqa: E402
    ANY_POST,
    CALL_ASYNC,
    CALL_SYNC,
    GROUPS,
    LOADS,
    OURS_APP,
    OURS_SYNC,
    SERVERS,
    Comparison,
    Exchange,
    Group,
    Load,
    ServerSpec,
    measure,
    report,
)


@dataclass(frozen=True)
class PathSpec(ServerSpec):
    """A server of ``bench/http.py``'s kind, or the README's command, or with uvicorn's access
    log on."""

    access_log: bool = False
    asyncio_loop: bool = False

    def command(self, port: int) -> list[str]:
        if self.runner == "mcp_serve":  # the README's first command, on another port
            return [sys.executable, "manage.py", "mcp_serve", "--port", str(port)]
        command = super().command(port)
        if self.asyncio_loop:
            command[command.index("uvloop")] = "asyncio"
        if self.access_log:
            command.remove("--no-access-log")
        return command


SERVERS.update(
    {
        spec.key: spec
        for spec in (
            PathSpec(
                "ours-readme",
                "ours, the README's mcp_serve",
                OURS_APP,
                runner="mcp_serve",
                environment=(("DJANGO_SETTINGS_MODULE", "sample_project.settings"),),
            ),
            PathSpec(
                "ours-debug",
                "ours, DEBUG on",
                OURS_APP,
                environment=(("DJANGO_SETTINGS_MODULE", "bench.debug_settings"),),
            ),
            PathSpec("ours-access", "ours, uvicorn's access log on", OURS_APP, access_log=True),
            PathSpec("ours-asyncio", "ours, asyncio's own loop", OURS_APP, asyncio_loop=True),
            PathSpec(
                "sdk-shipped",
                "SDK mcp 2.3.0 as shipped (uvicorn's httptools, no freeze)",
                "bench.sdk_peer:application",
                environment=(("BENCH_FREEZE", "0"),),
                http="httptools",
            ),
        )
    }
)
PATHS = ("readme", "debug", "access", "asyncio")
for key in (*(f"ours-{path}" for path in PATHS), "sdk-shipped"):
    LOADS[f"{key}.echo.c32"] = Load(f"{key}.echo.c32", key, CALL_SYNC, 32)
# The sample's sync echo declared never to block (bench/benchapp/mcp.py): run on the loop.
CALL_ON_LOOP = Exchange("tools/call", "echo_on_loop")
for load in (
    Load("ours.echo_on_loop.c32", "ours", CALL_ON_LOOP, 32),
    Load("ours.echo_async.c1", "ours", CALL_ASYNC, 1),
    Load("ours.echo_on_loop.c1", "ours", CALL_ON_LOOP, 1),
    Load("bare.c1", "bare", ANY_POST, 1),
):
    LOADS[load.key] = load

PATH_GROUPS = {
    "readme": Group(
        ("bare.c32", OURS_SYNC, *(f"ours-{path}.echo.c32" for path in PATHS)),
        (
            Comparison(
                "the README's mcp_serve / the bench's line, echo c=32 req/s",
                "ours-readme.echo.c32",
                OURS_SYNC,
                "rps",
                0.9,
            ),
            Comparison(
                "the README's mcp_serve / the bench's line, CPU per request",
                "ours-readme.echo.c32",
                OURS_SYNC,
                "cpu_us_per_request",
            ),
            Comparison("DEBUG on / off, echo c=32 req/s", "ours-debug.echo.c32", OURS_SYNC, "rps"),
            Comparison(
                "asyncio's loop / uvloop, echo c=32 req/s",
                "ours-asyncio.echo.c32",
                OURS_SYNC,
                "rps",
            ),
            Comparison(
                "uvicorn's access log on / off, echo c=32 req/s",
                "ours-access.echo.c32",
                OURS_SYNC,
                "rps",
            ),
            Comparison(
                "ours echo c=32 / bare ASGI ceiling, CPU per request",
                OURS_SYNC,
                "bare.c32",
                "cpu_us_per_request",
            ),
        ),
        quick=True,
    ),
    "sdk-shipped": Group(
        ("bare.c32", OURS_SYNC, "ours.echo_on_loop.c32", "sdk.echo.c32", "sdk-shipped.echo.c32"),
        (
            Comparison(
                "tools/call echo (sync) c=32 vs the SDK as shipped, req/s",
                OURS_SYNC,
                "sdk-shipped.echo.c32",
                "rps",
                5,
            ),
            Comparison(
                "tools/call echo (sync) c=32 vs the SDK frozen, our parser, req/s",
                OURS_SYNC,
                "sdk.echo.c32",
                "rps",
            ),
            Comparison(
                "ours echo c=32 / bare ASGI ceiling, CPU per request",
                OURS_SYNC,
                "bare.c32",
                "cpu_us_per_request",
                at_most=2.5,
            ),
            Comparison(
                "echo_on_loop (sync, never_blocks) c=32 vs the SDK's sync echo as shipped, req/s",
                "ours.echo_on_loop.c32",
                "sdk-shipped.echo.c32",
                "rps",
                5,
            ),
            Comparison(
                "ours echo_on_loop c=32 / bare ASGI ceiling, CPU per request",
                "ours.echo_on_loop.c32",
                "bare.c32",
                "cpu_us_per_request",
                at_most=2.5,
            ),
        ),
        quick=True,
    ),
}
PATH_GROUPS["latency"] = Group(
    ("bare.c1", "ours.echo.c1", "ours.echo_on_loop.c1", "ours.echo_async.c1"),
    (
        Comparison(
            "ours echo (sync) c=1 / bare ASGI ceiling, p50 latency",
            "ours.echo.c1",
            "bare.c1",
            "p50_us",
            at_most=1.7,
        ),
        Comparison(
            "ours echo_on_loop (sync, never_blocks) c=1 / bare ASGI ceiling, p50 latency",
            "ours.echo_on_loop.c1",
            "bare.c1",
            "p50_us",
            at_most=1.7,
        ),
        Comparison(
            "ours echo_async c=1 / bare ASGI ceiling, p50 latency",
            "ours.echo_async.c1",
            "bare.c1",
            "p50_us",
            at_most=1.7,
        ),
        Comparison(
            "ours echo (sync) c=1 / bare ASGI ceiling, CPU per request",
            "ours.echo.c1",
            "bare.c1",
            "cpu_us_per_request",
        ),
    ),
    quick=True,
)
GROUPS.update(PATH_GROUPS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=10.0, help="one load (default 10 s)")
    parser.add_argument(
        "--groups", default=",".join(PATH_GROUPS), help=f"from: {', '.join(PATH_GROUPS)}"
    )
    arguments = parser.parse_args()
    groups = arguments.groups.split(",")
    if unknown := [name for name in groups if name not in PATH_GROUPS]:
        parser.error(f"unknown groups: {', '.join(unknown)}")
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    load_keys = list(dict.fromkeys(key for name in groups for key in GROUPS[name].loads))
    estimate = len(load_keys) * (arguments.rounds * arguments.seconds + 1)
    print(f"{len(load_keys)} loads x {arguments.rounds} rounds: about {estimate / 60:.1f} min")
    header = reports.header(
        "serve_paths.py",
        f"wrk -t2 -d{arguments.seconds:g}s, {arguments.rounds} interleaved rounds, medians",
    )
    with tempfile.TemporaryDirectory(prefix="bench-paths-") as temporary:
        samples, problems = measure(load_keys, arguments.rounds, arguments.seconds, Path(temporary))
    print()
    print(report(samples, groups, problems, header))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
