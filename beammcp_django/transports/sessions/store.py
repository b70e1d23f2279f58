"""The 2025-11-25 sessions of the HTTP endpoint: what a session is, and the store that holds
them in this process (``Sessions``); ``shared`` holds them in Redis for every worker.

A session is what ``initialize`` negotiated (the core's ``LegacySession``), the principal it
was opened by, and when it was last used. Its id is 192 bits from ``secrets``, URL-safe
base64 (visible ASCII, as the transport page requires), derived from nothing the client
sent. A store is bounded by its own rules, never by an eviction it does not control: at
most ``SessionBounds.limit`` sessions, ``per_principal`` of them for one principal (or, for
sessions opened with none, for one client address), each ending after ``idle_seconds``
unused; ``initialize`` past a bound is refused by name.

What a session runs in one process (its calls waiting for the client's answers, its
requests in flight, its GET stream) is that process's own: ``LiveCalls``.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from beammcp_django.protocol.request import LegacySession
from beammcp_django.transports.sessions.resumable import ResumableStream
from beammcp_django.transports.types import Receive, Send

SESSION_ID_BYTES = 24
# What a request naming a session this server does not hold is answered, whatever the reason.
UNKNOWN_SESSION = (
    "no such session (Mcp-Session-Id): it ended, expired, or was never opened for this "
    "caller; send initialize without Mcp-Session-Id to start one"
)


@dataclass(frozen=True)
class SessionBounds:
    """The bounds the Django layer reads from settings (``SESSION_*``)."""

    idle_seconds: float = 3600.0
    limit: int = 10_000
    per_principal: int = 100
    # Server-to-client requests of one session waiting for the client's answer at once, and
    # how long each waits (Exchange.ask).
    pending_answers: int = 16
    answer_seconds: float = 300.0
    # A resumable call stream: the events it holds for a resume, and how long a call whose
    # client left waits for one (``resumable.py``).
    held_events: int = 256
    resume_seconds: float = 60.0


@dataclass
class LiveCalls:
    """What one session runs in this process. Each process keeps its own: a store shared by
    several workers relays the client's answers, cancellations and the session's end to the
    process that runs what they concern (``sessions.relay``)."""

    # The server-to-client requests of its calls still waiting for the client's answer, by
    # the id they were sent with (``Exchange.ask``).
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    # How to withdraw each request of the session still running here, by the client's id:
    # what notifications/cancelled acts on. One entry per request in flight, which the
    # server's concurrency limit bounds.
    running: dict[Any, Callable[[], None]] = field(default_factory=dict)
    # Set when the session ends: its GET stream, when this process holds it, waits on it.
    stream: asyncio.Event | None = None
    # Its calls' SSE streams a client may resume (GET with Last-Event-ID), by stream id.
    streams: dict[str, ResumableStream] = field(default_factory=dict)

    def end(self) -> None:
        """The session ended: its stream closes, its calls stop waiting for answers, and
        those whose stream lost its connection are stopped (no one can resume them now)."""
        if self.stream is not None:
            self.stream.set()
        for resumable in list(self.streams.values()):
            if resumable.detached:
                resumable.abandon()
        for waiting in self.pending.values():
            if not waiting.done():
                waiting.set_exception(SessionEnded())


@dataclass
class HttpSession:
    """One open session."""

    id: str
    principal_key: str
    # Whom the session counts against for SESSIONS_PER_PRINCIPAL: its principal, or for a
    # session opened with none the client address it came from ("" when there is none).
    holder: str = ""
    state: LegacySession = field(default_factory=LegacySession)
    last_used: float = 0.0
    calls: LiveCalls = field(default_factory=LiveCalls)


class SessionEnded(Exception):
    """What a call waiting for its client's answer is given when its session ends: the
    answer can no longer be posted."""


class SessionBusy(Exception):
    """A request that changes a session waited its bound for another change of it to end
    (a worker that died holding the change frees it when the bound lapses)."""


class SessionRefused(Exception):
    """``initialize`` past a bound: ``status`` (429 for one principal's, 503 for the
    server's) and a message naming the setting."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class SessionStore(Protocol):
    """Where sessions live: this process (``Sessions``) or Redis (``RedisSessions``)."""

    async def open(self, principal: str, bounds: SessionBounds, address: str) -> HttpSession:
        """A new session; ``SessionRefused`` past a bound."""
        ...

    async def find(
        self, session_id: str, principal: str, bounds: SessionBounds
    ) -> HttpSession | None:
        """The live session ``session_id`` names, when ``principal`` opened it; None for an
        unknown, ended or expired one, and for another principal's (no oracle: the same
        answer). Finding it counts as a use."""
        ...

    def changing(self, session: HttpSession) -> contextlib.AbstractAsyncContextManager[bool]:
        """Serve a request that changes ``session`` (``SESSION_METHODS``): one at a time,
        its state current. Yields False when the session ended meanwhile; ``SessionBusy``
        when another change of it held it too long."""
        ...

    async def keep(self, session: HttpSession) -> None:
        """Keep ``session.state`` as a request changed it: before the reply is written, so
        the client's next request, wherever it lands, is served under it."""
        ...

    async def close(self, session: HttpSession) -> None:
        """End ``session``: later requests in it are answered as for an unknown one, its GET
        stream closes and its calls waiting for answers stop, wherever they run."""
        ...

    async def touch(self, session: HttpSession, bounds: SessionBounds) -> None:
        """Count a use that is no request (a GET stream that stays open)."""
        ...

    async def claim_stream(self, session: HttpSession, bounds: SessionBounds) -> bool:
        """Hold the session's one GET stream (``session.calls.stream`` set); False when a
        stream holds it already."""
        ...

    async def release_stream(self, session: HttpSession) -> None:
        """Let go of the GET stream this process holds for ``session``."""
        ...

    async def current(self, session: HttpSession) -> None:
        """Bring ``session.state`` up to date (a GET stream reading its subscriptions)."""
        ...

    async def expect(
        self, session: HttpSession, request_id: str, seconds: float, limit: int
    ) -> asyncio.Future[Any] | None:
        """Where the client's answer to ``request_id`` (sent to it now, answered within
        ``seconds``) will be set; None when the session waits for ``limit`` answers
        already, wherever its calls run."""
        ...

    async def forget(self, session: HttpSession, request_id: str) -> None:
        """Stop waiting for the answer to ``request_id``."""
        ...

    async def deliver(self, session: HttpSession, message: dict[str, Any]) -> None:
        """Hand a client's answer to the call of this session that waits for it. An answer
        to an id the session is not waiting on (never sent, answered already, past its
        deadline) is dropped: it reaches no call, and no other session's."""
        ...

    async def withdraw(self, session: HttpSession, request_id: Any) -> None:
        """``notifications/cancelled``: stop the session's request it names, if one runs."""
        ...

    async def offer_stream(self, session: HttpSession, stream_id: str, seconds: float) -> None:
        """A call stream of ``session`` run here lost its connection: for ``seconds`` a
        resume of it, wherever it lands, must come here."""
        ...

    async def resume_elsewhere(
        self, session: HttpSession, stream_id: str, after: int, receive: Receive, send: Send
    ) -> bool:
        """Serve a resume of a stream this process does not run, from the one that does;
        False when none does."""
        ...


@dataclass(frozen=True, slots=True)
class SessionAsks:
    """How one call in ``session`` waits for its client's answers to what it asks
    (``Exchange.ask``), wherever the client posts them."""

    store: SessionStore
    session: HttpSession

    async def expect(
        self, request_id: str, seconds: float, limit: int
    ) -> asyncio.Future[Any] | None:
        return await self.store.expect(self.session, request_id, seconds, limit)

    async def forget(self, request_id: str) -> None:
        await self.store.forget(self.session, request_id)


def holder_of(principal: str, address: str) -> str:
    """Whom a new session counts against: its principal, else its client address."""
    return principal or (f"address:{address}" if address else "")


def per_principal_refusal(principal: str, bounds: SessionBounds) -> SessionRefused:
    whom = "this principal" if principal else "this client address, with no principal,"
    return SessionRefused(
        429,
        f"{whom} holds {bounds.per_principal} sessions already "
        "(SESSIONS_PER_PRINCIPAL); end one with DELETE or let it expire",
    )


def limit_refusal(bounds: SessionBounds) -> SessionRefused:
    return SessionRefused(503, f"the server holds {bounds.limit} sessions already (SESSION_LIMIT)")


def new_session_id() -> str:
    return secrets.token_urlsafe(SESSION_ID_BYTES)


class Sessions:
    """The sessions of this process, oldest use first (so expiry looks only at the front):
    what the embedded defaults and ``manage.py mcp_serve`` with one worker run. A session's
    requests must reach the process that opened it."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._open: OrderedDict[str, HttpSession] = OrderedDict()
        self._held: Counter[str] = Counter()  # sessions per holder ("" not counted)

    def __len__(self) -> int:
        return len(self._open)

    async def open(self, principal: str, bounds: SessionBounds, address: str = "") -> HttpSession:
        """A session with a principal counts against that principal's ``per_principal``; one
        with none, against its client address's, so no one anonymous client can hold every
        session. Expired sessions are let go first, so they never count against a bound."""
        now = self._clock()
        self._expire(now, bounds.idle_seconds)
        holder = holder_of(principal, address)
        if holder and self._held[holder] >= bounds.per_principal:
            raise per_principal_refusal(principal, bounds)
        if len(self._open) >= bounds.limit:
            raise limit_refusal(bounds)
        session = HttpSession(new_session_id(), principal, holder, last_used=now)
        self._open[session.id] = session
        if holder:
            self._held[holder] += 1
        return session

    async def find(
        self, session_id: str, principal: str, bounds: SessionBounds
    ) -> HttpSession | None:
        now = self._clock()
        self._expire(now, bounds.idle_seconds)
        session = self._open.get(session_id)
        if session is None or not secrets.compare_digest(session.principal_key, principal):
            return None
        session.last_used = now
        self._open.move_to_end(session_id)
        return session

    @contextlib.asynccontextmanager
    async def changing(self, session: HttpSession) -> AsyncIterator[bool]:
        # One process, one loop: the core changes the state before its first await.
        yield session.id in self._open

    async def keep(self, session: HttpSession) -> None:
        return None  # the one copy there is, changed in place

    async def close(self, session: HttpSession) -> None:
        self._close(session)

    async def touch(self, session: HttpSession, bounds: SessionBounds) -> None:
        if session.id in self._open:
            session.last_used = self._clock()
            self._open.move_to_end(session.id)

    async def claim_stream(self, session: HttpSession, bounds: SessionBounds) -> bool:
        if session.calls.stream is not None:
            return False
        session.calls.stream = asyncio.Event()
        return True

    async def release_stream(self, session: HttpSession) -> None:
        session.calls.stream = None

    async def current(self, session: HttpSession) -> None:
        return None  # the one copy there is

    async def expect(
        self, session: HttpSession, request_id: str, seconds: float, limit: int
    ) -> asyncio.Future[Any] | None:
        if len(session.calls.pending) >= limit:
            return None
        answered = session.calls.pending[request_id] = asyncio.get_running_loop().create_future()
        return answered

    async def forget(self, session: HttpSession, request_id: str) -> None:
        session.calls.pending.pop(request_id, None)

    async def deliver(self, session: HttpSession, message: dict[str, Any]) -> None:
        deliver_here(session.calls, message.get("id"), message)

    async def withdraw(self, session: HttpSession, request_id: Any) -> None:
        withdraw_here(session.calls, request_id)

    async def offer_stream(self, session: HttpSession, stream_id: str, seconds: float) -> None:
        return None  # every resume reaches this process

    async def resume_elsewhere(
        self, session: HttpSession, stream_id: str, after: int, receive: Receive, send: Send
    ) -> bool:
        return False

    def _close(self, session: HttpSession) -> None:
        if self._open.pop(session.id, None) is None:
            return
        if session.holder:
            self._held[session.holder] -= 1
            if self._held[session.holder] <= 0:
                del self._held[session.holder]
        session.calls.end()

    def _expire(self, now: float, idle_seconds: float) -> None:
        while self._open:
            oldest = next(iter(self._open.values()))
            if now - oldest.last_used < idle_seconds:
                return
            self._close(oldest)


def deliver_here(calls: LiveCalls, request_id: Any, message: dict[str, Any]) -> bool:
    """Set the answer ``message`` for the call of ``calls`` waiting on ``request_id``;
    whether one waited."""
    waiting = calls.pending.get(request_id) if type(request_id) is str else None
    if waiting is None or waiting.done():
        return False
    waiting.set_result(message)
    return True


def withdraw_here(calls: LiveCalls, request_id: Any) -> bool:
    """Withdraw the request of ``calls`` the client's ``request_id`` names; whether one ran."""
    withdraw = calls.running.get(request_id) if type(request_id) in (str, int) else None
    if withdraw is None:
        return False
    withdraw()
    return True
