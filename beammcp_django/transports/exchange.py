"""One request's exchange: the call run in the request's task, its reply sent as JSON, or as
an SSE stream once the call emits a notification (progress, a log at the level the request
asked for), and a client that disconnects cancelling the call. ``subscriptions/listen``
streams run here too, with the bounds that end them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from beammcp_django.authorization import scope_challenge
from beammcp_django.protocol import jsonrpc, wire
from beammcp_django.protocol.access import InsufficientScope
from beammcp_django.protocol.context import CancelFlag
from beammcp_django.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    HostContractError,
    PartDown,
    ProtocolError,
)
from beammcp_django.protocol.listen_filter import ended_key, subscription_notification
from beammcp_django.protocol.request import Request
from beammcp_django.protocol.server import Server
from beammcp_django.transports.deadline import Deadline
from beammcp_django.transports.incoming import Incoming
from beammcp_django.transports.layer_turns import layer_turn
from beammcp_django.transports.outages import (
    CHANNEL_LAYER,
    RETRY_AFTER,
    outages,
    unreachable_errors,
)
from beammcp_django.transports.replies import JSON, STATUS_OF_ERROR, respond
from beammcp_django.transports.sessions.resumable import ResumableStream
from beammcp_django.transports.sessions.store import SessionAsks, SessionEnded
from beammcp_django.transports.stream_bounds import STREAM_ENDINGS, StreamBounds
from beammcp_django.transports.threads import from_any_thread
from beammcp_django.transports.types import Send

logger = logging.getLogger("beammcp_django.http")

KEEPALIVE_SECONDS = 15.0
# How late a disconnect may be noticed (and the call cancelled): a call answered sooner never
# starts the task that watches for it.
WATCH_AFTER_SECONDS = 0.05


class Exchange:
    """One request's reply: JSON, or an SSE stream once the call emits a notification.

    The call runs in the request's own task. Notifications are written by a task started
    when the first one is queued (and again after a quiet spell); the disconnect watcher
    starts only when the call outlives WATCH_AFTER_SECONDS. So a call that answers quickly
    and emits nothing, the usual one, costs no task beyond the request's own.
    """

    def __init__(
        self,
        server: Server,
        incoming: Incoming,
        read: Request | dict[str, Any],
        *,
        statuses: Mapping[int, int] = STATUS_OF_ERROR,
        answer_headers: Sequence[tuple[bytes, bytes]] = (),
        asks: SessionAsks | None = None,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.server = server
        self.principal = incoming.principal
        self.scopes = incoming.scopes
        self.facts = incoming.facts
        # What to answer: the request, or the reply refusing it before anything is served.
        self.read = read
        # The HTTP status of a JSON error reply by its code (2026-07-28's table; a 2025-11-25
        # session answers every JSON-RPC error 200), and the headers a result carries (and a
        # stream, which is opened only for a request being served).
        self.statuses = statuses
        self.answer_headers = list(answer_headers)
        # How this call waits for the client's answers to its server-to-client requests,
        # POSTed on other requests of its 2025-11-25 session (``ask``); None: it asks none.
        self.asks = asks
        # What must be done after the call is served and before its reply is written (a
        # session's changed state kept); None: nothing.
        self.settle = settle
        # What makes the call's stream resumable (set for a 2025-11-25 session), given the
        # connection when the reply becomes a stream; the stream made, then written through.
        self.resumable: Callable[[Send, Callable[[], None]], ResumableStream] | None = None
        self.stream: ResumableStream | None = None
        self.releasing: asyncio.Task[None] | None = None  # release_connection's work
        self.policy = incoming.policy
        self.still_allowed = incoming.still_allowed
        self.receive = incoming.receive
        self.send = incoming.send
        self.cancelled = CancelFlag()
        self.task = task = incoming.task
        self.loop = task.get_loop()
        self.pending: list[dict[str, Any]] = []
        self.streaming = False
        self.calling = False  # the host call is running in self.task
        self.answered = False  # the core returned the reply: nothing more is queued
        self.gone = False  # the client disconnected, or a write to it failed
        self.withdrawn = False  # the client cancelled the request (``withdraw``)
        self.unavailable = False  # a shared part did not answer: the reply names it (503)
        self.writer: asyncio.Task[None] | None = None  # writing queued notifications
        self.cut_off: asyncio.Task[None] | None = None  # the write abandoned by _cut_off
        self.keepalive: asyncio.TimerHandle | None = None

    async def run(self) -> dict[str, Any] | None:
        """The reply sent; None when the client left before it."""
        request = self.read
        if type(request) is not Request:
            await self._finish(request)
            return request
        # A local list, not an attribute: the watcher task holds this exchange, and an
        # attribute would make every watched exchange a cycle only a full collection frees.
        watchers: list[asyncio.Task[None]] = []
        timer = self.loop.call_later(WATCH_AFTER_SECONDS, self._start_watching, watchers)
        self.calling = True
        try:
            reply = await self.server.serve(
                request,
                emit=from_any_thread(self.loop, self._queue),
                cancelled=self.cancelled,
                listen=self.listen,
                principal=self.principal,
                scopes=self.scopes,
                facts=self.facts,
                ask=self.ask if self.asks is not None else None,
                release=self.release if self.resumable is not None else None,
            )
        except InsufficientScope as lacking:
            return await self._challenge(request, lacking)
        except PartDown as down:
            reply = self._unavailable(request, down)
        except asyncio.CancelledError:
            if self.gone and self.task.uncancel() == 0:
                if self.withdrawn:
                    await self._end_withdrawn()
                return None  # cancelled here, for a client that left: nothing more to send
            raise
        finally:
            self.calling = False
            self.answered = True
            timer.cancel()
            for watcher in watchers:
                watcher.cancel()
            if self.keepalive is not None:
                self.keepalive.cancel()
        if self.gone:
            await self._after_leaving()
            return None
        return await self._reply_with(request, reply)

    async def _after_leaving(self) -> None:
        """The client left before the reply: no task outlives the request, and a withdrawn
        request's end is told."""
        abandoned, self.cut_off = self.cut_off, None  # no cycle through its traceback
        if abandoned is not None:
            # Let the abandoned write's cancellation land: no task outlives the request.
            await asyncio.wait([abandoned])
        if self.withdrawn:
            await self._end_withdrawn()

    async def _reply_with(self, request: Request, reply: dict[str, Any]) -> dict[str, Any] | None:
        """Settle the request's change (a shared part down makes the reply say so), write the
        notifications queued before the reply, then the reply; None when the client left."""
        if self.settle is not None and not self.unavailable:
            try:
                await self.settle()
            except PartDown as down:  # the change was not kept: the reply must not say it was
                reply = self._unavailable(request, down)
        try:
            # Notifications queued before the reply are written before it.
            if self.releasing is not None:
                await self.releasing
                self.releasing = None  # the task holds this exchange: no cycle left behind
            while self.writer is not None:
                await self.writer
            if self.pending:
                await self._flush_notifications()
            if not self.gone:
                await self._finish(reply)
                return reply
        except OSError:
            self._client_gone()
        return None

    def _queue(self, notification: dict[str, Any]) -> None:
        if self.answered:
            # A worker thread emitted it as the reply was settled (its call ran past the
            # deadline, say): it would follow the final response, so it is dropped.
            return
        self.pending.append(notification)
        if self.writer is None and not self.gone:
            self.writer = self.loop.create_task(self._write_notifications())

    async def _write_notifications(self, comment: bytes = b"") -> None:
        """Write what is queued (after ``comment``, an SSE keep-alive), until none is left;
        while the call goes on, keep a quiet stream open (intermediaries close idle ones)."""
        try:
            if comment:
                await self.send({"type": "http.response.body", "body": comment, "more_body": True})
            while self.pending:
                await self._flush_notifications()
        except OSError:
            self._client_gone()
        finally:
            self.writer = None
        if self.streaming and self.calling and not self.gone:
            if self.keepalive is not None:
                self.keepalive.cancel()
            self.keepalive = self.loop.call_later(KEEPALIVE_SECONDS, self._keep_alive)

    def _keep_alive(self) -> None:
        self.keepalive = None
        if self.writer is None and self.calling and not self.gone:
            self.writer = self.loop.create_task(self._write_notifications(b":\n\n"))

    def _start_watching(self, watchers: list[asyncio.Task[None]]) -> None:
        watcher = self.loop.create_task(self._watch_disconnect())
        watcher.add_done_callback(self._watcher_ended)
        watchers.append(watcher)

    def _watcher_ended(self, watcher: asyncio.Task[None]) -> None:
        if watcher.cancelled():  # the call ended first: nobody left
            return
        # A receive channel that failed is a client gone too; taking the exception here
        # keeps asyncio from logging it as never retrieved.
        watcher.exception()
        self._client_gone()

    def _client_gone(self) -> None:
        """Stop the call (its cancel flag for a sync handler, a cancellation for the task);
        unless its reply is a resumable stream, which the call goes on writing for the
        client's return (``sessions/resumable.py``)."""
        stream = self.stream
        if stream is not None and not self.withdrawn:
            stream.detach(stream.first)
            return
        if self.gone:
            return
        self.gone = True
        self.cancelled.set()
        if self.calling:
            self.task.cancel()

    def withdraw(self) -> None:
        """The client cancelled the request (2025-11-25 ``notifications/cancelled``): the call
        is stopped as for a client that left, and no response is sent for it; the HTTP
        response still open for it ends empty (``_end_withdrawn``)."""
        if not self.gone:
            self.withdrawn = True
            self._client_gone()

    async def _end_withdrawn(self) -> None:
        """End the HTTP response of a withdrawn request without a JSON-RPC response: the SSE
        stream closed, or 204 when none had started."""
        with contextlib.suppress(OSError):
            while self.writer is not None:
                await asyncio.wait([self.writer])
            if self.streaming:
                await self.send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            # 204: no Content-Length (RFC 9110 §8.6 forbids it on a 204).
            await self.send({"type": "http.response.start", "status": 204, "headers": []})
            await self.send({"type": "http.response.body", "body": b""})

    def _cut_off(self) -> None:
        """End a stream whose reader stopped reading, without waiting on it: the writer,
        blocked in ``send`` until the reader reads again, is cancelled and what waits behind
        it dropped, so the endpoint returns with the response unfinished and the server
        closes the connection. No closing result is written: it could only follow the blocked
        write."""
        self.gone = True
        self.cancelled.set()
        self.pending.clear()
        if self.writer is not None:
            self.cut_off = self.writer
            self.writer.cancel()

    async def _watch_disconnect(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                return

    async def _flush_notifications(self) -> None:
        batch, self.pending = self.pending, []
        events = [
            encoded for item in batch if (encoded := jsonrpc.encode_outgoing(item)) is not None
        ]
        if not events:
            return
        if not self.streaming:
            await self._open_stream()
        data = b"".join(b"event: message\ndata: " + encoded + b"\n\n" for encoded in events)
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def _open_stream(self) -> None:
        self.streaming = True
        if self.resumable is not None:
            stream = self.stream = self.resumable(self.send, self.withdraw)
            self.send = stream.send
        await self.send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                    *self.answer_headers,
                ],
            }
        )

    def release(self) -> bool:
        """``context.release_connection()``: end the connection, the call's stream going on
        for the client to resume. From any thread; whether it will be done."""
        if self.resumable is None or self.answered or self.gone:
            return False
        self.loop.call_soon_threadsafe(self._start_release)
        return True

    def _start_release(self) -> None:
        if self.releasing is None and not self.answered and not self.gone:
            self.releasing = self.loop.create_task(self._release())

    async def _release(self) -> None:
        while self.writer is not None:
            await asyncio.wait([self.writer])
        try:
            if not self.streaming:
                await self._open_stream()
        except OSError:
            self._client_gone()
            return
        if self.stream is not None:
            await self.stream.release()

    async def _challenge(self, request: Request, lacking: InsufficientScope) -> dict[str, Any]:
        """403 with the spec's ``insufficient_scope`` challenge, naming every scope the entry
        needs, before anything of the call was sent (the core raises it before host code
        runs). The body says no more than the header; the log says which request."""
        logger.info(
            "MCP request refused: its token lacks a scope of %s (needs %s)",
            request.method,
            " ".join(lacking.scopes),
        )
        reply = jsonrpc.error(request.id, INVALID_REQUEST, "insufficient_scope")
        challenge = scope_challenge(lacking.scopes, self.policy.resource_metadata)
        await respond(
            self.send,
            403,
            wire.encode(reply),
            [*JSON, (b"www-authenticate", challenge.encode("latin-1"))],
        )
        return reply

    async def _finish(self, reply: dict[str, Any] | None) -> None:
        if reply is None:  # cannot happen for a request; answer something well formed
            reply = jsonrpc.error(None, INTERNAL_ERROR, "internal error")
        reply, encoded = jsonrpc.encode_reply(reply)
        if self.streaming:
            await self.send(
                {
                    "type": "http.response.body",
                    "body": b"event: message\ndata: " + encoded + b"\n\n",
                    "more_body": False,
                }
            )
            return
        error = reply.get("error")
        if self.unavailable:
            status, extra = 503, [RETRY_AFTER]
        else:
            status = self.statuses.get(error["code"], 200) if error else 200
            extra = self.answer_headers if error is None else []
        await respond(self.send, status, encoded, [*JSON, *extra])

    def _unavailable(self, request: Request, down: PartDown) -> dict[str, Any]:
        """The reply to a request a shared part failed: the part named, sent 503 with
        ``Retry-After`` (or as the stream's last event, when the call's stream began)."""
        self.unavailable = True
        return jsonrpc.unavailable(request.id, down)

    # -- server-to-client requests (2025-11-25 sessions) ---------------------------------------

    async def ask(self, method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """Send ``method`` to the client on this call's stream and wait for its answer, which
        the client POSTs in the same session: the result, or a refusal naming what went wrong
        (no answer within ``SESSION_ANSWER_SECONDS``, an error answer, more than
        ``SESSION_PENDING_ANSWERS`` waiting)."""
        asks = self.asks
        assert asks is not None, "asks only in a 2025-11-25 session"
        request_id = f"beammcp-{secrets.token_urlsafe(12)}"
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        if jsonrpc.encode_outgoing(request) is None:  # logged there: the host's input, off contract
            raise HostContractError(f"the {method} request holds a value JSON cannot carry")
        bounds = self.policy.sessions
        assert bounds is not None, "asks only with sessions on"
        seconds, limit = bounds.answer_seconds, bounds.pending_answers
        answered = await asks.expect(request_id, seconds, limit)
        if answered is None:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"the session already waits for {limit} answers from the client "
                "(SESSION_PENDING_ANSWERS)",
            )
        try:
            self._queue(request)
            with Deadline(seconds):
                answer = await answered
        except TimeoutError:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"the client did not answer {method} within {seconds:g} s (SESSION_ANSWER_SECONDS)",
            ) from None
        except SessionEnded:
            raise ProtocolError(
                INTERNAL_ERROR, f"the session ended while its call waited for {method}'s answer"
            ) from None
        finally:
            with contextlib.suppress(PartDown):  # what it held lapses on its own
                await asks.forget(request_id)
        if "error" in answer:
            raise ProtocolError(INTERNAL_ERROR, f"the client answered {method} with an error")
        result = answer.get("result")
        if type(result) is not dict:
            raise ProtocolError(INTERNAL_ERROR, f"the client answered {method} with no result")
        return result

    def _overflowed(self) -> None:
        """A listen stream's reader stopped reading: cut it off, saying why once."""
        STREAM_ENDINGS["overflow"] += 1
        logger.warning(
            "a subscriptions/listen stream was cut off: its reader stopped reading "
            "with %d notifications waiting (SUBSCRIPTION_QUEUE_LIMIT)",
            len(self.pending),
        )
        self._cut_off()

    # -- subscriptions/listen ------------------------------------------------------------------

    async def listen(
        self, subscription_id: Any, honoured: Any, context: Any, acknowledge: Callable[[], None]
    ) -> None:
        """Forward published changes the stream asked for, until it must end. The stream is
        acknowledged once this worker's channel is in the group: a change published after the
        acknowledgment reaches it, whichever worker publishes.

        Ends, and the core then sends the closing result, when the stream outlives
        ``SUBSCRIPTION_MAX_SECONDS``, when its credential ends (the ``Grant``'s
        ``expires_at``, or ``credentials.end_principal`` naming its principal), or when the
        authorize hook, asked before each delivery and every
        ``SUBSCRIPTION_REAUTHORIZE_SECONDS``, no longer says yes. When more than
        ``SUBSCRIPTION_QUEUE_LIMIT`` notifications wait for a reader that stopped reading,
        the stream is cut off instead (``_cut_off``): no closing result, the connection
        closed. A client that closes the stream cancels this coroutine.
        """
        policy = self.policy
        if policy.subscription_channel is None:
            raise ProtocolError(INTERNAL_ERROR, "this endpoint carries no subscriptions")
        layer, group = policy.subscription_channel()
        unreachable = unreachable_errors()
        # The layer down: PartDown, answered 503 before the stream, its last event after.
        with outages.reaching(CHANNEL_LAYER, unreachable):
            channel = await layer.new_channel()
            async with layer_turn():
                await layer.group_add(group, channel)
        acknowledge()
        authority = self.still_allowed
        bounds = StreamBounds(self.loop, policy, authority)
        told: dict[str, str] = {}  # per watched task, the lastUpdatedAt last told
        try:
            while True:
                now = self.loop.time()
                due = await bounds.due(now)
                if due is None:
                    return
                try:
                    with Deadline(due - now), outages.reaching(CHANNEL_LAYER, unreachable):
                        event = await layer.receive(channel)
                except TimeoutError:
                    continue
                if (ended := ended_key(event)) is not None and ended == authority.key:
                    STREAM_ENDINGS["ended"] += 1
                    return
                notification = subscription_notification(event, honoured, subscription_id, told)
                if notification is None:
                    continue
                # Asked before each delivery (a warm token cache answers on the loop): a
                # credential that ended since the last check hears nothing more.
                if not await authority():
                    STREAM_ENDINGS["unauthorized"] += 1
                    return
                if len(self.pending) >= policy.subscription_queue_limit:
                    self._overflowed()
                    return
                context.send(notification)
        finally:
            with contextlib.suppress(PartDown), outages.reaching(CHANNEL_LAYER, unreachable):
                async with layer_turn():
                    await layer.group_discard(group, channel)
