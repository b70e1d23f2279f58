"""The 2025-11-25 sessions of the HTTP endpoint, held in this process.

A session is what ``initialize`` negotiated (the core's ``LegacySession``), the principal it
was opened by, and when it was last used. Its id is 192 bits from ``secrets``, URL-safe
base64 (visible ASCII, as the transport page requires), derived from nothing the client
sent. The store is bounded by its own rules, never by an eviction it does not control: at
most ``SessionBounds.limit`` sessions, ``per_principal`` of them for one principal (or, for
sessions opened with none, for one client address), each
ending after ``idle_seconds`` unused; ``initialize`` past a bound is refused by name.

One process holds its sessions: what the embedded defaults and ``manage.py mcp_serve`` run.
A session's requests must reach the process that opened it.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.protocol.request import LegacySession

SESSION_ID_BYTES = 24
# What a request naming a session this process does not hold is answered, whatever the reason.
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
    # Set when the session ends: its open GET stream (at most one) waits on it.
    ended: asyncio.Event | None = None
    # The server-to-client requests of its calls still waiting for the client's answer, by
    # the id they were sent with (``Exchange.ask``).
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    # How to withdraw each request of the session still running, by the client's id: what
    # notifications/cancelled acts on. One entry per request in flight, which the server's
    # concurrency limit bounds.
    running: dict[Any, Callable[[], None]] = field(default_factory=dict)


class SessionEnded(Exception):
    """What a call waiting for its client's answer is given when its session ends: the
    answer can no longer be posted."""


class SessionRefused(Exception):
    """``initialize`` past a bound: ``status`` (429 for one principal's, 503 for the
    process's) and a message naming the setting."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def principal_key(principal: Any) -> str:
    """What binds a session to the principal that opened it: a Django model instance (a
    user) by its model and primary key, anything else by a digest of its ``repr`` (so a
    frozen dataclass naming the same caller is the same principal); no principal is "".

    A principal whose ``repr`` differs on every request (the default ``object`` repr holds an
    address) never matches: each later request of its session is answered as for an unknown
    one, which fails closed.
    """
    if principal is None:
        return ""
    try:
        meta = getattr(principal, "_meta", None)
        label = getattr(meta, "label_lower", None)
        if isinstance(label, str):
            return f"model:{label}:{principal.pk}"
        shown = repr(principal)
    except Exception:  # host code's __repr__ or pk raised: a key nothing else can match
        return f"unkeyable:{secrets.token_hex(16)}"
    return "repr:" + hashlib.sha256(shown.encode("utf-8", "replace")).hexdigest()


class Sessions:
    """The sessions of this process, oldest use first (so expiry looks only at the front)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._open: OrderedDict[str, HttpSession] = OrderedDict()
        self._held: Counter[str] = Counter()  # sessions per holder ("" not counted)

    def __len__(self) -> int:
        return len(self._open)

    def open(self, principal: str, bounds: SessionBounds, address: str = "") -> HttpSession:
        """A new session for ``principal`` (a ``principal_key``), from the client ``address``;
        ``SessionRefused`` past a bound. A session with a principal counts against that
        principal's ``per_principal``; one with none, against its client address's, so no one
        anonymous client can hold every session. Expired sessions are let go first, so they
        never count against a bound."""
        now = self._clock()
        self._expire(now, bounds.idle_seconds)
        holder = principal or (f"address:{address}" if address else "")
        if holder and self._held[holder] >= bounds.per_principal:
            whom = "this principal" if principal else "this client address, with no principal,"
            raise SessionRefused(
                429,
                f"{whom} holds {bounds.per_principal} sessions already "
                "(SESSIONS_PER_PRINCIPAL); end one with DELETE or let it expire",
            )
        if len(self._open) >= bounds.limit:
            raise SessionRefused(
                503, f"the server holds {bounds.limit} sessions already (SESSION_LIMIT)"
            )
        session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
        session = HttpSession(session_id, principal, holder, last_used=now)
        self._open[session_id] = session
        if holder:
            self._held[holder] += 1
        return session

    def find(self, session_id: str, principal: str, bounds: SessionBounds) -> HttpSession | None:
        """The live session ``session_id`` names, when ``principal`` opened it; None for an
        unknown, ended or expired one, and for another principal's (no oracle: the same
        answer). Finding it counts as a use."""
        now = self._clock()
        self._expire(now, bounds.idle_seconds)
        session = self._open.get(session_id)
        if session is None or not secrets.compare_digest(session.principal_key, principal):
            return None
        session.last_used = now
        self._open.move_to_end(session_id)
        return session

    def close(self, session: HttpSession) -> None:
        """End ``session``: later requests in it are answered as for an unknown one."""
        if self._open.pop(session.id, None) is None:
            return
        if session.holder:
            self._release(session.holder)
        if session.ended is not None:
            session.ended.set()
        for waiting in session.pending.values():
            if not waiting.done():
                waiting.set_exception(SessionEnded())

    def touch(self, session: HttpSession) -> None:
        """Count a use that is no request (a GET stream that stays open)."""
        if session.id in self._open:
            session.last_used = self._clock()
            self._open.move_to_end(session.id)

    def _expire(self, now: float, idle_seconds: float) -> None:
        while self._open:
            oldest = next(iter(self._open.values()))
            if now - oldest.last_used < idle_seconds:
                return
            self.close(oldest)

    def _release(self, holder: str) -> None:
        self._held[holder] -= 1
        if self._held[holder] <= 0:
            del self._held[holder]
