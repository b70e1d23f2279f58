"""The stdio transport: newline-delimited JSON-RPC on a pair of file descriptors.

Framing bounds each line to ``MAX_MESSAGE_BYTES`` as it is read: a longer line is refused the
moment it crosses the bound, never buffered past it, and its tail is discarded up to the
newline so the next line is read cleanly. Requests run concurrently (a later
``notifications/cancelled`` can reach an earlier call); replies go out as they finish, each
as one write of one line. Only protocol messages reach the output descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from beammcp_django.protocol import jsonrpc, notifications, wire
from beammcp_django.protocol.errors import INVALID_REQUEST, PartDown, ProtocolError
from beammcp_django.protocol.request import SESSION_METHODS, LegacySession
from beammcp_django.protocol.server import Server
from beammcp_django.transports.limits import RateLimit, RateLimited, check_rate
from beammcp_django.transports.threads import from_any_thread

logger = logging.getLogger("beammcp_django.stdio")

READ_CHUNK = 65_536


class Overflow:
    """A line crossed the bound; its bytes were dropped."""


OVERFLOW = Overflow()
Frame = bytes | Overflow


class LineFramer:
    """Splits a byte stream into lines of at most ``limit`` bytes (newline excluded)."""

    def __init__(self, limit: int = wire.MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        # One byte of room for the '\r' of a CRLF ending, which is not part of the message.
        self._room = limit + 1
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            piece = data[start:] if newline < 0 else data[start:newline]
            if self._discarding:
                pass
            elif len(self._buffer) + len(piece) > self._room:
                self._buffer.clear()
                self._discarding = True
                frames.append(OVERFLOW)
            else:
                self._buffer += piece
            if newline < 0:
                return frames
            if self._discarding:
                self._discarding = False
            else:
                line = self._take()
                frames.append(line if len(line) <= self.limit else OVERFLOW)
            start = newline + 1

    def finish(self) -> list[Frame]:
        """End of input: a last line without a newline still counts."""
        if self._buffer and not self._discarding:
            line = self._take()
            return [line if len(line) <= self.limit else OVERFLOW]
        return []

    def _take(self) -> bytes:
        line = bytes(self._buffer)
        self._buffer.clear()
        return line[:-1] if line.endswith(b"\r") else line


_EOF = object()


class StdioConnection:
    """One process's stdio session: the reader thread, the writer, the running calls."""

    def __init__(
        self,
        server: Server,
        read_fd: int,
        write_fd: int,
        *,
        max_concurrent: int = 32,
        shutdown_grace: float = 2.0,
        observe: Callable[[], Any] | None = None,
        principal: Any = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        self.server = server
        # The host's rate limit (limits.py), asked before each request is served.
        self.rate_limit = rate_limit
        # Who is calling, for every request of this connection: what the process was started
        # as (stdio carries no credentials of its own).
        self.principal = principal
        # Per request: an observation (beammcp_django.observability), or None when nothing
        # observes it (no access log, no tracer).
        self.observe = observe
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.session = LegacySession()
        self.shutdown_grace = shutdown_grace
        # Up to max_concurrent calls run; as many more may wait for a slot (a cancel can still
        # reach them); past that the reader stops reading, which is backpressure on the client.
        self._slots = asyncio.Semaphore(max_concurrent)
        self._admitted = asyncio.Semaphore(2 * max_concurrent)
        # Every call in flight with its flag (drained at the end), and by id (for cancelling;
        # a second call reusing a running id is drained but cannot be cancelled by it).
        self._calls: dict[asyncio.Task[None], threading.Event] = {}
        self._running: dict[str | int, tuple[asyncio.Task[None], threading.Event]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "serve() sets the loop"
        return self._loop

    # -- output ---------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        encoded = jsonrpc.encode_outgoing(message)
        if encoded is None:
            return
        view = memoryview(encoded + b"\n")
        while view:
            written = os.write(self.write_fd, view)
            view = view[written:]

    # -- input ----------------------------------------------------------------------------

    def _read_forever(self, queue: asyncio.Queue[Any]) -> None:
        assert self._loop is not None
        framer = LineFramer()
        while True:
            try:
                data = os.read(self.read_fd, READ_CHUNK)
            except OSError:
                data = b""
            frames = framer.feed(data) if data else [*framer.finish(), _EOF]
            if frames:
                # One hand-off per read, not per line. Blocks this thread while the queue is
                # full: backpressure on the client, at most a few reads' lines ahead.
                asyncio.run_coroutine_threadsafe(queue.put(frames), self._loop).result()
            if not data:
                return

    async def serve(self) -> None:
        """Serve until end of input, then let running calls finish within the grace period."""
        self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=4)
        reader = threading.Thread(
            target=self._read_forever, args=(queue,), name="mcp-stdio-reader", daemon=True
        )
        reader.start()
        ended = False
        try:
            while not ended:
                for frame in await queue.get():
                    if frame is _EOF:
                        ended = True
                        break
                    await self._take(frame)
        except asyncio.CancelledError:
            # Interrupted (the command's signal handler): running calls get no grace.
            await self._drain(grace=0.0)
            raise
        await self._drain(self.shutdown_grace)

    async def _take(self, frame: Frame) -> None:
        if isinstance(frame, Overflow):
            refusal = ProtocolError(
                INVALID_REQUEST,
                f"line exceeds {wire.MAX_MESSAGE_BYTES} bytes; it was discarded up to its newline",
            )
            self._refuse(refusal)
            return
        if not frame.strip():
            return
        try:
            message = wire.decode(frame)
        except ProtocolError as refusal:
            self._refuse(refusal)
            return
        if notifications.is_notification(message):
            # Never answered, well formed or not; a cancellation is the only one acted on.
            notification = notifications.read(message)
            if notification is not None:
                self._cancel(notifications.cancelled_request(notification))
            return
        method = message.get("method")
        if type(method) is str and method in SESSION_METHODS:
            # initialize and logging/setLevel set what every later request reads: served in
            # order, on the session itself, before the next line is read.
            await self._serve_one(message, threading.Event(), self.session)
            return
        # Every other request is served under the session as it stood when the line arrived,
        # whenever its turn to run comes.
        session = self.session.snapshot()
        await self._admitted.acquire()
        cancelled = threading.Event()
        task = asyncio.create_task(self._serve_in_slot(message, cancelled, session, len(frame)))
        self._calls[task] = cancelled
        task.add_done_callback(self._calls.pop)
        request_id = jsonrpc.readable_id(message)
        if request_id is not None and request_id not in self._running:
            self._running[request_id] = (task, cancelled)
            task.add_done_callback(lambda _, key=request_id: self._running.pop(key, None))
        task.add_done_callback(lambda _: self._admitted.release())

    def _refuse(self, refusal: ProtocolError) -> None:
        """Answer a line the core never saw (too long, undecodable), logged as a request."""
        self._write(jsonrpc.refusal(None, refusal))
        observation = self.observe() if self.observe is not None else None
        if observation is not None:
            observation.refused(refusal.code)
            observation.write_log()

    async def _serve_in_slot(
        self,
        message: dict[str, Any],
        cancelled: threading.Event,
        session: LegacySession,
        size: int,
    ) -> None:
        async with self._slots:
            await self._serve_one(message, cancelled, session, size)

    async def _serve_one(
        self,
        message: dict[str, Any],
        cancelled: threading.Event,
        session: LegacySession,
        size: int = 0,
    ) -> None:
        answered = False

        def deliver(notification: dict[str, Any]) -> None:
            # Runs on the loop: a notification a worker thread emitted as the reply was being
            # written arrives after it, and is dropped.
            if not answered and not cancelled.is_set():
                self._write(notification)

        observation = self.observe() if self.observe is not None else None
        if self.rate_limit is not None:
            try:
                await check_rate(self.rate_limit, self.server.run_sync, self.principal, message)
            except RateLimited as limited:
                answered = True
                self._write(limited.reply(jsonrpc.readable_id(message)))
                return
        try:
            answer = self.server.handle(
                message,
                session=session,
                emit=from_any_thread(self.loop, deliver),
                cancelled=cancelled,
                size=size,
                principal=self.principal,
            )
            if observation is None:
                reply = await answer
            else:
                with observation.serving(message, version=session.version) as served:
                    reply = served.reply = await answer
        except PartDown as down:  # the database behind tasks, say: named, logged once an outage
            reply = jsonrpc.unavailable(jsonrpc.readable_id(message), down)
        except asyncio.CancelledError:
            return  # cancelled by the client: no reply is sent for it
        finally:
            answered = True
            if observation is not None:
                observation.write_log()
        if type(reply) is dict and not cancelled.is_set():
            self._write(reply)

    def _cancel(self, request_id: jsonrpc.RequestId | None) -> None:
        running = self._running.get(request_id) if request_id is not None else None
        if running is not None:
            task, cancelled = running
            cancelled.set()
            task.cancel()

    async def _drain(self, grace: float) -> None:
        running = list(self._calls.items())
        if not running:
            return
        _, pending = await asyncio.wait([task for task, _ in running], timeout=grace)
        for task, cancelled in running:
            if task in pending:
                cancelled.set()  # what a sync handler polls; task.cancel() reaches async ones
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*pending, return_exceptions=True)
