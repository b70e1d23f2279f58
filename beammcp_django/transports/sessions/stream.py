"""A 2025-11-25 session's GET stream: the server's notifications that answer no request (list
changes, updates of the resources the session subscribed to), as SSE (2025-11-25
basic/transports.mdx, "Listening for Messages from the Server").

One stream per session at a time (a second is refused 409: each message goes on one stream
only). Changes arrive on the Channels layer the listen streams of 2026-07-28 use, so a change
published by any worker reaches the stream. The stream is bounded as those are: it ends after
``SUBSCRIPTION_MAX_SECONDS``, when the ``AUTHORIZE`` hook, asked again every
``SUBSCRIPTION_REAUTHORIZE_SECONDS``, no longer names the session's principal, when the
session ends (``DELETE``, expiry), or when the client leaves; a write that a stopped reader
holds past ``WRITE_SECONDS`` cuts the stream off. A quiet stream gets an SSE comment every
``KEEPALIVE_SECONDS``, and keeps its session from expiring. When the session store or the
channel layer stops answering, the stream ends (the outage logged once, ``outages``); the
client opens it again once they answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from beammcp_django.protocol import jsonrpc
from beammcp_django.protocol.errors import INVALID_REQUEST, PartDown
from beammcp_django.protocol.listen_filter import ended_key, session_notification
from beammcp_django.transports.admission import StreamAuthority
from beammcp_django.transports.deadline import Deadline
from beammcp_django.transports.exchange import KEEPALIVE_SECONDS
from beammcp_django.transports.layer_turns import layer_turn
from beammcp_django.transports.outages import CHANNEL_LAYER, outages, unreachable_errors
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.replies import JSON, error_body, respond
from beammcp_django.transports.sessions.resumable import until_disconnect
from beammcp_django.transports.sessions.store import (
    UNKNOWN_SESSION,
    HttpSession,
    SessionBounds,
    SessionStore,
)
from beammcp_django.transports.stream_bounds import STREAM_ENDINGS, StreamBounds
from beammcp_django.transports.types import Receive, Send

logger = logging.getLogger("beammcp_django.http")

# How long one write may wait for a reader that stopped reading before the stream is cut off.
WRITE_SECONDS = 30.0
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


async def serve_session_stream(
    session: HttpSession,
    store: SessionStore,
    policy: HttpPolicy,
    still_allowed: StreamAuthority,
    receive: Receive,
    send: Send,
) -> None:
    """Hold ``session``'s GET stream open until one of its ends (the module's docstring).

    The caller claimed the session's one stream (``SessionStore.claim_stream``), which set
    ``session.calls.stream``, and lets go of it after."""
    if policy.subscription_channel is None:
        raise RuntimeError("a session stream needs the change feed (subscription_channel)")
    ended = session.calls.stream
    assert ended is not None, "the stream is claimed before it is served"
    bounds = policy.sessions
    assert bounds is not None, "a session stream is served only with sessions on"
    stream = _SessionStream(
        session, store, policy, bounds, policy.subscription_channel(), still_allowed, send
    )
    try:
        await stream.join()
        if ended.is_set():  # the session ended while the stream was joining the feed
            await respond(send, 404, error_body(None, INVALID_REQUEST, UNKNOWN_SESSION), JSON)
            return
        await stream.serve(receive, ended)
    finally:
        await stream.leave()


class _SessionStream:
    """One GET stream's state: the feed's channel it joined, its deadlines, its tasks."""

    def __init__(
        self,
        session: HttpSession,
        store: SessionStore,
        policy: HttpPolicy,
        bounds: SessionBounds,
        feed: tuple[Any, str],
        still_allowed: StreamAuthority,
        send: Send,
    ) -> None:
        self.session = session
        self.store = store
        self.policy = policy
        self.bounds = bounds
        self.still_allowed = still_allowed
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.layer, self.group = feed  # the channel layer, and the change feed's group
        self.unreachable = unreachable_errors()
        self.channel: str | None = None
        self.tasks: list[asyncio.Task[Any]] = []

    async def join(self) -> None:
        """Join the change feed; a channel layer that does not answer raises ``PartDown``
        before the stream's head is sent."""
        with outages.reaching(CHANNEL_LAYER, self.unreachable):
            self.channel = await self.layer.new_channel()
            async with layer_turn():
                await self.layer.group_add(self.group, self.channel)

    async def serve(self, receive: Receive, ended: asyncio.Event) -> None:
        """The stream's head, its events until one of its ends, and its last body."""
        gone = self.loop.create_task(until_disconnect(receive))
        closed = self.loop.create_task(ended.wait())
        self.tasks += [gone, closed]
        await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        # A first comment at once: some servers (daphne) send the head only with a body byte,
        # and a client waits for the head to know its stream is open.
        await self.send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
        try:
            if not await self._stream(gone, closed):
                return  # cut off, or the client is gone: the response is left unfinished
        except PartDown:  # the session store or the channel layer: the outage is logged
            STREAM_ENDINGS["unavailable"] += 1
        with contextlib.suppress(OSError):
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stream(self, gone: asyncio.Task[Any], closed: asyncio.Task[Any]) -> bool:
        """Deliver until an end: True when the response is to be finished, False when the
        connection can take nothing more."""
        loop = self.loop
        bounds = StreamBounds(loop, self.policy, self.still_allowed)
        written_at = loop.time()
        incoming: asyncio.Task[Any] | None = None
        while True:
            now = loop.time()
            due = await bounds.due(now)
            if due is None:
                return True
            if incoming is None:
                incoming = loop.create_task(self.layer.receive(self.channel))
                self.tasks.append(incoming)
            # A keep-alive is due a quiet spell after the last write, whatever was filtered out.
            due = min(due, written_at + KEEPALIVE_SECONDS)
            done, _ = await asyncio.wait(
                {incoming, gone, closed},
                timeout=max(0.0, due - now),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if gone in done or closed in done:
                return True
            chunk = None
            if incoming in done:
                self.tasks.remove(incoming)
                with outages.reaching(CHANNEL_LAYER, self.unreachable):
                    event, incoming = incoming.result(), None
                chunk, ending = await self._delivery(event)
                if ending is not None:
                    STREAM_ENDINGS[ending] += 1
                    return True
            elif loop.time() >= written_at + KEEPALIVE_SECONDS:
                chunk = b":\n\n"  # a quiet spell: keep the connection open
            if chunk is None:
                continue
            if not await self._write(chunk):
                return False
            written_at = loop.time()
            # An open stream keeps its session from expiring.
            await self.store.touch(self.session, self.bounds)

    async def _delivery(self, event: dict[str, Any]) -> tuple[bytes | None, str | None]:
        """What one event of the feed comes to on this stream: the SSE chunk to write (None:
        nothing for this session), or the name of the end it brings."""
        if (ended := ended_key(event)) is not None and ended == self.still_allowed.key:
            return None, "ended"
        if event.get("kind") == "resource":  # subscriptions may have changed elsewhere
            await self.store.current(self.session)
        notification = session_notification(event, self.session.state.subscriptions)
        if notification is None:
            return None, None
        data = jsonrpc.encode_outgoing(notification)
        if data is None:
            return None, None
        # Asked before each delivery: an ended credential hears nothing more.
        if not await self.still_allowed():
            return None, "unauthorized"
        return b"event: message\ndata: " + data + b"\n\n", None

    async def _write(self, chunk: bytes) -> bool:
        """Write one chunk; False when the reader stopped reading past ``WRITE_SECONDS`` (the
        stream is cut off) or the client is gone."""
        try:
            with Deadline(WRITE_SECONDS):
                await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
        except TimeoutError:
            STREAM_ENDINGS["overflow"] += 1
            logger.warning(
                "a session's GET stream was cut off: its reader stopped reading for %g s",
                WRITE_SECONDS,
            )
            return False
        except OSError:
            return False
        return True

    async def leave(self) -> None:
        """No task of this stream outlives it, and its channel leaves the feed."""
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            # Let every cancellation land (and a failed receive be retrieved).
            await asyncio.wait(self.tasks)
            for task in self.tasks:
                if not task.cancelled():
                    task.exception()
        if self.channel is not None:
            with contextlib.suppress(PartDown), outages.reaching(CHANNEL_LAYER, self.unreachable):
                async with layer_turn():
                    await self.layer.group_discard(self.group, self.channel)
