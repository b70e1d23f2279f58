"""Benchmark: where one call's time goes at one connection, stage by stage, beside the bare
ASGI ceiling.

What it measures (issue 41, goal 1)
    ``bench/http.py``'s servers and wrk loads at one connection (``-t1 -c1``, an agent
    calling one tool after another): the bare ASGI callable (the ceiling: uvicorn, the loop,
    the kernel and the load generator) and ours with the sample's sync ``echo`` (a worker
    thread), ``echo_on_loop`` (the same, ``never_blocks``) and ``echo_async``. Each load runs
    once unprofiled (its p50 and the server's CPU per request) and once under py-spy
    (``--gil``: samples of the thread holding the GIL, 1,000 a second), and every sample is
    given to the innermost stage on its stack (``STAGES``: the request's path through the
    package, in order). A stage's microseconds are its samples over the rate and the
    requests served while profiled: time with the GIL held, the server's Python and the C it
    calls. What the CPU per request holds beyond that is the kernel's (system calls, a
    thread woken); a sync tool's hop to its worker thread is mostly waiting, seen whole in
    the p50 difference between ``echo`` and ``echo_on_loop``, printed as such.

How to run (from the repository root; needs ``apt-get install wrk`` and
``requirements/bench.txt``, which has py-spy; run as root or with ptrace allowed)
    .venv/bin/python bench/stages.py                  # 10 s a load: about 2 minutes
    .venv/bin/python bench/stages.py --seconds 20 --rate 1000

It exits 0 when every load was served without errors and 1 otherwise. The stage table is a
sampling profile: read each stage to a microsecond or two, and the whole as the CPU figure.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench import reports  # noqa: E402
from bench.http import (  # noqa: E402
    ANY_POST,
    CALL_ASYNC,
    CALL_SYNC,
    HOST_THREADS_FRAME,
    Exchange,
    Load,
    Profile,
    run_wrk,
    running,
    sampled_by_py_spy,
    wrk_script,
)

CALL_ON_LOOP = Exchange("tools/call", "echo_on_loop")
LOADS = (
    Load("bare.c1", "bare", ANY_POST, 1),
    Load("ours.echo.c1", "ours", CALL_SYNC, 1),
    Load("ours.echo_on_loop.c1", "ours", CALL_ON_LOOP, 1),
    Load("ours.echo_async.c1", "ours", CALL_ASYNC, 1),
)

# (stage, frames that open it): a sample belongs to the innermost stage whose frame is on its
# stack; one on none of them is uvicorn's (the HTTP parser, the ASGI cycle, the loop).
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the router, observation and request signals", ("McpRouter.__call__ ",)),
    ("the method, headers, Host and Origin", ("McpEndpoint.__call__ ",)),
    ("admission: content type, request facts, authorize", ("McpEndpoint._serve ",)),
    ("the body read and decoded", ("McpEndpoint._decoded_body ",)),
    ("the message read, its headers mirrored", ("McpEndpoint._answer ",)),
    ("the exchange (reply bookkeeping)", ("Exchange.run ", "Exchange.__init__ ")),
    ("the method: lookup, arguments validated, result", ("Server.serve ",)),
    ("the host call: observed, bounded, where it runs", ("ServerBase.call_host ",)),
    ("the tool itself", ("EchoAsync.call ", "Echo.call ")),
    ("the sync tool's worker thread (hop, hygiene)", (HOST_THREADS_FRAME,)),
    ("the reply encoded", ("encode_reply ",)),
    ("the response written (uvicorn's send, the socket)", ("RequestResponseCycle.send ",)),
)
UVICORN = "uvicorn and the loop: the HTTP parser, the ASGI cycle"


def stage_of(frames: list[str]) -> str:
    for frame in reversed(frames):
        for stage, openers in reversed(STAGES):
            if any(frame.startswith(opener) for opener in openers):
                return stage
    return UVICORN


def stages(profile: Profile) -> Counter[str]:
    counts: Counter[str] = Counter()
    for frames, count in profile.stacks:
        counts[stage_of(frames)] += count
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="one load (default 10 s)")
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples a second")
    arguments = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 1
    seconds = arguments.seconds
    print(
        reports.header(
            "stages.py",
            f"wrk -t1 -c1 -d{seconds:g}s, then py-spy record --rate {arguments.rate} --gil "
            "--function during another run of the same load",
        )
    )
    measured: dict[str, tuple[float, float, Counter[str], float]] = {}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="beammcp-stages-") as name:
        directory = Path(name)
        with running({load.server for load in LOADS}, directory) as servers:
            for load in LOADS:
                server = servers[load.server]
                script = wrk_script(load, directory)
                server.check(load.exchange)
                run_wrk(load, server, 1, script)  # warm-up
                plain = run_wrk(load, server, seconds, script)
                options = ["--rate", str(arguments.rate), "--duration", f"{seconds:g}"]
                options += ["--gil", "--function", "--format", "raw"]
                profiled, profile = sampled_by_py_spy(
                    server.process.pid,
                    options,
                    directory / f"{load.key}.raw",
                    seconds,
                    lambda: run_wrk(load, server, seconds + 2, script),  # noqa: B023 - at once
                )
                for sample in (plain, profiled):
                    if sample.errors or sample.non_2xx:
                        problems.append(f"{load.key}: {sample.non_2xx} non-2xx, {sample.errors}")
                requests = profiled.rps * seconds  # served while py-spy sampled
                measured[load.key] = (
                    plain.p50_us,
                    plain.cpu_us_per_request,
                    stages(profile),
                    arguments.rate * requests / 1e6,  # samples per µs of one request
                )
    print(report(measured))
    print(f"problems: {'; '.join(problems) or 'none'}")
    return 1 if problems else 0


def report(measured: dict[str, tuple[float, float, Counter[str], float]]) -> str:
    keys = list(measured)
    width = max(len(stage) for stage, _ in STAGES) + 2
    lines = ["", f"{'µs per request':<{width}}" + "".join(f"{key:>22}" for key in keys)]
    lines.append(
        f"{'p50 at one connection (unprofiled)':<{width}}"
        + "".join(f"{measured[key][0]:22.0f}" for key in keys)
    )
    lines.append(
        f"{'server CPU per request (unprofiled)':<{width}}"
        + "".join(f"{measured[key][1]:22.1f}" for key in keys)
    )
    lines.append(
        f"{'GIL held per request (profiled), by stage:':<{width}}"
        + "".join(f"{sum(measured[key][2].values()) / measured[key][3]:22.1f}" for key in keys)
    )
    for stage in (UVICORN, *(stage for stage, _ in STAGES)):
        row = "".join(f"{measured[key][2][stage] / measured[key][3]:22.1f}" for key in keys)
        lines.append(f"  {stage:<{width - 2}}" + row)
    bare = measured["bare.c1"][0]
    lines.append("")
    for key in keys[1:]:
        lines.append(f"p50 {key} / bare: {measured[key][0] / bare:.2f}x")
    hop = measured["ours.echo.c1"][0] - measured["ours.echo_on_loop.c1"][0]
    lines.append(
        f"the worker-thread hop at one connection (p50, echo - echo_on_loop): {hop:.0f} µs"
    )
    spread = statistics.median(measured[key][1] for key in keys[2:]) - measured["bare.c1"][1]
    lines.append(
        f"ours on the loop over the bare ceiling, CPU per request (median): {spread:.1f} µs"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
