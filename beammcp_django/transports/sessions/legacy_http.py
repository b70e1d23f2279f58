"""A 2025-11-25 request over HTTP: ``initialize`` opens a session, every later request names
it (``Mcp-Session-Id``) and the version it negotiated (``MCP-Protocol-Version``), and is
served in it (2025-11-25 basic/transports.mdx, "Session Management", "Protocol Version
Header").

Which era a message belongs to is decided before the core reads it (``in_legacy_era``):
modern ``_meta`` makes it a 2026-07-28 request whatever else it carries; otherwise a session
header, or the method ``initialize``, makes it a 2025-11-25 one. A message that establishes
neither is left to the 2026-07-28 path, which refuses it 400 with a modern error body, so a
client that speaks both eras can tell.

A session is bound to the principal the ``AUTHORIZE`` hook named when it was opened: a
request whose hook names another (or an unknown, ended or expired id) is answered 404
exactly alike. In a session every JSON-RPC error is answered 200, as that revision's clients
expect: there, 404 means the session is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from beammcp_django.protocol import jsonrpc, notifications, revisions
from beammcp_django.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LIMIT_REACHED,
    PartDown,
)
from beammcp_django.protocol.principal import principal_key
from beammcp_django.protocol.request import SESSION_METHODS, LegacySession, Request, Unanswered
from beammcp_django.protocol.server import Server
from beammcp_django.transports.admission import StreamAuthority
from beammcp_django.transports.exchange import Exchange
from beammcp_django.transports.headers import Disagreement, Headers
from beammcp_django.transports.incoming import Incoming
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.replies import JSON, error_body, refuse_unavailable, respond
from beammcp_django.transports.sessions.resumable import (
    NO_STREAM,
    ResumableStream,
    ResumeRefused,
    parse_event_id,
)
from beammcp_django.transports.sessions.store import (
    UNKNOWN_SESSION,
    HttpSession,
    SessionAsks,
    SessionBounds,
    SessionBusy,
    SessionRefused,
    Sessions,
    SessionStore,
)
from beammcp_django.transports.sessions.stream import serve_session_stream
from beammcp_django.transports.types import Receive, Send

SESSION_HEADER = b"mcp-session-id"


def in_legacy_era(message: Any, headers: Headers) -> bool:
    """Whether ``message`` is a 2025-11-25 one: no modern ``_meta``, and a session header or
    the method ``initialize``."""
    if type(message) is not dict:
        return False
    if not headers.all("mcp-session-id") and message.get("method") != "initialize":
        return False  # the usual 2026-07-28 request: decided without looking at _meta
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return not (type(meta) is dict and revisions.META_PROTOCOL_VERSION in meta)


class LegacySessions:
    """The 2025-11-25 side of the endpoint: its sessions, and how a request reaches one.
    They live in this process (``Sessions``) unless the policy names a store every worker
    shares (``HttpPolicy.session_store``)."""

    def __init__(self) -> None:
        self.sessions = Sessions()

    def store(self, policy: HttpPolicy) -> SessionStore:
        shared = policy.session_store
        return self.sessions if shared is None else shared()

    async def answer(self, server: Server, incoming: Incoming) -> dict[str, Any] | None:
        """A POST: ``initialize`` (no session named), or a message in the session named. The
        reply sent; None for a notification, a response, or a refusal of the session (503
        naming the store when it did not answer: nothing was sent yet, since what answers
        later, the exchange, names a part down in its own reply)."""
        message = incoming.message
        # A refusal of a notification or a response carries no id (transports.mdx).
        request_id = jsonrpc.readable_id(message) if "method" in message else None
        try:
            return await self._answer(server, incoming, request_id)
        except PartDown as down:
            await refuse_unavailable(incoming.send, request_id, down)
            return None

    async def _answer(
        self, server: Server, incoming: Incoming, request_id: jsonrpc.RequestId | None
    ) -> dict[str, Any] | None:
        bounds = _bounds(incoming.policy)
        store = self.store(incoming.policy)
        message, headers, send = incoming.message, incoming.headers, incoming.send
        if not headers.all("mcp-session-id"):
            return await self._initialize(server, incoming, store, bounds)
        session = await self._named(store, headers, send, incoming.principal, bounds, request_id)
        if session is None:
            return None
        method = message.get("method")
        if method == "initialize":
            return await _refuse(
                send,
                400,
                request_id,
                "this session is initialized already: send initialize without Mcp-Session-Id "
                "to start another",
            )
        if method in SESSION_METHODS:
            try:
                async with store.changing(session) as still_open:
                    if not still_open:
                        return await _refuse(send, 404, request_id, UNKNOWN_SESSION)
                    return await self._serve(server, incoming, store, session, session.state)
            except SessionBusy:
                return await _refuse(
                    send,
                    200,
                    request_id,
                    f"another request changing this session ({method}) held it too long; "
                    "send it again",
                    code=INTERNAL_ERROR,
                )
        return await self._serve(server, incoming, store, session, session.state.snapshot())

    async def _serve(
        self,
        server: Server,
        incoming: Incoming,
        store: SessionStore,
        session: HttpSession,
        state: LegacySession,
    ) -> dict[str, Any] | None:
        """Serve the message in ``session``, under ``state`` (the session's own for a request
        that changes it, else a snapshot)."""
        message, send = incoming.message, incoming.send
        read = server.receive(message, session=state, size=incoming.size)
        if type(read) is Unanswered:
            if read.reason == "response":
                await store.deliver(session, message)
            elif read.problem is None and message.get("method") == "notifications/cancelled":
                params = message.get("params")
                request_id = params.get("requestId") if type(params) is dict else None
                await store.withdraw(session, request_id)
            return await _unanswered(read, message, send)
        exchange = Exchange(
            server,
            incoming,
            read,
            statuses={},
            asks=SessionAsks(store, session),
            settle=_keeping(store, session) if state is session.state else None,
        )
        if type(read) is Request:
            exchange.resumable = _resumable(store, session, _bounds(incoming.policy))
        if type(read) is not Request:
            return await exchange.run()
        running = session.calls.running
        withdraw = running[read.id] = exchange.withdraw
        try:
            return await exchange.run()
        finally:
            if running.get(read.id) is withdraw:
                del running[read.id]

    async def open_stream(
        self,
        headers: Headers,
        receive: Receive,
        send: Send,
        policy: HttpPolicy,
        principal: Any,
        still_allowed: StreamAuthority,
    ) -> None:
        """``GET``: the named session's stream of server notifications (``stream.py``)."""
        accepted = ",".join(headers.all("accept")).lower()
        if "text/event-stream" not in accepted and "*/*" not in accepted:
            await _refuse(
                send, 406, None, "GET opens an SSE stream: Accept must list text/event-stream"
            )
            return
        store, bounds = self.store(policy), _bounds(policy)
        session = await self._named(store, headers, send, principal, bounds, None)
        if session is None:
            return
        try:
            last_event = headers.one("last-event-id")
        except Disagreement:
            await _refuse(send, 400, None, "Last-Event-ID appears twice with different values")
            return
        if last_event is not None:
            await _resume(store, session, last_event, receive, send)
            return
        if not await store.claim_stream(session, bounds):
            await _refuse(
                send,
                409,
                None,
                "this session has its GET stream open already: a message goes on one stream only",
            )
            return
        try:
            await serve_session_stream(session, store, policy, still_allowed, receive, send)
        finally:
            # Not raised: the stream was answered. A claim left lapses (STREAM_CLAIM_SECONDS).
            with contextlib.suppress(PartDown):
                await store.release_stream(session)

    async def end(self, headers: Headers, send: Send, policy: HttpPolicy, principal: Any) -> None:
        """``DELETE``: end the named session (204; its GET stream closes)."""
        store = self.store(policy)
        session = await self._named(store, headers, send, principal, _bounds(policy), None)
        if session is None:
            return
        await store.close(session)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _named(
        self,
        store: SessionStore,
        headers: Headers,
        send: Send,
        principal: Any,
        bounds: SessionBounds,
        request_id: jsonrpc.RequestId | None,
    ) -> HttpSession | None:
        """The live session ``Mcp-Session-Id`` names for this principal, its version header
        checked; else None, the refusal sent: 404 for an unknown, ended, expired or another
        principal's session alike, 400 for a header the revision refuses."""
        try:
            session_id = headers.one("mcp-session-id") or ""
        except Disagreement:
            await _refuse(
                send, 400, request_id, "Mcp-Session-Id appears twice with different values"
            )
            return None
        session = await store.find(session_id, principal_key(principal), bounds)
        if session is None:
            await _refuse(send, 404, request_id, UNKNOWN_SESSION)
            return None
        problem = _version_problem(headers, session)
        if problem is not None:
            await _refuse(send, 400, request_id, problem)
            return None
        return session

    async def _initialize(
        self, server: Server, incoming: Incoming, store: SessionStore, bounds: SessionBounds
    ) -> dict[str, Any] | None:
        """Open a session and answer ``initialize`` in it, its id in the answer's headers;
        the session is let go again when the answer is an error or never reached the
        client."""
        message, send = incoming.message, incoming.send
        try:
            session = await store.open(principal_key(incoming.principal), bounds, incoming.client)
        except SessionRefused as refused:
            return await _refuse(
                send,
                refused.status,
                jsonrpc.readable_id(message),
                refused.message,
                code=LIMIT_REACHED,
            )
        reply: dict[str, Any] | None = None
        try:
            read = server.receive(message, session=session.state, size=incoming.size)
            if type(read) is Unanswered:  # initialize sent as a notification: no session
                return await _unanswered(read, message, send)
            reply = await Exchange(
                server,
                incoming,
                read,
                statuses={},
                answer_headers=[_session_header(session)],
                settle=_keeping(store, session),
            ).run()
            return reply
        finally:
            if reply is None or "result" not in reply:
                # Not raised: the reply was sent. A session left lapses when idle.
                with contextlib.suppress(PartDown):
                    await store.close(session)


def _bounds(policy: HttpPolicy) -> SessionBounds:
    bounds = policy.sessions
    assert bounds is not None, "routed here only with HTTP_LEGACY_SESSIONS on"
    return bounds


async def _resume(
    store: SessionStore, session: HttpSession, last_event: str, receive: Receive, send: Send
) -> None:
    """``GET`` with ``Last-Event-ID``: the call stream it names, resumed after that event,
    here or from the worker that runs it."""
    named = parse_event_id(last_event)
    if named is None:
        await _refuse(send, 400, None, NO_STREAM)
        return
    stream_id, after = named
    stream = session.calls.streams.get(stream_id)
    if stream is None:
        if not await store.resume_elsewhere(session, stream_id, after, receive, send):
            await _refuse(send, 400, None, NO_STREAM)
        return
    try:
        await stream.resume(after, send, receive)
    except ResumeRefused as refused:
        await _refuse(send, refused.status, None, refused.message)


_offers: set[asyncio.Task[None]] = set()


def _resumable(
    store: SessionStore, session: HttpSession, bounds: SessionBounds
) -> Callable[[Send, Callable[[], None]], ResumableStream]:
    """What makes a reply in ``session`` a resumable stream, when it becomes a stream at
    all: given the connection, and what stops the call. (It holds no exchange: one that
    did would make every exchange a cycle only a full collection frees.) The stream holds
    its exchange (``stop_call``), which holds its session and so the session's live calls
    in this process: a detached stream stays where a resume, here or relayed here, finds
    it."""

    def resumable_stream(send: Send, stop_call: Callable[[], None]) -> ResumableStream:
        stream = ResumableStream(
            session.calls.streams,
            send,
            held_events=bounds.held_events,
            resume_seconds=bounds.resume_seconds,
        )
        stream.stop_call = stop_call
        stream.on_detach = _offering(store, session, bounds.resume_seconds)
        return stream

    return resumable_stream


def _offering(
    store: SessionStore, session: HttpSession, seconds: float
) -> Callable[[str], asyncio.Task[None]]:
    """What a stream of ``session`` that lost its connection tells its store: where a
    resume of it must go (a store shared by workers records it), as a task of its own,
    which a release awaits before it ends the connection."""

    async def offering(stream_id: str) -> None:
        # Not raised: with the store down, the stream is resumable only where it runs.
        with contextlib.suppress(PartDown):
            await store.offer_stream(session, stream_id, seconds)

    def offer(stream_id: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(offering(stream_id))
        _offers.add(task)
        task.add_done_callback(_offers.discard)
        return task

    return offer


def _keeping(store: SessionStore, session: HttpSession) -> Callable[[], Awaitable[None]]:
    """What settles a request that changed ``session``: its state kept before the reply."""

    def keep() -> Awaitable[None]:
        return store.keep(session)

    return keep


def _session_header(session: HttpSession) -> tuple[bytes, bytes]:
    return (SESSION_HEADER, session.id.encode("ascii"))


def _version_problem(headers: Headers, session: HttpSession) -> str | None:
    """Why the request's ``MCP-Protocol-Version`` is refused in ``session``, or None. After
    initialize every request carries the version negotiated (a client that sends none would
    be assumed 2025-03-26, which this server does not speak)."""
    try:
        version = headers.one("mcp-protocol-version")
    except Disagreement:
        return "MCP-Protocol-Version appears twice with different values"
    negotiated = session.state.version
    if version is None:
        return (
            f"MCP-Protocol-Version is missing: requests in a session carry the version "
            f"it negotiated ({negotiated})"
        )
    if version != negotiated:
        return f"MCP-Protocol-Version is not the version this session negotiated ({negotiated})"
    return None


async def _unanswered(read: Unanswered, message: dict[str, Any], send: Send) -> None:
    """A notification is accepted (202) and read; a malformed one refused 400. A response is
    accepted (202): delivered to the call that asked, if one waits (``_deliver``)."""
    if read.reason == "notification" and read.problem is not None:
        await respond(send, 400, error_body(None, INVALID_REQUEST, read.problem), list(JSON))
        return None
    if read.reason == "notification":
        notifications.read(message)
    await respond(send, 202, b"", [])
    return None


async def _refuse(
    send: Send,
    status: int,
    request_id: jsonrpc.RequestId | None,
    message: str,
    *,
    code: int = INVALID_REQUEST,
) -> None:
    await respond(send, status, error_body(request_id, code, message), list(JSON))
    return None
