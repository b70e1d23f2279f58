"""One lean connection to the sessions' Redis, for the session store's scripts and its lookup.

Why not redis-py for these: every request in a session looks its session up (a plain
``HMGET``, or the lookup script ``EVALSHA`` once per grain), and redis-py's asyncio client
spent about 90 µs of CPU on each here against about 20 through a bare socket (2026-12-07,
5,000 calls in one process): its pool, its locks, its reply parser in Python. This line
speaks only what those need: RESP2 commands written as they come and replies matched to
them in order, on one connection per event loop that every request shares (Redis answers
one command at a time whatever the connections, so pipelining on one loses nothing). It
connects with the parameters redis-py made of the same URL and ``OPTIONS`` (the host or
socket, the database, the credentials, TLS, the timeouts), so the host names its Redis once;
redis-py keeps every other command.

What Redis answers when it cannot serve (loading, out of memory, a read-only replica,
refused credentials), a connection lost and a reply late past ``socket_timeout`` are
``RedisUnavailable``, a ``ConnectionError``: the store's outage handling (``PartDown``, 503)
takes them as it takes redis-py's. Any other error reply is that call's ``RedisReplyError``,
its neighbours in the same write unaffected.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import Sequence
from typing import Any

# Error replies that say Redis cannot serve now, not that the command was wrong.
_UNAVAILABLE = (b"LOADING", b"OOM", b"READONLY", b"MASTERDOWN", b"NOAUTH", b"WRONGPASS")
_NO_SCRIPT = b"NOSCRIPT"
# What ``read_reply`` answers while a reply's bytes have not all arrived.
_MORE: Any = object()


class RedisReplyError(Exception):
    """Redis refused one command (its error reply, as Redis words it)."""

    def __init__(self, words: bytes) -> None:
        self.words = words
        super().__init__(words.decode(errors="replace")[:200])


class RedisUnavailable(ConnectionError):
    """Redis cannot serve: gone, unreachable, late, loading, full, or refusing us."""


class Encoded(bytes):
    """One bulk string as RESP2 sends it (``encoded``): a part a caller sends with every
    command, encoded once."""


def encoded(part: str | bytes | int) -> Encoded:
    """``part`` encoded once, for the commands that all send it."""
    return Encoded(encode_parts(part))


def encode_command(*parts: str | bytes | int) -> bytes:
    """One command as RESP2 sends it: an array of bulk strings."""
    return b"*%d\r\n" % len(parts) + encode_parts(*parts)


def encode_parts(*parts: str | bytes | int) -> bytes:
    """Bulk strings, one after the other (an ``Encoded`` one as it is)."""
    out = []
    for part in parts:
        if type(part) is Encoded:
            out.append(part)
            continue
        raw = part if isinstance(part, bytes) else str(part).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(raw), raw))
    return b"".join(out)


def read_reply(buffer: bytearray, start: int) -> tuple[Any, int]:
    """The reply that begins at ``start`` and where it ends; ``(_MORE, start)`` while its
    bytes are not all in ``buffer``. An error reply is a ``RedisReplyError`` value (or a
    ``RedisUnavailable`` one), not raised: it is one command's answer."""
    end = buffer.find(b"\r\n", start)
    if end < 0:
        return _MORE, start
    kind, line, after = buffer[start], bytes(buffer[start + 1 : end]), end + 2
    if kind == 0x24:  # $ a bulk string, or nil
        size = int(line)
        if size < 0:
            return None, after
        if len(buffer) < after + size + 2:
            return _MORE, start
        return bytes(buffer[after : after + size]), after + size + 2
    if kind == 0x2A:  # * an array, or nil
        count = int(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = read_reply(buffer, after)
            if item is _MORE:
                return _MORE, start
            items.append(item)
        return items, after
    if kind == 0x3A:  # : an integer
        return int(line), after
    if kind == 0x2B:  # + a simple string
        return line, after
    if kind == 0x2D:  # - an error
        if line.startswith(_UNAVAILABLE):
            words = line[:120].decode(errors="replace")
            return RedisUnavailable(f"Redis cannot serve: {words}"), after
        return RedisReplyError(line), after
    raise RedisUnavailable(f"Redis sent a reply RESP2 does not have (kind {kind:#x})")


class _Wire(asyncio.Protocol):
    """The connection itself. The commands of one turn of the event loop go out in one write
    (under load, one system call for many requests: a write each cost about 20 µs here);
    each reply goes to the call waiting first. One timer watches the oldest call: a reply
    later than ``timeout`` ends the line."""

    def __init__(self, timeout: float | None) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.buffer = bytearray()
        self.outgoing: list[bytes] = []
        self.watching = False
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        start = 0
        try:
            while self.waiting:
                reply, start = read_reply(buffer, start)
                if reply is _MORE:
                    break
                answered, _ = self.waiting.popleft()
                if not answered.done():
                    answered.set_result(reply)
        except (ValueError, RedisUnavailable):  # bytes that are no reply: the line is lost
            self.end(RedisUnavailable("Redis sent bytes that are not a RESP2 reply"))
            return
        del buffer[:start]

    def connection_lost(self, exc: Exception | None) -> None:
        self.end(RedisUnavailable("the connection to Redis was lost"))

    def call(self, command: bytes) -> asyncio.Future[Any]:
        """The reply to ``command`` (an error reply as a value, not raised)."""
        answered = self.loop.create_future()
        if self.lost:
            answered.set_result(RedisUnavailable("the connection to Redis was lost"))
            return answered
        if not self.outgoing:
            self.loop.call_soon(self._flush)
        self.outgoing.append(command)
        if self.timeout:
            self.waiting.append((answered, self.loop.time() + self.timeout))
            if not self.watching:
                self.watching = True
                self.loop.call_later(self.timeout, self._watch)
        else:
            self.waiting.append((answered, 0.0))
        return answered

    def _flush(self) -> None:
        if not self.lost:
            self.transport.write(b"".join(self.outgoing))  # type: ignore[union-attr]
        self.outgoing.clear()

    def _watch(self) -> None:
        self.watching = False
        if not self.waiting or self.lost:
            return
        due = self.waiting[0][1] - self.loop.time()
        if due <= 0:
            self.end(RedisUnavailable(f"Redis did not answer within {self.timeout} s"))
            return
        self.watching = True
        self.loop.call_later(due, self._watch)

    def end(self, why: RedisUnavailable) -> None:
        """No reply will come: every waiting call is told why, and the line is dropped."""
        self.lost = True
        while self.waiting:
            answered, _ = self.waiting.popleft()
            if not answered.done():
                answered.set_result(why)
        if self.transport is not None:
            self.transport.close()


class RedisLine:
    """Scripts, and the reads that need none, on Redis through one pipelined connection of
    the running event loop."""

    def __init__(self, connection: Any) -> None:
        """``connection``: a redis-py asyncio connection, never connected, made by the pool
        the store uses: its parameters are this line's."""
        self._connection = connection
        self._wire: _Wire | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Future[_Wire] | None = None
        # Each script's EVALSHA with its digest and key count, encoded once.
        self._heads: dict[tuple[str, int], tuple[bytes, int]] = {}

    async def script(self, script: str, keys: Sequence[str | bytes], args: Sequence[Any]) -> Any:
        """Run ``script`` on ``keys`` and ``args``: its reply, or its error reply raised
        (``RedisReplyError``; ``RedisUnavailable`` when Redis cannot serve). A script Redis
        does not hold (first use, a restart, ``SCRIPT FLUSH``) is sent whole."""
        head = self._heads.get((script, len(keys)))
        if head is None:
            digest = hashlib.sha1(script.encode()).hexdigest()
            prefix = encode_parts(b"EVALSHA", digest, len(keys))
            head = self._heads[script, len(keys)] = (prefix, 3 + len(keys))
        wire = self._connected() or await self._connect()
        prefix, parts = head
        reply = await wire.call(
            b"*%d\r\n" % (parts + len(args)) + prefix + encode_parts(*keys, *args)
        )
        if isinstance(reply, RedisReplyError) and reply.words.startswith(_NO_SCRIPT):
            reply = await wire.call(encode_command(b"EVAL", script, len(keys), *keys, *args))
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def command(self, command: bytes) -> Any:
        """The reply to ``command``, one already encoded (``encode_command``), or its error
        reply raised as ``script`` raises it: for the reads that need no script."""
        wire = self._connected() or await self._connect()
        reply = await wire.call(command)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _connected(self) -> _Wire | None:
        """The running loop's connection, if it has one that is not lost."""
        wire = self._wire
        if wire is None or wire.lost or self._loop is not asyncio.get_running_loop():
            return None
        return wire

    async def _connect(self) -> _Wire:
        """This loop's connection. One attempt at a time, shared by every call that waits
        for it, its failure theirs too: while Redis is unreachable a hundred waiting calls
        fail together after one ``socket_connect_timeout``, not one after the other."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._wire, self._connecting = loop, None, None
        if self._wire is not None and not self._wire.lost:
            return self._wire
        if self._connecting is None:
            attempt = loop.create_task(self._ready(loop))
            self._connecting = attempt
            attempt.add_done_callback(self._attempted)
        return await asyncio.shield(self._connecting)

    def _attempted(self, attempt: asyncio.Future[_Wire]) -> None:
        if self._connecting is attempt:
            self._connecting = None
        if not attempt.cancelled() and attempt.exception() is None:
            self._wire = attempt.result()

    async def _ready(self, loop: asyncio.AbstractEventLoop) -> _Wire:
        """A new connection, set up as redis-py sets its own up (credentials, database),
        within ``socket_connect_timeout``; closed again if that fails or runs out."""
        timeout = self._connection.socket_connect_timeout
        async with asyncio.timeout(timeout):
            wire = await self._open(loop)
            try:
                answers = await asyncio.gather(*(wire.call(command) for command in self._hello()))
            except BaseException:
                wire.end(RedisUnavailable("the connection's set-up did not finish"))
                raise
        refused = [answer for answer in answers if isinstance(answer, Exception)]
        if refused:
            wire.end(RedisUnavailable("refused"))
            raise RedisUnavailable(f"Redis refused this connection's set-up: {refused[0]}")
        return wire

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Wire:
        connection = self._connection

        def made() -> _Wire:
            return _Wire(connection.socket_timeout)

        path = getattr(connection, "path", None)
        if path is not None:
            _, wire = await loop.create_unix_connection(made, path)
            return wire
        context = getattr(connection, "ssl_context", None)
        ssl = None if context is None else context.get()
        _, wire = await loop.create_connection(made, connection.host, connection.port, ssl=ssl)
        return wire

    def _hello(self) -> list[bytes]:
        connection, commands = self._connection, []
        provider = connection.credential_provider
        if provider is not None:
            commands.append(encode_command(b"AUTH", *provider.get_credentials()))
        elif connection.password:
            named = (connection.username,) if connection.username else ()
            commands.append(encode_command(b"AUTH", *named, connection.password))
        if connection.db:
            commands.append(encode_command(b"SELECT", connection.db))
        return commands
