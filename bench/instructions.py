"""Benchmark: machine instructions per request through our ASGI endpoint, counted by valgrind.

What it measures
    Our endpoint alone (``sample_project.asgi:application`` with ``bench/bench_settings.py``,
    no ASGI server, no sockets), driven in-process by 32 concurrent callers each sending
    ``tools/call`` echo requests one after another, as wrk's connections do. The process runs
    under ``valgrind --tool=callgrind``, which counts the instructions executed: unlike
    seconds, the count barely moves when the machine is busy, so a change of a few percent
    shows. Each tool is run twice, with a small and a large number of requests; the
    difference divided by the difference in requests is the cost of one request, with
    start-up cancelled out. ``PYTHONHASHSEED=0`` keeps dict layouts the same between runs;
    what remains (garbage collections landing differently) is about ±5,000 instructions.

    It counts user-space instructions only: the kernel's work (system calls, the thread
    hand-off's wake-ups) and the time spent waiting are not in it. Seconds and CPU per request
    under a real server are ``bench/http.py``'s.

How to run (from the repository root; valgrind from Debian's packages; about 3 minutes)
    .venv/bin/python bench/instructions.py [--tools echo,echo_async] [--small 320 --large 1600]

``BENCH_FREEZE=0`` in the environment turns the sample's ``FREEZE_HEAP_AT_STARTUP`` off, to
compare with code from before that setting. It always exits 0 when valgrind ran; the figures
go into docs/performance.md with their date.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
CALLERS = 32
WARM_UP_REQUESTS_PER_CALLER = 10


class InProcessPost:
    """``exchange``'s POST, built once, sent to an ASGI application in this process by a
    client that stays connected; a call returns the ASGI messages the application sent."""

    def __init__(self, exchange: Any) -> None:
        self.body = exchange.body()
        self.headers = [(b"host", b"127.0.0.1")] + [
            (name.lower().encode(), value.encode()) for name, value in exchange.headers().items()
        ]
        self.headers.append((b"content-length", str(len(self.body)).encode()))

    async def __call__(self, application: Any) -> list[dict]:
        body = self.body
        sent: list[dict] = []
        delivered = False

        async def receive() -> dict:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # a client that stays connected
            raise AssertionError

        async def send(message: dict) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": self.headers,
            "client": ("127.0.0.1", 50000),
        }
        await application(scope, receive, send)
        return sent


def drive(
    tool: str,
    requests: int,
    measured: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
) -> None:
    """In this process: ``requests`` echo calls through the endpoint, ``CALLERS`` at a time,
    after a checked warm-up; the requests themselves run inside ``measured()``."""
    from bench.http import Exchange
    from sample_project.asgi import application

    exchange = Exchange("tools/call", tool)
    post = InProcessPost(exchange)

    async def one_request(check: bool) -> None:
        sent = await post(application)
        # Every answer is checked during the warm-up; counted, only the status is, so the
        # count is the endpoint's and not the checker's JSON parsing.
        problem = (
            exchange.problem(sent[0]["status"], sent[1]["body"])
            if check
            else (None if sent[0]["status"] == 200 else f"status {sent[0]['status']}")
        )
        if problem is not None:
            raise SystemExit(f"a wrong answer: {problem}")

    async def caller(count: int, check: bool) -> None:
        for _ in range(count):
            await one_request(check)

    async def main() -> None:
        await asyncio.gather(*(caller(WARM_UP_REQUESTS_PER_CALLER, True) for _ in range(CALLERS)))
        with measured():
            await asyncio.gather(*(caller(requests // CALLERS, False) for _ in range(CALLERS)))

    import uvloop

    uvloop.run(main())


def instructions(tool: str, requests: int, env: dict[str, str]) -> int:
    """The instructions callgrind counted for one whole run of ``drive``."""
    completed = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-m",  # as a module: bench/ itself must not be on the path (bench/http.py)
            "bench.instructions",
            "--drive",
            tool,
            str(requests),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", completed.stderr)
    if completed.returncode != 0 or found is None:
        raise SystemExit(f"valgrind run failed ({tool}, {requests}):\n{completed.stderr[-2000:]}")
    return int(found.group(1))


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", default="echo,echo_async", help="comma-separated tools")
    parser.add_argument("--small", type=int, default=320, help="requests in the small run")
    parser.add_argument("--large", type=int, default=1600, help="requests in the large run")
    parser.add_argument("--drive", nargs=2, metavar=("TOOL", "REQUESTS"), help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    if arguments.drive:
        drive(arguments.drive[0], int(arguments.drive[1]))
        return 0
    sys.path.insert(0, str(REPO_ROOT))
    from bench.http import prepare_environment, provenance

    print(provenance("instructions.py"))
    with tempfile.TemporaryDirectory(prefix="beammcp-instructions-") as directory:
        env = {**prepare_environment(Path(directory)), "PYTHONHASHSEED": "0"}
        env.setdefault("BENCH_FREEZE", "1")
        print(f"FREEZE_HEAP_AT_STARTUP {'off' if env['BENCH_FREEZE'] == '0' else 'on'}")
        for tool in arguments.tools.split(","):
            # The two runs of a tool side by side: one per core, and counts ignore the sharing.
            with ThreadPoolExecutor(max_workers=2) as pool:
                small_run = pool.submit(instructions, tool, arguments.small, env)
                large_run = pool.submit(instructions, tool, arguments.large, env)
                small, large = small_run.result(), large_run.result()
            per_request = (large - small) / (arguments.large - arguments.small)
            print(f"tools/call {tool}: {per_request:,.0f} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
