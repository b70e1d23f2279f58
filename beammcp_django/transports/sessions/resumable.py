"""A 2025-11-25 session's call stream that outlives its connection (2025-11-25
basic/transports.mdx, "Resumability and Redelivery").

When a call's reply in a session becomes an SSE stream, its first event primes the client to
reconnect: an event id and an empty ``data``, with ``retry`` (how long to wait before
reconnecting). Every later event carries an id, ``<stream>:<n>``. The stream stands between
the exchange and the connection: it numbers and holds the events written, and when the
connection goes (the client's network, or the host's ``context.release_connection()``) the
call goes on, its events held, until the client comes back with ``GET`` and
``Last-Event-ID``: the events after that id are written on the new connection, and the rest
follow as the call makes them, its result last. A disconnect is no cancellation (the page
says so); ``notifications/cancelled`` is.

Bounded: a stream holds its last ``held_events`` events (``SESSION_HELD_EVENTS``) and
``MAX_HELD_BYTES`` (a resume after an id no longer held is refused by name); a detached
stream not resumed within ``resume_seconds`` (``SESSION_RESUME_SECONDS``) is abandoned and
its call stopped, as for a client that left; a session
keeps at most ``MAX_DETACHED_STREAMS`` detached, and past that a disconnect stops the call at
once. Held in the process running the call: with sessions shared by workers, a resume that
reaches another worker is carried to this one over the Channels layer
(``sessions.relay``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from beammcp_django.transports.types import Receive, Send

logger = logging.getLogger("beammcp_django.http")

RETRY_MILLISECONDS = 1000
MAX_HELD_BYTES = 1 << 20
MAX_DETACHED_STREAMS = 16
SSE_START = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


# What a resume naming no stream that can be resumed is answered, wherever it lands.
NO_STREAM = (
    "Last-Event-ID names no stream of this session that can be resumed: it ended, was "
    "abandoned, or was never one of this server's"
)


class ResumeRefused(Exception):
    """A ``Last-Event-ID`` this stream cannot resume from: ``status`` and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ResumableStream:
    """One call's SSE stream in a session, and the connection it is written on (none while
    detached). ``streams`` is the session's registry in this process, by stream id. Made by
    the exchange when its reply becomes a stream (most replies never do), then written
    through: ``send`` is the POST's own connection."""

    def __init__(
        self,
        streams: dict[str, ResumableStream],
        send: Send,
        *,
        held_events: int = 256,
        resume_seconds: float = 60.0,
    ) -> None:
        self.held_events = held_events
        self.resume_seconds = resume_seconds
        self.id = secrets.token_urlsafe(9)
        self._streams = streams
        self._connection: Send | None = send
        self.first = send  # the POST's own connection
        self._held: deque[tuple[int, bytes]] = deque()
        self._held_bytes = 0
        self._next = 1  # the priming event is 0
        self._written_through = 0  # the last event written on the present connection
        self._lock = asyncio.Lock()
        self.streaming = False
        self._finished = False  # the stream's last event was made
        self._ended = asyncio.Event()  # ... and written on a connection: the stream is done
        self._abandon_timer: asyncio.TimerHandle | None = None
        self._resuming = False  # a resume is writing its backlog on a new connection
        # Stops the call (the exchange's withdraw): set by whoever runs the call.
        self.stop_call: Callable[[], None] = lambda: None
        # Told the stream's id when it loses its connection: a store shared by workers
        # records that a resume of it must come here. What it returns (the recording) is
        # awaited when the server ends the connection itself (``release``).
        self.on_detach: Callable[[str], Awaitable[None] | None] = lambda stream_id: None

    @property
    def detached(self) -> bool:
        return self.streaming and self._connection is None and not self._ended.is_set()

    # -- what the exchange writes to ------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            if (b"content-type", b"text/event-stream") not in headers:
                await self._write(message)  # a JSON reply: nothing to resume
                return
            self.streaming = True
            self._streams[self.id] = self
            await self._write(message)
            priming = f"id: {self.id}:0\nretry: {RETRY_MILLISECONDS}\ndata:\n\n".encode()
            await self._write({"type": "http.response.body", "body": priming, "more_body": True})
            return
        if not self.streaming:
            await self._write(message)
            return
        if self._ended.is_set():
            return  # abandoned: nobody will read it
        body: bytes = message.get("body", b"")
        comments = self._hold(body)
        last = not message.get("more_body", False)
        if last:
            self._finished = True
        async with self._lock:
            if self._connection is None:
                return  # held for the client's return
            chunk = b"".join(
                event for number, event in self._held if number > self._written_through
            )
            self._written_through = self._next - 1
            chunk = chunk or comments
            if chunk or last:
                await self._write(
                    {"type": "http.response.body", "body": chunk, "more_body": not last}
                )
            if last and self._connection is not None:
                self._done()

    # -- the connection's coming and going ------------------------------------------------

    def detach(self, connection: Send) -> Awaitable[None] | None:
        """``connection`` is gone: if the stream was written on it, hold what follows for the
        client's return, within the bounds (the module's docstring). Returns what ``on_detach``
        did, for ``release`` to await."""
        if self._connection != connection or self._ended.is_set():
            return None
        self._connection = None
        detached = sum(stream.detached for stream in self._streams.values())
        if detached > MAX_DETACHED_STREAMS:
            self.abandon()
            return None
        loop = asyncio.get_running_loop()
        self._abandon_timer = loop.call_later(self.resume_seconds, self.abandon)
        return self.on_detach(self.id)

    async def release(self) -> None:
        """End the connection now, the stream going on (``context.release_connection``).

        Detached, and where a resume must go recorded, before the end is written: the client
        may resume, on any worker, as soon as it reads the end, and a worker that looked in
        the shared store before the record landed would refuse the stream as unknown."""
        async with self._lock:
            connection = self._connection
            if connection is None or self._ended.is_set():
                return
            offered = self.detach(connection)
            if offered is not None:
                try:
                    await offered
                except Exception:  # the store's: a resume elsewhere will be refused by name
                    logger.exception("recording where stream %s may be resumed failed", self.id)
            with contextlib.suppress(OSError):
                await connection({"type": "http.response.body", "body": b"", "more_body": False})

    async def resume(self, after: int, send: Send, receive: Receive) -> None:
        """Serve ``GET`` with ``Last-Event-ID: <stream>:<after>``: the events after it, then
        the rest as they come; ``ResumeRefused`` when it cannot."""
        if not self.detached or self._resuming:
            raise ResumeRefused(409, "this stream is being written on another connection")
        oldest = self._held[0][0] if self._held else self._next
        if after + 1 < oldest or after >= self._next:
            raise ResumeRefused(
                400,
                "Last-Event-ID names an event this stream no longer holds, or never sent",
            )
        # Claimed before the first await: a second resume arriving while this one writes
        # its backlog is refused, never given the stream too.
        self._resuming = True
        try:
            async with self._lock:
                await send({"type": "http.response.start", "status": 200, "headers": SSE_START})
                backlog = b"".join(event for number, event in self._held if number > after)
                last = self._finished
                await send({"type": "http.response.body", "body": backlog, "more_body": not last})
                if self._abandon_timer is not None:
                    self._abandon_timer.cancel()
                    self._abandon_timer = None
                self._written_through = self._next - 1
                if last:
                    self._done()
                    return
                self._connection = send
        finally:
            self._resuming = False
        gone = asyncio.ensure_future(until_disconnect(receive))
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({gone, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            ended.cancel()
        if not self._ended.is_set():
            async with self._lock:
                self.detach(send)

    # -- inside -----------------------------------------------------------------------------

    async def _write(self, message: dict[str, Any]) -> None:
        connection = self._connection
        if connection is None:
            return
        try:
            await connection(message)
        except OSError:
            if not self.streaming:
                raise  # no stream to resume: the exchange handles a client gone
            self.detach(connection)

    def _hold(self, body: bytes) -> bytes:
        """Number and hold the events of ``body``; its comments (keep-alives) returned."""
        comments = b""
        for event in body.split(b"\n\n"):
            if not event:
                continue
            if event.startswith(b":"):
                comments += event + b"\n\n"
                continue
            framed = b"id: %s:%d\n%s\n\n" % (self.id.encode(), self._next, event)
            self._held.append((self._next, framed))
            self._held_bytes += len(framed)
            self._next += 1
            while len(self._held) > self.held_events or (
                self._held_bytes > MAX_HELD_BYTES and len(self._held) > 1
            ):
                _, dropped = self._held.popleft()
                self._held_bytes -= len(dropped)
        return comments

    def _done(self) -> None:
        self._ended.set()
        self._held.clear()
        self._held_bytes = 0
        if self._streams.get(self.id) is self:
            del self._streams[self.id]

    def abandon(self) -> None:
        """Not resumed in time, one detached stream too many, or its session ended: the
        call is stopped."""
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
            self._abandon_timer = None
        if self._ended.is_set():
            return
        self._done()
        self.stop_call()


def parse_event_id(value: str) -> tuple[str, int] | None:
    """``<stream>:<n>`` as this server writes it, or None."""
    stream, _, number = value.partition(":")
    if not stream or len(stream) > 32 or not number.isdigit() or len(number) > 12:
        return None
    return stream, int(number)


async def until_disconnect(receive: Receive) -> None:
    """Return when the client leaves (everything else it sends, read and dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass
