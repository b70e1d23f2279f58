"""The parser's transport (``serving.http11._WritesAtTurnEnd``) on a real socket pair: the
writes of one turn of the loop leave together at its end, a large one leaves at once (so the
transport's flow control sees it), a caller's buffer is copied when held, and nothing is
written to a connection already ending. Through a real server: test_mcp_serve.py's
``test_a_response_s_head_and_body_arrive_in_one_segment``."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvloop

from beammcp_django.serving.http11 import SEND_AT_ONCE, _WritesAtTurnEnd


def received(peer: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = peer.recv(1 << 20)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def loop_failures() -> list[Any]:
    """What the running loop reports from its callbacks, collected."""
    failures: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: failures.append(context))
    return failures


def run_on_a_pair(scenario: Any) -> Any:
    async def paired() -> Any:
        loop = asyncio.get_running_loop()
        ours, peer = socket.socketpair()
        peer.setblocking(False)
        transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
        try:
            return await scenario(_WritesAtTurnEnd(transport, loop), transport, peer)
        finally:
            transport.close()
            peer.close()

    # On uvloop, as mcp_serve serves wherever it is installed: its transports raise on a
    # write to a closed connection where asyncio's count it and carry on.
    return uvloop.run(paired())


def test_the_writes_of_one_turn_leave_together_at_its_end():
    async def scenario(wrapped: Any, transport: Any, peer: socket.socket) -> list[bytes]:
        wrapped.write(b"HTTP/1.1 200 OK\r\n\r\n")
        wrapped.write(b'{"result":{}}')
        during = received(peer)
        await asyncio.sleep(0)
        return [during, received(peer)]

    assert run_on_a_pair(scenario) == [b"", b'HTTP/1.1 200 OK\r\n\r\n{"result":{}}']


def test_a_large_write_leaves_at_once_and_a_held_buffer_is_a_copy():
    async def scenario(wrapped: Any, transport: Any, peer: socket.socket) -> list[bytes]:
        buffer = bytearray(b"kept as written")
        wrapped.write(buffer)
        buffer[:4] = b"XXXX"
        wrapped.write(b"x" * SEND_AT_ONCE)
        at_once = received(peer)
        await asyncio.sleep(0)
        return [at_once, received(peer)]

    at_once, after = run_on_a_pair(scenario)
    assert at_once == b"kept as written" + b"x" * SEND_AT_ONCE
    assert after == b""


def test_closing_sends_what_is_held_and_an_ending_connection_is_sent_nothing():
    async def scenario(wrapped: Any, transport: Any, peer: socket.socket) -> list[Any]:
        failures = loop_failures()
        wrapped.write(b"the last words")
        wrapped.close()
        closed = received(peer)
        return [closed, failures]

    closed, failures = run_on_a_pair(scenario)
    assert closed == b"the last words" and failures == []

    async def aborted(wrapped: Any, transport: Any, peer: socket.socket) -> list[Any]:
        failures = loop_failures()
        transport.abort()  # the connection ended, and then a response written
        await asyncio.sleep(0)
        wrapped.write(b"never sent")
        await asyncio.sleep(0)
        return [received(peer), failures]

    sent, failures = run_on_a_pair(aborted)
    assert sent == b"" and failures == []
