"""A subscriptions/listen reader that stops reading, through ``mcp_serve`` on loopback: past
``SUBSCRIPTION_QUEUE_LIMIT`` waiting notifications the server cuts the stream off itself,
while the reader still reads nothing, and goes on serving.

The client opens the stream with a small receive buffer, reads the acknowledgement, then
stops reading. Changes are announced by calling ``mcphttp_announce`` on the same server (one
worker: its in-memory channel layer reaches the stream, no Redis needed). Each notification
carries the listen request's id, so a long id makes every one large, and the number of
announcements that must block the server's writer is computed from the buffers between it
and the client (``bytes_in_between``) rather than guessed. The same announcements under
daphne show why the bound is ``mcp_serve``'s: there a write never waits, so none is cut off.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    ServerProcess,
    Wire,
    discover_works,
    http_request,
    message,
    post,
    server_env,
    start_server,
)

QUEUE_LIMIT = 2
# The listen request's id, repeated in every notification's _meta: each is this large at least.
SUBSCRIPTION_ID = "overflow-" + "x" * 200_000
RECEIVE_BUFFER = 4096
# uvicorn's line once the application returned with its response unfinished.
RETURNED_UNFINISHED = "ASGI callable returned without completing response"
CUT_OFF = "a subscriptions/listen stream was cut off"


def small_queue(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp(f"listen-overflow-{kind}")
    env = {**server_env(workdir), "BEAMMCP_TEST_SUBSCRIPTION_QUEUE_LIMIT": str(QUEUE_LIMIT)}
    server = start_server(kind, env, workdir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def small_queue_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from small_queue("mcp_serve", tmp_path_factory)


@pytest.fixture(scope="module")
def small_queue_daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from small_queue("daphne", tmp_path_factory)


def bytes_in_between(wire: Wire) -> int:
    """At most how many bytes the server can hand on before its writes block, the client
    reading nothing: the client's receive buffer (as the kernel set it), the server socket's
    send buffer at its largest (Linux grows it up to tcp_wmem's maximum, or to twice
    wmem_max when a program sets SO_SNDBUF; uvicorn does not), and what asyncio's transport
    holds before it pauses the writer (its high-water mark; uvloop's is the same 64 KiB)."""
    received = wire.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    tcp_wmem = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    wmem_max = int(Path("/proc/sys/net/core/wmem_max").read_text())
    return received + max(tcp_wmem, 2 * wmem_max) + asyncio.run(transport_high_water())


async def transport_high_water() -> int:
    """The high-water mark of an asyncio socket transport as made (uvicorn keeps it)."""
    ours, theirs = socket.socketpair()
    with theirs:
        _, writer = await asyncio.open_connection(sock=ours)
        high = writer.transport.get_write_buffer_limits()[1]
        writer.close()
        await writer.wait_closed()
    return high


def dechunked(body: bytes) -> tuple[bytes, bool]:
    """The data of the whole chunks of a chunked body so far, and whether its last chunk
    (size 0: the response's end) arrived."""
    data = bytearray()
    at = 0
    while (end := body.find(b"\r\n", at)) >= 0:
        size = int(body[at:end].split(b";")[0], 16)
        if size == 0:
            return bytes(data), True
        if len(body) < end + 2 + size + 2:
            break
        data += body[end + 2 : end + 2 + size]
        at = end + 2 + size + 2
    return bytes(data), False


def stream_so_far(raw: bytes) -> tuple[bytes, list[dict], bool]:
    """The response head, the complete SSE events' JSON, whether the body ended."""
    head, _, body = raw.partition(b"\r\n\r\n")
    data, ended = dechunked(body)
    blocks = data.decode("utf-8").split("\n\n")[:-1]  # the last one may be incomplete
    events = [
        json.loads(line[len("data: ") :])
        for block in blocks
        for line in block.split("\n")
        if line.startswith("data: ")
    ]
    return head, events, ended


def read_until(wire: Wire, raw: bytes, events: int, timeout: float) -> bytes:
    """``raw`` and what follows it, read until the stream holds ``events`` whole events."""
    received = bytearray(raw)
    deadline = time.monotonic() + timeout
    parsed_at = 0.0
    blank_lines = received.count(b"\n\n")
    while True:
        # Parsed when the blank lines that end events say enough may be there, or each second
        # (a chunk boundary could split one): parsing megabytes at every read would be slow.
        now = time.monotonic()
        if blank_lines >= events or now - parsed_at > 1:
            parsed_at = now
            if len(stream_so_far(bytes(received))[1]) >= events:
                return bytes(received)
        assert now < deadline, f"{events} events not read within {timeout} s"
        wire.sock.settimeout(deadline - time.monotonic())
        chunk = wire.sock.recv(1 << 20)
        assert chunk, f"the server closed the stream first: {bytes(received[:300])!r}"
        blank_lines += (received[-1:] + chunk).count(b"\n\n")  # one may straddle reads
        received += chunk


def read_to_the_end(wire: Wire, timeout: float) -> tuple[bytes, str]:
    """Everything left, and how reading ended: ``eof``, ``reset`` or ``timeout``."""
    rest = bytearray()
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        wire.sock.settimeout(remaining)
        try:
            chunk = wire.sock.recv(1 << 20)
        except TimeoutError:
            break
        except ConnectionResetError:
            return bytes(rest), "reset"
        if not chunk:
            return bytes(rest), "eof"
        rest += chunk
    return bytes(rest), "timeout"


def server_end(server: ServerProcess, client_port: int) -> tuple[str, int] | None:
    """The server's end of the client's connection in /proc/net/tcp: its state (``01`` is
    ESTABLISHED) and the bytes in its send queue; None when the socket is gone."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        _, local, remote, state, queues, *_ = line.split()
        if int(local.split(":")[1], 16) == server.port and int(remote.split(":")[1], 16) == (
            client_port
        ):
            return state, int(queues.split(":")[0], 16)
    return None


def wait_for_log(server: ServerProcess, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in server.log_path.read_text(errors="replace"):
            return True
        time.sleep(0.05)
    return False


def listen_then_stop_reading(server: ServerProcess, wire: Wire) -> tuple[bytes, int]:
    """Open the stream on ``wire`` and read its acknowledgement, then read nothing while
    announcing enough changes to cut it off under ``mcp_serve``: what was read, and how many
    changes were announced."""
    listen = message(
        SUBSCRIPTION_ID, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
    )
    wire.send(http_request(listen))
    acknowledged = read_until(wire, b"", 1, timeout=10)
    head, (ack,), _ = stream_so_far(acknowledged)
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"transfer-encoding: chunked" in head.lower(), head
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    # Enough notifications to fill everything between the server's writer and the client,
    # then one that blocks the writer, then the backlog the limit allows (twice: a blocked
    # write may hold up to a backlog's worth), then the one past it.
    filling = math.ceil(bytes_in_between(wire) / len(SUBSCRIPTION_ID))
    announcements = filling + 1 + 2 * QUEUE_LIMIT + 1
    for number in range(announcements):
        called = post(
            server.port, message(f"announce-{number}", "tools/call", {"name": "mcphttp_announce"})
        )
        assert called.json()["result"]["content"][0]["text"] == "announced", called.body
    return acknowledged, announcements


def test_a_reader_that_stops_reading_is_disconnected_by_the_server(small_queue_server):
    server = small_queue_server
    with Wire(server.port, timeout=10, receive_buffer=RECEIVE_BUFFER) as wire:
        acknowledged, announcements = listen_then_stop_reading(server, wire)
        # The application returns with the stream unfinished while the reader still reads
        # nothing: nothing of the server waits on it any more.
        returned = wait_for_log(server, RETURNED_UNFINISHED, timeout=5)
        warned = CUT_OFF in server.log_path.read_text(errors="replace")
        # Still open on the server, with bytes queued: asyncio closes the socket once they are
        # written, which only a reader that reads again allows.
        held = server_end(server, wire.local_port)
        rest, ending = read_to_the_end(wire, timeout=10)
    _, events, ended = stream_so_far(acknowledged + rest)
    assert returned, f"the endpoint still waits on the reader:\n{server.log_tail()}"
    assert warned, server.log_tail()
    assert held is not None and held[0] == "01" and held[1] > 0, held
    assert ending in ("eof", "reset"), "the server kept the connection open"
    assert not ended, "the stream ended as a complete response"
    assert all("method" in event and "id" not in event for event in events), [
        sorted(event) for event in events
    ]
    changes = events[1:]
    assert changes, "no notification was written before the cut-off"
    assert len(changes) < announcements, "nothing waiting was dropped"
    assert {change["method"] for change in changes} == {"notifications/tools/list_changed"}
    assert discover_works(server.port), server.log_tail()


def test_under_daphne_a_reader_that_stops_reading_is_never_cut_off(small_queue_daphne):
    """daphne's ``send`` never waits: Twisted keeps in memory whatever the socket does not
    take, so no backlog builds behind a write and the limit is never reached. The same
    announcements that cut ``mcp_serve``'s stream off all reach a reader that reads again."""
    server = small_queue_daphne
    with Wire(server.port, timeout=10, receive_buffer=RECEIVE_BUFFER) as wire:
        acknowledged, announcements = listen_then_stop_reading(server, wire)
        cut = wait_for_log(server, CUT_OFF, timeout=3)
        received = read_until(wire, acknowledged, 1 + announcements, timeout=30)
    _, events, _ = stream_so_far(received)
    assert not cut, server.log_tail()
    assert len(events) == 1 + announcements
    assert discover_works(server.port), server.log_tail()
