"""Benchmark: request heads that never end, and heads too large, against uvicorn's own
httptools parser and against the main command's bounded one, in the same run.

What it measures
    uvicorn's httptools protocol bounds neither how long a request head may take nor how
    large one header field may grow (the parser buffers a field until it ends);
    ``manage.py mcp_serve`` runs ``beammcp_django.serving.http11:BoundedHttpToolsProtocol``,
    which bounds both (``HEADER_TIMEOUT_SECONDS``, ``HEADER_MAX_BYTES``: docs/transports.md).
    The same sample server (``bench/bench_settings.py``) is started twice under the HTTP
    bench's uvicorn flags, once with ``--http httptools`` (the baseline) and once with the
    bounded parser, and each gets:

    - ``--slow`` clients that each send a request line and then one header byte a second,
      never finishing the head; after ``--watch`` seconds (past the 10-s
      ``HEADER_TIMEOUT_SECONDS`` default) the script counts those the server still holds
      open;
    - one connection sending ``--fields`` header fields of ``--field-mib`` MiB each; the
      server's resident set (VmRSS) before, and its peak while the bytes go in and for a
      second after, with how the connection ended.

    It prints both servers side by side and the bounded parser's figures against the
    baseline's.

How to run (from the repository root; under a minute)
    .venv/bin/python bench/heads.py [--slow 200] [--watch 15] [--fields 4] [--field-mib 64]

It always exits 0; the figures go into docs/transports.md and docs/threat-model.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def tree_rss_mib(pid: int) -> float:
    """The resident set of the server and its children (uvicorn's worker, if any)."""
    total = rss_mib(pid)
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else []:
        with contextlib.suppress(FileNotFoundError):
            total += tree_rss_mib(int(child))
    return total


async def slow_heads(port: int, clients: int, watch: float) -> int:
    """Open ``clients`` connections dripping a head; how many are still open after
    ``watch`` seconds."""
    opened: list[asyncio.StreamWriter] = []
    closed = 0

    async def one() -> None:
        nonlocal closed
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        opened.append(writer)
        writer.write(b"POST /mcp/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        deadline = time.monotonic() + watch
        try:
            while time.monotonic() < deadline:
                await writer.drain()
                try:
                    # A second's wait for an answer (a 408) or the end of the connection.
                    await asyncio.wait_for(reader.read(1), timeout=1.0)
                except TimeoutError:
                    writer.write(b"a")  # still open: one more byte of the head
                    continue
                closed += 1
                return
        except (ConnectionError, OSError):
            closed += 1

    await asyncio.gather(*(one() for _ in range(clients)))
    for writer in opened:
        writer.close()
    return clients - closed


def large_fields(port: int, pid: int, fields: int, field_mib: int) -> tuple[float, float, str]:
    """Send ``fields`` header values of ``field_mib`` MiB; RSS before, peak, and the end."""
    peak = before = tree_rss_mib(pid)
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            with contextlib.suppress(FileNotFoundError):
                peak = max(peak, tree_rss_mib(pid))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    chunk = b"a" * (1024 * 1024)
    outcome = "all bytes taken"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        try:
            connection.sendall(b"POST /mcp/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            for index in range(fields):
                connection.sendall(f"X-Big-{index}: ".encode())
                for _ in range(field_mib):
                    connection.sendall(chunk)
                connection.sendall(b"\r\n")
            time.sleep(1.0)
        except (ConnectionError, OSError) as error:
            outcome = f"cut off by the server ({type(error).__name__})"
        with contextlib.suppress(OSError):
            connection.settimeout(2)
            answer = connection.recv(200)
            if answer.startswith(b"HTTP/1.1"):
                outcome += f", answered {answer.split(b' ', 2)[1].decode()}"
    time.sleep(1.0)
    done.set()
    watcher.join()
    return before, peak, outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=200, help="slow-head clients (200)")
    parser.add_argument("--watch", type=float, default=15.0, help="seconds to watch them (15)")
    parser.add_argument("--fields", type=int, default=4, help="large header fields (4)")
    parser.add_argument("--field-mib", type=int, default=64, help="MiB per field (64)")
    arguments = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    sys.path.insert(0, str(REPO_ROOT))
    from bench.http import (
        BOUNDED_HTTP,
        OURS_APP,
        Server,
        ServerSpec,
        prepare_environment,
        provenance,
    )

    print(provenance("heads.py"))
    specs = (
        ServerSpec("httptools", "uvicorn's httptools (baseline)", OURS_APP, http="httptools"),
        ServerSpec("bounded", "the main command's bounded parser", OURS_APP, http=BOUNDED_HTTP),
    )
    results = {}
    with tempfile.TemporaryDirectory(prefix="beammcp-heads-") as workdir:
        env = prepare_environment(Path(workdir))
        for spec in specs:
            server = Server(spec, env, Path(workdir))
            try:
                server.wait_ready()
                still_open = asyncio.run(slow_heads(server.port, arguments.slow, arguments.watch))
                before, peak, outcome = large_fields(
                    server.port, server.process.pid, arguments.fields, arguments.field_mib
                )
            finally:
                server.stop()
            results[spec.key] = (still_open, before, peak)
            print(
                f"{spec.label}: {still_open} of {arguments.slow} slow heads still open after "
                f"{arguments.watch:g} s; {arguments.fields} header fields of "
                f"{arguments.field_mib} MiB: RSS {before:.1f} MiB before, peak {peak:.1f} MiB "
                f"(+{peak - before:.1f} MiB), {outcome}"
            )
    base, ours = results["httptools"], results["bounded"]
    print(
        f"bounded / baseline: slow heads held {ours[0]} / {base[0]}; resident set growth "
        f"{ours[2] - ours[1]:.1f} / {base[2] - base[1]:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
