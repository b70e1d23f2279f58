"""2025-11-25 sessions every worker shares, held in Redis (``BEAMMCP["SESSION_CACHE"]``).

Why Redis, and not the database: a session is read on every request in it, and its expiry
is a matter of time; Redis reads a session in one round trip, lets an unused one lapse on its
own clock (``PEXPIRE``), and counts the bounds atomically in one script, where a table would
take a write per request to record the use and a sweeper to expire. Why Redis itself rather
than Django's cache API over it: that API has no atomic count (two workers would both admit
the last session a bound allows), and its async methods run every call on one shared thread.
The host still names the Redis the Django way, as an entry of ``CACHES``.

Layout under one prefix: a hash per session (its principal, its holder, its state as JSON,
when its use was last recorded), named by its id and its principal's key together
(``_record``): a lookup with another principal's key names a record that does not exist, so
it is answered as an unknown id by construction, with the same command at the same cost, and
a request's lookup is a plain read (``HMGET``) with no script to check the principal. The
hash lapses ``idle_seconds`` after its last use, recorded at most once per ``_use_grain`` (a
tenth of the idle time, at most a second) by each worker (the lookup script, run when the
worker has not recorded the session's use within the grain): a busy session's many requests
cost Redis a read each and a few writes a grain, and it lapses on time to within that grain.
A sorted set of every session and one per holder, scored by last use, is what the bounds
count (a lapsed session is dropped from them before counting, so it never counts); a key per
GET stream held and per answer awaited names the worker's relay channel (``relay``). Redis
must not evict these on its own (``maxmemory-policy noeviction``, its default): the bounds
are this store's, not Redis'.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

from beammcp_django.protocol.errors import PartDown
from beammcp_django.protocol.request import LegacySession
from beammcp_django.transports.outages import SESSION_STORE, outages, unreachable_errors
from beammcp_django.transports.sessions.redis_line import (
    Encoded,
    RedisLine,
    encode_parts,
    encoded,
)
from beammcp_django.transports.sessions.redis_scripts import SCRIPTS
from beammcp_django.transports.sessions.relay import SessionRelay
from beammcp_django.transports.sessions.store import (
    HttpSession,
    SessionBounds,
    SessionBusy,
    deliver_here,
    holder_of,
    limit_refusal,
    new_session_id,
    per_principal_refusal,
    withdraw_here,
)
from beammcp_django.transports.types import Receive, Send

logger = logging.getLogger("beammcp_django.http")

# How long a GET stream's claim outlives its last write (a stream writes at least every
# KEEPALIVE_SECONDS, 15): a worker that dies holding one frees it this long after.
STREAM_CLAIM_SECONDS = 45.0
# How long a request changing a session (SESSION_METHODS) may hold it (a worker that dies
# holding it frees it then), and how long another waits for it before it is SessionBusy.
CHANGE_LOCK_SECONDS = 10.0
CHANGE_WAIT_SECONDS = 5.0
# The ids this server gives its requests to the client (``Exchange.ask``): what an answer's
# id must look like before it is looked up.
ASK_ID_PREFIX = "beammcp-"
MAX_ASK_ID_CHARS = 64

# The sessions this process keeps what it saw of (``RedisSessions._seen``: when it last
# recorded the use, the state as parsed), and the largest state kept parsed (a client's
# capabilities may fill a message): larger ones are parsed for each request, so it holds at
# most SESSIONS_SEEN x PARSED_STATE_BYTES of text.
SESSIONS_SEEN = 1024
PARSED_STATE_BYTES = 4096


def encode_state(state: LegacySession) -> str:
    return json.dumps(
        {
            "version": state.version,
            "capabilities": state.client_capabilities,
            "info": state.client_info,
            "level": state.log_level,
            "subscriptions": list(state.subscriptions),
        },
        separators=(",", ":"),
    )


def decode_state(text: bytes | str) -> LegacySession:
    fields = json.loads(text)
    state = LegacySession()
    state.version = fields["version"]
    state.client_capabilities = fields["capabilities"]
    state.client_info = fields["info"]
    state.log_level = fields["level"]
    state.subscriptions = dict.fromkeys(fields["subscriptions"])
    return state


class RedisSessions:
    """The ``SessionStore`` every worker on one Redis shares (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        prefix: str,
        relay: SessionRelay,
        options: dict[str, Any] | None = None,
        *,
        connections: int = 64,
        wait_seconds: float = 5.0,
    ) -> None:
        self.url = url
        # The pool's bound is this store's (SESSION_CACHE_CONNECTIONS), whatever OPTIONS say.
        self._options = {k: v for k, v in (options or {}).items() if k != "max_connections"}
        self._connections = connections
        self._wait_seconds = wait_seconds
        self.prefix = prefix
        self._held_prefix = prefix + "held:"
        self._all = prefix + "all"
        self.relay = relay
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._line_of_loop: RedisLine | None = None
        # What redis-py raises when Redis is not there to answer.
        self._unreachable = unreachable_errors()
        self._eviction_checked = False
        self._sending: set[asyncio.Task[None]] = set()  # claims let go of later
        # This process's claim tokens: for the GET streams it holds, by session id.
        self._streams: dict[str, str] = {}
        self._find_parts_of: dict[float, _LookupParts] = {}
        # What this process saw of the sessions it serves, by record (``_Seen``).
        self._seen: dict[str, _Seen] = {}

    # -- SessionStore ----------------------------------------------------------------------

    async def open(self, principal: str, bounds: SessionBounds, address: str = "") -> HttpSession:
        holder = holder_of(principal, address)
        session = HttpSession(new_session_id(), principal, holder)
        session.calls = self.relay.calls(session.id)
        with self._reaching():
            outcome = await self._run(
                "open",
                keys=[self._all, self._held_prefix + holder, self._record(session)],
                args=[
                    _ms(bounds.idle_seconds),
                    bounds.limit,
                    bounds.per_principal,
                    session.id,
                    principal,
                    holder,
                    encode_state(session.state),
                ],
            )
        if outcome == 1:
            raise per_principal_refusal(principal, bounds)
        if outcome == 2:
            raise limit_refusal(bounds)
        return session

    async def find(
        self, session_id: str, principal: str, bounds: SessionBounds
    ) -> HttpSession | None:
        if not session_id or len(session_id) > 64:
            return None  # no id this store gave: not worth a round trip
        record = _record_key(self.prefix, session_id, principal)
        seen = self._seen.get(record)
        with self._reaching():
            if seen is not None and time.monotonic() - seen.recorded < seen.grain:
                found = await self._read(record)
            else:
                found = await self._find(record, session_id, bounds)
                seen = None  # its use recorded now, or by another worker within the grain
        if found is None:
            self._seen.pop(record, None)
            return None
        holder, state, recorded = found
        return HttpSession(
            session_id,
            principal,
            holder.decode(),
            self._parsed(record, state, seen, bounds, recorded),
            calls=self.relay.calls(session_id),
        )

    def _parsed(
        self,
        record: str,
        text: bytes,
        seen: _Seen | None,
        bounds: SessionBounds,
        recorded: float | None,
    ) -> LegacySession:
        """The session's state, parsed from ``text``; parsed once while its requests here
        carry the same bytes (a change, which any worker may make, sends new ones). The
        requests of one session on this worker share its mappings, as the in-process
        store's requests do (each is served on a snapshot, ``LegacySession.snapshot``, so
        the package changes none of them; a host that changed ``client_capabilities``
        would change them for the session's later requests here); no two sessions ever
        share one. ``seen`` is what was kept of it when the lookup only read (``None`` when
        the lookup script ran: then kept anew, with when its use was ``recorded``, on
        ``time.monotonic``'s clock, so that this worker reads only within a grain of the
        last use recorded by any worker). At most ``SESSIONS_SEEN``
        kept, the oldest dropped first, none parsed over ``PARSED_STATE_BYTES``; a session
        closed here is dropped (one closed or lapsed elsewhere, when its next lookup here
        finds nothing, or when it is the oldest)."""
        if seen is not None and seen.state is not None and seen.text == text:
            return seen.state
        state = decode_state(text)
        kept, held = (text, state) if len(text) <= PARSED_STATE_BYTES else (b"", None)
        if seen is not None:
            seen.text, seen.state = kept, held
            return state
        everything = self._seen
        if everything.pop(record, None) is None and len(everything) >= SESSIONS_SEEN:
            del everything[next(iter(everything))]
        grain = _use_grain(_ms(bounds.idle_seconds)) / 1000
        everything[record] = _Seen(kept, held, recorded or time.monotonic(), grain)
        return state

    @contextlib.asynccontextmanager
    async def changing(self, session: HttpSession) -> AsyncIterator[bool]:
        lock = self.prefix + "lock:" + session.id
        token = secrets.token_hex(8)
        client = self._redis()
        loop = asyncio.get_running_loop()
        gives_up_at = loop.time() + CHANGE_WAIT_SECONDS
        with self._reaching():
            while not await client.set(lock, token, nx=True, px=_ms(CHANGE_LOCK_SECONDS)):
                if loop.time() >= gives_up_at:
                    raise SessionBusy()
                await asyncio.sleep(0.005)
        try:
            with self._reaching():
                state = await client.hget(self._record(session), "state")
            if state is None:
                yield False
                return
            session.state = decode_state(state)
            yield True
        finally:
            # Not raised: the request was answered. A lock left lapses in CHANGE_LOCK_SECONDS.
            with contextlib.suppress(PartDown), self._reaching():
                await self._run("if_ours", keys=[lock], args=[token, 0])

    async def keep(self, session: HttpSession) -> None:
        state = encode_state(session.state)
        with self._reaching():
            await self._run("save", keys=[self._record(session)], args=[state])

    async def close(self, session: HttpSession) -> None:
        record = self._record(session)
        keys = [record, self._all, self._stream(session.id), self._asks(session.id)]
        self._seen.pop(record, None)
        with self._reaching():
            await self._run("close", keys, [session.id, self._held_prefix])
        session.calls.end()
        await self.relay.end(session.id)

    async def touch(self, session: HttpSession, bounds: SessionBounds) -> None:
        with self._reaching():
            await self._find(self._record(session), session.id, bounds)
            token = self._streams.get(session.id)
            if token is not None:
                claim, extend = self._stream(session.id), _ms(STREAM_CLAIM_SECONDS)
                await self._run("if_ours", [claim], [token, extend])

    async def claim_stream(self, session: HttpSession, bounds: SessionBounds) -> bool:
        if session.calls.stream is not None:
            return False
        token = secrets.token_hex(8)
        await self.relay.address()  # so this worker hears the session's end: before the claim
        with self._reaching():
            claimed = await self._redis().set(
                self._stream(session.id), token, nx=True, px=_ms(STREAM_CLAIM_SECONDS)
            )
        if not claimed or session.calls.stream is not None:
            return False
        self._streams[session.id] = token
        session.calls.stream = asyncio.Event()
        return True

    async def release_stream(self, session: HttpSession) -> None:
        session.calls.stream = None
        token = self._streams.pop(session.id, None)
        if token is None:
            return
        claim = self._stream(session.id)
        try:
            with self._reaching():
                await self._run("if_ours", [claim], [token, 0])
        except PartDown:
            self._release_later(claim, token)
            raise

    def _release_later(self, claim: str, token: str) -> None:
        """Let go of a stream's claim that Redis did not take back: tried again each second
        until it answers, or until the claim lapses on its own. A claim left held refused
        the session's next GET stream 409 (896 of 1,000 sessions, 2026-12-06)."""

        async def again() -> None:
            loop = asyncio.get_running_loop()
            lapses_at = loop.time() + STREAM_CLAIM_SECONDS
            while loop.time() < lapses_at:
                await asyncio.sleep(1.0)
                try:
                    with self._reaching():
                        await self._run("if_ours", [claim], [token, 0])
                    return
                except PartDown:
                    continue
                except Exception as failed:  # Redis refused the command itself: it lapses
                    logger.warning("a stream's claim could not be let go: %s", failed)
                    return

        task = asyncio.get_running_loop().create_task(again())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def current(self, session: HttpSession) -> None:
        with self._reaching():
            state = await self._redis().hget(self._record(session), "state")
        if state is not None:
            session.state = decode_state(state)

    async def expect(
        self, session: HttpSession, request_id: str, seconds: float, limit: int
    ) -> asyncio.Future[Any] | None:
        channel = await self.relay.address()
        with self._reaching():
            registered = await self._run(
                "expect",
                keys=[self._asks(session.id), self._ask(session.id, request_id)],
                args=[limit, _ms(seconds), request_id, channel],
            )
        if not registered:
            return None
        answered = asyncio.get_running_loop().create_future()
        session.calls.pending[request_id] = answered
        return answered

    async def forget(self, session: HttpSession, request_id: str) -> None:
        session.calls.pending.pop(request_id, None)
        with self._reaching():
            async with self._redis().pipeline(transaction=False) as pipe:
                pipe.zrem(self._asks(session.id), request_id)
                pipe.delete(self._ask(session.id, request_id))
                await pipe.execute()

    async def deliver(self, session: HttpSession, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if deliver_here(session.calls, request_id, message):
            return
        if (
            type(request_id) is not str
            or not request_id.startswith(ASK_ID_PREFIX)
            or len(request_id) > MAX_ASK_ID_CHARS
        ):
            return  # no id this server sends: asked by no call
        # Taken once: a second answer to the same id finds nothing, and is dropped.
        with self._reaching():
            channel = await self._redis().getdel(self._ask(session.id, request_id))
        if channel is not None:
            await self.relay.answer(channel.decode(), session.id, message)

    async def withdraw(self, session: HttpSession, request_id: Any) -> None:
        if type(request_id) in (str, int) and not withdraw_here(session.calls, request_id):
            await self.relay.cancel(session.id, request_id)

    async def offer_stream(self, session: HttpSession, stream_id: str, seconds: float) -> None:
        channel = await self.relay.address()
        with self._reaching():
            await self._redis().set(self._resume(session.id, stream_id), channel, px=_ms(seconds))

    async def resume_elsewhere(
        self, session: HttpSession, stream_id: str, after: int, receive: Receive, send: Send
    ) -> bool:
        with self._reaching():
            owner = await self._redis().get(self._resume(session.id, stream_id))
        if owner is None:
            return False
        await self.relay.resume_elsewhere(
            owner.decode(), session.id, stream_id, after, receive, send
        )
        return True

    # -- Redis ----------------------------------------------------------------------------

    def _reaching(self) -> contextlib.AbstractContextManager[None]:
        """Around each use of Redis: when it does not answer (down, unreachable, out of
        memory, loading, out of connections), ``PartDown`` naming the session store, the
        outage logged once; when it answers, an outage in progress ends."""
        return outages.reaching(SESSION_STORE, self._unreachable)

    def _record(self, session: HttpSession) -> str:
        return _record_key(self.prefix, session.id, session.principal_key)

    def _stream(self, session_id: str) -> str:
        return self.prefix + "stream:" + session_id

    def _resume(self, session_id: str, stream_id: str) -> str:
        return self.prefix + "resume:" + session_id + ":" + stream_id

    def _asks(self, session_id: str) -> str:
        return self.prefix + "asks:" + session_id

    def _ask(self, session_id: str, request_id: str) -> str:
        return self.prefix + "ask:" + session_id + ":" + request_id

    async def _find(
        self, record: str, session_id: str, bounds: SessionBounds
    ) -> tuple[bytes, bytes, float] | None:
        """A lookup that records the session's use (unless another worker recorded it
        within the grain, ``_use_grain``): its holder, its state and when its use was
        last recorded (``time.monotonic``), or None."""
        every, idle, held, grain = self._find_parts(bounds.idle_seconds)
        answer = await self._run("find", [record, every], [idle, session_id, held, grain])
        if answer is None:
            return None
        return answer[0], answer[1], time.monotonic() - answer[2] / 1000

    async def _read(self, record: str) -> tuple[bytes, bytes, None] | None:
        """A lookup that only reads: the session's holder and state, or None."""
        line = self._line_of_loop
        if line is None or not self._eviction_checked:
            line = await self._first_contact()
        holder, state = await line.command(_READ_HEAD + encode_parts(record) + _READ_FIELDS)
        return None if state is None else (holder, state, None)

    def _find_parts(self, idle_seconds: float) -> _LookupParts:
        """The lookup's parts that are the same for every session (the set of all, the idle
        time, the holders' prefix, the use grain), encoded once."""
        parts = self._find_parts_of.get(idle_seconds)
        if parts is None:
            idle = _ms(idle_seconds)
            parts = _LookupParts(
                *map(encoded, (self._all, idle, self._held_prefix, _use_grain(idle)))
            )
            self._find_parts_of[idle_seconds] = parts
        return parts

    def _redis(self) -> Any:
        """The client of the running loop: redis-py's connections belong to the loop that
        made them. Its pool holds at most ``connections``; a command finding them all busy
        waits up to ``wait_seconds`` for one, then fails as Redis unreachable would
        (``PartDown``: 503 naming the store)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            from redis.asyncio import BlockingConnectionPool, Redis

            # Bounded, and waiting for a connection when all are busy: redis-py's default
            # pool raised at its 100th (a thousand streams closing together, 2026-12-06).
            pool = BlockingConnectionPool.from_url(
                self.url,
                max_connections=self._connections,
                timeout=self._wait_seconds,
                **self._options,
            )
            self._client = Redis(connection_pool=pool)
            self._loop = loop
            # The scripts' own connection, on the same parameters (``redis_line``).
            self._line_of_loop = RedisLine(pool.make_connection())
        return self._client

    async def _run(self, script: str, keys: list[str | bytes], args: list[Any]) -> Any:
        """Run one of the scripts on the lean line (``redis_line``: by digest, sent whole
        where Redis forgot it; the calls of one turn of the loop in one write): its answer,
        or the error Redis answered it with, raised. At this store's first contact with a
        Redis, the log says whether that Redis may evict keys on its own."""
        line = self._line_of_loop  # it follows the running loop itself
        if line is None or not self._eviction_checked:
            line = await self._first_contact()
        return await line.script(SCRIPTS[script], keys, args)

    async def _first_contact(self) -> RedisLine:
        """The lean line, made with redis-py's client, once this Redis was asked whether
        it may evict (``_warn_if_evicting``)."""
        await self._warn_if_evicting(self._redis())
        line = self._line_of_loop
        assert line is not None  # made by _redis()
        return line

    async def _warn_if_evicting(self, client: Any) -> None:
        """A Redis with a memory limit and an eviction policy could drop a live session's
        record, ending it with no one told: the bounds must be this store's. Checked once
        Redis answers, logged (the host's to fix); a Redis that refuses ``CONFIG`` (a
        managed one) is not asked again."""
        from redis.exceptions import ResponseError

        try:
            limit = await client.config_get("maxmemory")
            policy = await client.config_get("maxmemory-policy")
        except ResponseError:  # CONFIG disabled or renamed: nothing to learn
            self._eviction_checked = True
            logger.debug("the session store's Redis refused CONFIG GET; its eviction is unchecked")
            return
        self._eviction_checked = True
        name = _text(policy.get("maxmemory-policy"))
        if _text(limit.get("maxmemory")) not in ("", "0") and name != "noeviction":
            logger.warning(
                "the Redis of SESSION_CACHE has maxmemory-policy %s with a memory limit: it "
                "may evict live sessions on its own, ending them silently; set "
                "maxmemory-policy noeviction",
                name,
            )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


class _Seen:
    """What this process keeps of a session it serves: the state its last request here
    carried, as sent and as parsed (``b""`` and None when over ``PARSED_STATE_BYTES``), when
    this process last recorded its use (``time.monotonic``) and its grain in seconds."""

    __slots__ = ("grain", "recorded", "state", "text")

    def __init__(
        self, text: bytes, state: LegacySession | None, recorded: float, grain: float
    ) -> None:
        self.text, self.state, self.recorded, self.grain = text, state, recorded, grain


class _LookupParts(NamedTuple):
    every: Encoded
    idle: Encoded
    held: Encoded
    grain: Encoded


# The read a request's lookup makes within the grain: HMGET <record> holder state.
_READ_HEAD = b"*4\r\n" + encode_parts(b"HMGET")
_READ_FIELDS = encode_parts(b"holder", b"state")


def _record_key(prefix: str, session_id: str, principal: str) -> str:
    """The key of a session's record: its id and its principal's key, the id's length
    first so that no other id and principal name the same key."""
    return f"{prefix}s:{len(session_id)}:{session_id}{principal}"


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _use_grain(idle_ms: int) -> int:
    """Within this many milliseconds of its last recorded use, a session's use is not
    recorded again (the module's docstring)."""
    return min(1000, idle_ms // 10)
