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
from beammcp_django.transports.exchange import KEEPALIVE_SECONDS, STREAM_ENDINGS
from beammcp_django.transports.outages import CHANNEL_LAYER, outages, unreachable_errors
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.replies import JSON, error_body, respond
from beammcp_django.transports.sessions.resumable import until_disconnect
from beammcp_django.transports.sessions.store import (
    UNKNOWN_SESSION,
    HttpSession,
    SessionStore,
)
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
    loop = asyncio.get_running_loop()
    layer, group = policy.subscription_channel()
    unreachable = unreachable_errors()
    channel: str | None = None
    tasks: list[asyncio.Task[Any]] = []
    try:
        with outages.reaching(CHANNEL_LAYER, unreachable):
            channel = await layer.new_channel()
            await layer.group_add(group, channel)
        if ended.is_set():  # the session ended while the stream was joining the feed
            await respond(send, 404, error_body(None, INVALID_REQUEST, UNKNOWN_SESSION), JSON)
            return
        gone = loop.create_task(until_disconnect(receive))
        closed = loop.create_task(ended.wait())
        tasks += [gone, closed]
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        # A first comment at once: some servers (daphne) send the head only with a body byte,
        # and a client waits for the head to know its stream is open.
        await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
        ends_at = loop.time() + policy.subscription_max_seconds
        expires_at = loop.time() + still_allowed.seconds_left()  # the credential's end
        recheck_at = loop.time() + policy.subscription_reauthorize_seconds
        written_at = loop.time()
        incoming: asyncio.Task[Any] | None = None
        try:
            while True:
                now = loop.time()
                if now >= ends_at:
                    STREAM_ENDINGS["lifetime"] += 1
                    break
                if now >= expires_at:
                    STREAM_ENDINGS["expired"] += 1
                    break
                if now >= recheck_at:
                    if not await still_allowed():
                        STREAM_ENDINGS["unauthorized"] += 1
                        break
                    recheck_at = now + policy.subscription_reauthorize_seconds
                if incoming is None:
                    incoming = loop.create_task(layer.receive(channel))
                    tasks.append(incoming)
                # A keep-alive is due a quiet spell after the last write, whatever was filtered out.
                due = min(ends_at, expires_at, recheck_at, written_at + KEEPALIVE_SECONDS)
                wait = max(0.0, due - now)
                done, _ = await asyncio.wait(
                    {incoming, gone, closed}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                if gone in done or closed in done:
                    break
                chunk = None
                if incoming in done:
                    tasks.remove(incoming)
                    with outages.reaching(CHANNEL_LAYER, unreachable):
                        event, incoming = incoming.result(), None
                    if (ended := ended_key(event)) is not None and ended == still_allowed.key:
                        STREAM_ENDINGS["ended"] += 1
                        break
                    if event.get("kind") == "resource":  # subscriptions may have changed elsewhere
                        await store.current(session)
                    notification = session_notification(event, session.state.subscriptions)
                    data = None if notification is None else jsonrpc.encode_outgoing(notification)
                    if data is not None:
                        # Asked before each delivery: an ended credential hears nothing more.
                        if not await still_allowed():
                            STREAM_ENDINGS["unauthorized"] += 1
                            break
                        chunk = b"event: message\ndata: " + data + b"\n\n"
                elif loop.time() >= written_at + KEEPALIVE_SECONDS:
                    chunk = b":\n\n"  # a quiet spell: keep the connection open
                if chunk is None:
                    continue
                try:
                    with Deadline(WRITE_SECONDS):
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                except TimeoutError:
                    STREAM_ENDINGS["overflow"] += 1
                    logger.warning(
                        "a session's GET stream was cut off: its reader stopped reading for %g s",
                        WRITE_SECONDS,
                    )
                    return  # cut off: the response is left unfinished, the server closes it
                except OSError:
                    return  # the client is gone
                written_at = loop.time()
                await store.touch(session, bounds)  # an open stream keeps its session from expiring
        except PartDown:  # the session store or the channel layer: the outage is logged
            STREAM_ENDINGS["unavailable"] += 1
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            # Let every cancellation land (and a failed receive be retrieved): no task of
            # this stream outlives it.
            await asyncio.wait(tasks)
            for task in tasks:
                if not task.cancelled():
                    task.exception()
        if channel is not None:
            with contextlib.suppress(PartDown), outages.reaching(CHANNEL_LAYER, unreachable):
                await layer.group_discard(group, channel)
