"""Load through a real server on loopback: 1,000 concurrent ``tools/call`` requests mixed
with 200 drip clients and 100 oversized bodies, all at once, against uvicorn and daphne.

Every legitimate call is answered with its own text (none lost, none mixed); every drip and
every oversized body gets the outcome docs/transports.md documents for that server. The
server process's resident set (``/proc/PID/status`` VmRSS) is read after a warm-up, at the
peak of the load and after a settle period; the same load is then run a second time.

The server runs with ``tests.http_settings`` (a 1-s body deadline) in a process of its own,
so nothing else shares its memory. The client is asyncio on raw sockets, one connection per
request (``Connection: close``), every wait bounded. The figures are printed (``pytest -s``)
and go with every failure.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.http import mcphttp_support
from tests.http.mcphttp_support import (
    MAX_BODY,
    Response,
    ServerProcess,
    encode,
    http_request,
    message,
    server_env,
    start_server,
)
from tests.stdio.conftest import memory_kib

pytestmark = [pytest.mark.slow, pytest.mark.one_leg, pytest.mark.alone]

LEGITIMATE = 1_000
DRIPS = 200
OVERSIZED = 100
# Warm-up before the first measure, so lazily built state exists: legitimate calls at a
# modest concurrency, plus a few drips and oversized bodies.
WARM_UP = 300
WARM_UP_CONCURRENCY = 50
WARM_UP_OTHERS = 10
# A drip sends its body in this many slices, one per gap: 9 s in all, far past the 1-s
# deadline even when a loaded server starts reading late.
DRIP_SLICES = 30
DRIP_GAP = 0.3
# No single connection may wait longer than this, on a shared and noisy 2-core machine.
PATIENCE = 120.0
# After each load: one discover request per tick for this long, then the measure. A process
# that serves allocates, so its garbage collector runs, as it would in production.
SETTLE_SECONDS = 5.0
SETTLE_TICK = 0.5
SAMPLE_TICK = 0.05
RESIDENT_GROWTH_LIMIT = 1.10
# Open sockets the client and the server need, with room for the server's own files.
FILE_LIMIT = 4 * (LEGITIMATE + DRIPS + OVERSIZED)
# Listen queue for 1,300 connections arriving at once. uvicorn's default is 2048 already;
# daphne's is Twisted's 50, which overflowed (the kernel's ListenOverflows counter rose by
# about 1,000 per load) and reset 6 to 55 drip and oversized connections in some runs.
BACKLOG = 2048


@dataclass
class Outcome:
    """What one connection got: the response, when, and whether the server then closed."""

    response: Response
    seconds: float
    closed: bool
    body_complete: bool = True


@dataclass
class Round:
    """One load: what every connection got, and the resident set at its peak and after."""

    echoes: list[tuple[int, str, Outcome]]
    drips: list[Outcome]
    oversized: list[Outcome]
    failures: Counter[str]
    seconds: dict[str, float]
    peak_kib: int
    after_kib: int


@dataclass
class LoadRun:
    """A server's resident set after the warm-up, then its two loads; prints as the report."""

    kind: str
    before_kib: int
    warm_up_seconds: float
    rounds: list[Round] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"[{self.kind}] resident set after warm-up ({self.warm_up_seconds:.1f} s): "
            f"{self.before_kib / 1024:.1f} MiB"
        ]
        for number, each in enumerate(self.rounds, 1):
            times = ", ".join(f"{name} {value:.2f} s" for name, value in each.seconds.items())
            lines.append(
                f"[{self.kind}] load {number}: peak {each.peak_kib / 1024:.1f} MiB, after "
                f"{SETTLE_SECONDS:.0f} s settle {each.after_kib / 1024:.1f} MiB; "
                f"{len(each.echoes)} calls, {len(each.drips)} drips, "
                f"{len(each.oversized)} oversized answered, failures {dict(each.failures)}; "
                f"{times}"
            )
        return "\n".join(lines)


# -- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def enough_files() -> Iterator[None]:
    """Raise this process's open-file limit for the sockets (the server inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(soft, min(FILE_LIMIT, hard))
    assert wanted >= FILE_LIMIT, f"the open-file limit {hard} is below {FILE_LIMIT}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture(scope="module", params=["mcp_serve", "daphne"])
def load_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, enough_files: None
) -> Iterator[tuple[ServerProcess, LoadRun]]:
    """A server process of our own, warmed up and then loaded twice."""
    workdir = tmp_path_factory.mktemp(f"load-{request.param}")
    server = start_server(request.param, server_env(workdir), workdir, backlog=BACKLOG)
    try:
        run = asyncio.run(load_twice(server))
        print(f"\n{run}")
        yield server, run
    finally:
        server.stop()


# -- the client ------------------------------------------------------------------------------


async def read_response(reader: asyncio.StreamReader) -> Response:
    """One HTTP/1.1 response with a Content-Length body (every answer of the endpoint)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")[:-2]
    _, code, *reason = status_line.split(" ", 2)
    headers = []
    for line in lines:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    response = Response(int(code), "".join(reason), headers, b"")
    response.body = await reader.readexactly(int(response.header("content-length") or 0))
    return response


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True when the server closes the connection after its response: EOF, or a reset (a
    server that closes with unread bytes, such as the rest of a drip, sends RST)."""
    try:
        return await asyncio.wait_for(reader.read(), PATIENCE) == b""
    except ConnectionError:
        return True
    except TimeoutError:
        return False


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), PATIENCE)


async def one_request(port: int, data: bytes) -> Outcome:
    """Send a whole request on a new connection; read the response and the close."""
    started = time.monotonic()
    reader, writer = await connect(port)
    try:
        writer.write(data)
        await writer.drain()
        response = await asyncio.wait_for(read_response(reader), PATIENCE)
        seconds = time.monotonic() - started
        return Outcome(response, seconds, await closed_by_server(reader))
    finally:
        writer.close()


async def legitimate(port: int, index: int, phase: str) -> tuple[int, str, Outcome]:
    """One ``echo`` call whose text no other call in the run sends."""
    text = f"{phase}-{index}-échoé-{index * 7919}"
    value = message(f"{phase}-{index}", "tools/call", {"name": "echo", "arguments": {"text": text}})
    return index, text, await one_request(port, http_request(value, close=True))


async def drip(port: int, index: int) -> Outcome:
    """Headers, then the body a slice per ``DRIP_GAP``; stop sending once an answer comes."""
    value = message(f"drip-{index}", "server/discover")
    body = encode(value)
    size = -(-len(body) // DRIP_SLICES)
    started = time.monotonic()
    reader, writer = await connect(port)
    try:
        writer.write(http_request(value, body=b"", content_length=len(body), close=True))
        answer = asyncio.ensure_future(read_response(reader))
        sent = 0
        while sent < len(body):
            done, _ = await asyncio.wait({answer}, timeout=DRIP_GAP)
            if done:
                break
            try:
                writer.write(body[sent : sent + size])
                await writer.drain()
            except ConnectionError:
                break
            sent += size
        response = await asyncio.wait_for(answer, PATIENCE)
        seconds = time.monotonic() - started
        return Outcome(response, seconds, await closed_by_server(reader), sent >= len(body))
    finally:
        writer.close()


def oversized_request(kind: str, index: int) -> bytes:
    """Uvicorn: only the headers, declaring MAX_BODY + 1 (the 413 must come before any body
    byte). Daphne reads the whole body before the application sees the request, so there
    the whole body is sent, as docs/transports.md says."""
    value = message(f"big-{index}", "server/discover")
    if kind == "mcp_serve":
        return http_request(value, body=b"", content_length=MAX_BODY + 1, close=True)
    return http_request(value, body=encode(value).ljust(MAX_BODY + 1, b" "), close=True)


async def gathered(tasks: list[Awaitable[Any]]) -> tuple[list[Any], Counter[str]]:
    """Every task's result, and the failures counted by type."""
    results = await asyncio.gather(*tasks, return_exceptions=True)
    failures = Counter(type(item).__name__ for item in results if isinstance(item, BaseException))
    return [item for item in results if not isinstance(item, BaseException)], failures


# -- the run ---------------------------------------------------------------------------------


async def resident_peak(pid: int, stop: asyncio.Event) -> int:
    peak = memory_kib(pid, "VmRSS")
    while not stop.is_set():
        peak = max(peak, memory_kib(pid, "VmRSS"))
        await asyncio.sleep(SAMPLE_TICK)
    return peak


async def settle(server: ServerProcess) -> int:
    """Serve one discover per tick for ``SETTLE_SECONDS``; the resident set afterwards."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        await asyncio.sleep(SETTLE_TICK)
        ping = http_request(message("settle", "server/discover"), close=True)
        outcome = await one_request(server.port, ping)
        assert outcome.response.status == 200, outcome.response.body[:300]
    return memory_kib(server.proc.pid, "VmRSS")


async def warm_up(server: ServerProcess) -> None:
    limit = asyncio.Semaphore(WARM_UP_CONCURRENCY)

    async def limited(index: int) -> tuple[int, str, Outcome]:
        async with limit:
            return await legitimate(server.port, index, "warm")

    tasks: list[Awaitable[Any]] = [limited(index) for index in range(WARM_UP)]
    tasks += [drip(server.port, index) for index in range(WARM_UP_OTHERS)]
    tasks += [
        one_request(server.port, oversized_request(server.kind, index))
        for index in range(WARM_UP_OTHERS)
    ]
    results, failures = await gathered(tasks)
    assert not failures, f"{server.kind} warm-up failures: {dict(failures)}"
    assert len(results) == len(tasks)


async def load(server: ServerProcess) -> Round:
    """The three kinds of client at once, as one connection storm."""
    stop_sampling = asyncio.Event()
    sampler = asyncio.ensure_future(resident_peak(server.proc.pid, stop_sampling))
    started = time.monotonic()
    echo_run = asyncio.ensure_future(
        gathered([legitimate(server.port, index, "load") for index in range(LEGITIMATE)])
    )
    drip_run = asyncio.ensure_future(gathered([drip(server.port, index) for index in range(DRIPS)]))
    big_run = asyncio.ensure_future(
        gathered(
            [
                one_request(server.port, oversized_request(server.kind, index))
                for index in range(OVERSIZED)
            ]
        )
    )
    echoes, echo_failures = await echo_run
    calls_done = time.monotonic() - started
    drips, drip_failures = await drip_run
    oversized, big_failures = await big_run
    seconds = {"1,000 calls": calls_done, "whole load": time.monotonic() - started}
    stop_sampling.set()
    peak = await sampler
    if echoes:
        latencies = [outcome.seconds for _, _, outcome in echoes]
        seconds["call median"] = statistics.median(latencies)
        seconds["call max"] = max(latencies)
    if drips:
        seconds["drip answer median"] = statistics.median(outcome.seconds for outcome in drips)
    if oversized:
        seconds["413 max"] = max(outcome.seconds for outcome in oversized)
    return Round(
        echoes,
        drips,
        oversized,
        echo_failures + drip_failures + big_failures,
        seconds,
        peak,
        await settle(server),
    )


async def load_twice(server: ServerProcess) -> LoadRun:
    started = time.monotonic()
    await warm_up(server)
    await asyncio.sleep(2.0)
    run = LoadRun(server.kind, memory_kib(server.proc.pid, "VmRSS"), time.monotonic() - started)
    run.rounds.append(await load(server))
    run.rounds.append(await load(server))
    return run


# -- the claims ------------------------------------------------------------------------------


def test_under_load_every_call_is_answered_with_its_own_text_and_none_fails(load_run):
    _, run = load_run
    for load_round in run.rounds:
        assert not load_round.failures, str(run)
        assert len(load_round.echoes) == LEGITIMATE, str(run)
        for index, text, outcome in load_round.echoes:
            response = outcome.response
            assert response.status == 200, (str(run), index, response.body[:300])
            payload = response.json()
            assert payload["id"] == f"load-{index}", (str(run), payload)
            result = payload["result"]
            assert result.get("isError") is not True, (str(run), result)
            assert [block["text"] for block in result["content"]] == [text], (str(run), result)


def test_under_load_every_drip_gets_the_documented_outcome(load_run):
    server, run = load_run
    drips = [outcome for load_round in run.rounds for outcome in load_round.drips]
    assert len(drips) == DRIPS * len(run.rounds), str(run)
    for outcome in drips:
        response = outcome.response
        if server.kind == "mcp_serve":
            # Refused at the body deadline, before the body was complete, and closed.
            assert response.status == 408, (str(run), response.status, response.body[:300])
            assert response.json()["error"]["code"] == -32600, str(run)
            assert response.says_close and outcome.closed, (str(run), response.headers)
            assert not outcome.body_complete, str(run)
        else:
            # Daphne buffers the body first: the drip is not held to the deadline and is
            # answered once its last byte arrives (docs/transports.md).
            assert outcome.body_complete, str(run)
            assert response.status == 200, (str(run), response.status, response.body[:300])
            assert response.json()["result"]["resultType"] == "complete", str(run)


def test_under_load_every_oversized_body_is_413_and_closed(load_run):
    _, run = load_run
    oversized = [outcome for load_round in run.rounds for outcome in load_round.oversized]
    assert len(oversized) == OVERSIZED * len(run.rounds), str(run)
    for outcome in oversized:
        response = outcome.response
        assert response.status == 413, (str(run), response.status, response.body[:300])
        assert response.json()["error"]["code"] == -32600, str(run)
        assert str(MAX_BODY).encode() in response.body, str(run)
        assert response.says_close and outcome.closed, (str(run), response.headers)


def test_after_the_load_the_server_is_alive_and_serving(load_run):
    server, _ = load_run
    assert server.alive(), server.log_tail()
    assert mcphttp_support.discover_works(server.port), server.log_tail()


def test_a_second_identical_load_stays_within_10_percent_of_the_first_loads_peak(load_run):
    """Repeated loads plateau: nothing accumulates from one load to the next. (Compared with
    the first load's peak, not its settled size: under daphne, glibc gives back the heap that
    held the buffered bodies at its own pace, 127 or 222 MiB five seconds after the same
    load in two CI runs.)"""
    _, run = load_run
    first, second = run.rounds
    assert second.peak_kib <= first.peak_kib * RESIDENT_GROWTH_LIMIT, str(run)
    assert second.after_kib <= first.peak_kib * RESIDENT_GROWTH_LIMIT, str(run)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "the freed memory stays with the allocators, not with live objects (measured "
        "2026-11-29 in the server process): under uvicorn, after gc.collect() the live blocks "
        "are back to the pre-load count, yet CPython's small-object allocator holds about 19 "
        "more 1-MiB arenas than before (1,135 free pools, 18.6 MB), each pinned by a few "
        "surviving blocks, and even after malloc_trim(0) the set is 21% over; under daphne, "
        "glibc keeps the heap that held the 100 buffered 1-MiB bodies (malloc_trim(0) gives "
        "back about 110 MB, leaving it 15% over)"
    ),
)
def test_after_the_load_the_resident_set_returns_within_10_percent_of_its_pre_load_size(
    load_run,
):
    _, run = load_run
    assert run.rounds[0].after_kib <= run.before_kib * RESIDENT_GROWTH_LIMIT, str(run)
