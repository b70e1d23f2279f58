"""Benchmark: the server's memory under sustained and under large in-flight load.

What it measures (issue 6)
    1. Growth: the resident set (VmRSS) of one uvicorn process after the first 1,000
       ``tools/call`` echo requests and after 100,000; target: within 10%.
    2. In flight: 1,000 concurrent requests, each a body at the 1 MiB cap (one argument of
       about 1 MiB), held by the ``hold`` tool while the resident set is sampled; the cost per
       in-flight request is the rise over the idle set divided by 1,000, as a multiple of the
       body; target: at most 1.2x.

How to run (from the repository root; about two minutes)
    .venv/bin/python bench/memory.py [--requests N] [--in-flight N]

Loopback only; the server is ours (``bench.memory_settings``: the HTTP bench's settings plus
``hold``) under the HTTP bench's uvicorn command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the repository root, not bench/

from bench.http import (  # noqa: E402
    MODERN,
    Exchange,
    Server,
    ServerSpec,
    prepare_environment,
    provenance,
)

BODY_CAP = 1_048_576
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def request_bytes(name: str, arguments: dict[str, object], request_id: int = 1) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        },
        separators=(",", ":"),
    ).encode()
    headers = Exchange("tools/call", name).headers()
    head = "".join(f"{key}: {value}\r\n" for key, value in headers.items())
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def read_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length)
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"answered {head[:40]!r}: {body[:200]!r}")
    return body


async def sequential_calls(port: int, count: int, connections: int) -> None:
    """``count`` echo calls over ``connections`` keep-alive connections, each answer checked."""
    request = request_bytes("echo", {"text": "memory"})

    async def one_connection(share: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for _ in range(share):
                writer.write(request)
                body = await read_response(reader)
                if b'"text":"memory"' not in body:
                    raise RuntimeError(f"not the echo: {body[:200]!r}")
        finally:
            writer.close()

    shares = [count // connections + (index < count % connections) for index in range(connections)]
    await asyncio.gather(*(one_connection(share) for share in shares))


async def held_in_flight(port: int, pid: int, count: int, seconds: float) -> tuple[int, int, float]:
    """``count`` requests at the cap held together; the highest resident set seen while every
    one was in flight, the body's size, and how long it all took."""
    filler = (
        BODY_CAP
        - len(request_bytes("hold", {"text": "", "seconds": seconds}).split(b"\r\n\r\n", 1)[1])
        - 64
    )
    request = request_bytes("hold", {"text": "x" * filler, "seconds": seconds})
    body_size = len(request.split(b"\r\n\r\n", 1)[1])
    assert body_size <= BODY_CAP, body_size
    peak = 0
    started = time.monotonic()

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(request)
            await writer.drain()
            body = await read_response(reader)
            if str(filler).encode() not in body:
                raise RuntimeError(f"not the length: {body[:200]!r}")
        finally:
            writer.close()

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_kib(pid))
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(one() for _ in range(count)))
    sampler.cancel()
    return peak, body_size, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--in-flight", type=int, default=1_000)
    parser.add_argument("--hold-seconds", type=float, default=10.0)
    arguments = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    print(provenance("memory.py"))
    with tempfile.TemporaryDirectory() as workdir:
        env = prepare_environment(Path(workdir))
        env["DJANGO_SETTINGS_MODULE"] = "bench.memory_settings"
        spec = ServerSpec("ours", "ours (uvicorn, 1 worker)", "sample_project.asgi:application")
        server = Server(spec, env, Path(workdir))
        try:
            server.wait_ready()
            pid = server.process.pid
            asyncio.run(sequential_calls(server.port, 1_000, 16))
            first = rss_kib(pid)
            started = time.monotonic()
            asyncio.run(sequential_calls(server.port, arguments.requests - 1_000, 16))
            took = time.monotonic() - started
            after = rss_kib(pid)
            print(
                f"growth: RSS after 1,000 requests {first / 1024:.1f} MiB, after "
                f"{arguments.requests:,} {after / 1024:.1f} MiB: {after / first:.3f}x "
                f"(target <= 1.10x; {arguments.requests - 1_000:,} requests in {took:.1f} s)"
            )
            idle = rss_kib(pid)
            peak, body_size, took = asyncio.run(
                held_in_flight(server.port, pid, arguments.in_flight, arguments.hold_seconds)
            )
            per_request = (peak - idle) * 1024 / arguments.in_flight
            print(
                f"in flight: {arguments.in_flight:,} requests of {body_size:,} bytes held at "
                f"once: RSS idle {idle / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB; "
                f"{per_request / 1024:.0f} KiB per request = {per_request / body_size:.2f}x "
                f"the body (target <= 1.2x; all answered in {took:.1f} s)"
            )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
