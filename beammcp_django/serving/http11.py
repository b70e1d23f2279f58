"""uvicorn's httptools protocol with the request head bounded in bytes, fields and time.

httptools buffers a header field inside the parser until the field ends, so a bound checked
in the parser's callbacks comes after the memory is spent (four 64 MiB headers took a worker
from 90 to 348 MiB). This protocol counts the bytes it feeds the parser while a head is
incomplete, and feeds no more than ``HEADER_MAX_BYTES``: a head that has not ended by then is
refused with 431, as is one with more than ``HEADER_MAX_COUNT`` fields. A head must also be
complete within ``HEADER_TIMEOUT_SECONDS`` of the connection opening or of its first byte,
else 408: uvicorn itself waits forever for a silent or dripping client (its keep-alive timer
covers only the idle time between requests). Every refusal closes the connection.

A request target in absolute form (``POST http://evil.example/mcp``) names its own
authority, and RFC 9112 §3.2.2 has the server use it instead of the ``Host`` header; httptools
keeps only the path, so a check of ``Host`` alone would pass such a request on the header's
word. Here the target's authority replaces every ``Host`` header before the application runs,
and the allowed-host checks (the MCP endpoint's and Django's) see what the request names.

A response goes out in one write: uvicorn writes a response's head and its body apart, and
each write to a TCP socket is a system call that runs the kernel's send path (on loopback,
the receiving side's too); here a connection's writes of one turn of the event loop go out
together when the turn's callbacks have run (``_WritesAtTurnEnd``).

Subclassing reaches into uvicorn's protocol; ``setup.cfg`` pins uvicorn to the minor version
whose internals this was written against, and the serving tests run it for real.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from typing import Any, NamedTuple

import httptools
from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from beammcp_django.conf import DEFAULTS, get_settings
from beammcp_django.serving.access_log import AccessLines, access_lines


class HeadLimits(NamedTuple):
    max_bytes: int
    max_count: int
    timeout: float


@lru_cache(maxsize=1)
def head_limits() -> HeadLimits:
    """The limits from ``settings.BEAMMCP``, read once per worker: uvicorn builds a protocol
    per connection, and its workers are separate processes that each import the settings.
    Serving an application that is not a Django project (the benchmark's SDK peer, run under
    this same parser), the documented defaults."""
    values = get_settings() if settings.configured else DEFAULTS
    return HeadLimits(
        values["HEADER_MAX_BYTES"], values["HEADER_MAX_COUNT"], values["HEADER_TIMEOUT_SECONDS"]
    )


class HeadRefused(Exception):
    """Raised from a parser callback to stop parsing a head that broke a bound."""


STATUS_TEXT = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` whose request heads are bounded (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = head_limits()
        self.head_bytes = 0
        self.in_head = True
        self.head_started = False
        self.head_deadline: asyncio.TimerHandle | None = None
        self.refusal: tuple[int, str] | None = None
        if self.access_log:  # uvicorn's access line, at a fraction of its cost (access_log.py)
            self.access_logger = access_lines(self.loop) or self.access_logger  # type: ignore[assignment]

    # -- the clock -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _WritesAtTurnEnd(transport, self.loop)  # type: ignore[assignment]
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_deadline()
        super().connection_lost(exc)
        if type(self.access_logger) is AccessLines:
            # A closing connection's lines go out now: a server shutting down closes every
            # connection, and then ends by its signal, with no exit hook run after it.
            self.access_logger.flush()

    def _arm_head_deadline(self) -> None:
        if self.head_deadline is None:
            self.head_deadline = self.loop.call_later(self.limits.timeout, self._head_timed_out)

    def _disarm_head_deadline(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None

    def _head_timed_out(self) -> None:
        self.head_deadline = None
        if self.in_head and not self.transport.is_closing():
            seconds = f"{self.limits.timeout:g}"
            self.refuse(408, f"the request head did not arrive within {seconds} s")

    # -- the size --------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.in_head:
            self._feed_head(data)
        else:
            super().data_received(data)
        # A head begun and not ended within this read gets its clock now: a whole head in
        # one read (nearly every request) costs no timer.
        if self.head_started and self.head_deadline is None and not self.transport.is_closing():
            self._arm_head_deadline()

    def _feed_head(self, data: bytes) -> None:
        room = self.limits.max_bytes - self.head_bytes
        if len(data) <= room:
            self.head_bytes += len(data)
            super().data_received(data)
            return
        # Feed what fits; the rest only if the head ended within it (the rest is then body,
        # or the next request, whose head is counted afresh).
        self.head_bytes += room
        super().data_received(data[:room])
        if self.transport.is_closing():
            return
        if self.in_head:
            limit = self.limits.max_bytes
            self.refuse(431, f"the request head is longer than {limit} bytes")
            return
        super().data_received(data[room:])

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.head_started = True

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # The next bytes on a kept-alive connection start the next head: count them from
        # here, or every request after a connection's first would be fed to the parser
        # unbounded (nginx's upstream keep-alive sends all but the first that way).
        self.in_head = True
        self.head_bytes = 0

    def on_headers_complete(self) -> None:
        self.in_head = self.head_started = False
        self.head_bytes = 0
        self._disarm_head_deadline()
        # Counted here, not per field: the byte bound has already capped what was parsed.
        if len(self.headers) > self.limits.max_count:
            self.refusal = (431, f"the request has more than {self.limits.max_count} header fields")
            raise HeadRefused
        if self.url[:1] not in (b"/", b"*"):
            self._take_authority_from_target()
        super().on_headers_complete()

    def _take_authority_from_target(self) -> None:
        """RFC 9112 §3.2.2: an absolute-form target's authority stands in for ``Host``."""
        try:
            target = httptools.parse_url(self.url)
        except httptools.HttpParserInvalidURLError:
            self.refusal = (400, "the request target is not a valid URL")
            raise HeadRefused from None
        if not target.host:
            self.refusal = (400, "the request target names no host")
            raise HeadRefused
        authority = target.host if target.port is None else b"%s:%d" % (target.host, target.port)
        self.headers[:] = [(name, value) for name, value in self.headers if name != b"host"]
        self.headers.append((b"host", authority))
        self.url = (target.path or b"/") + (b"?" + target.query if target.query else b"")

    # -- refusing --------------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """uvicorn answers every parser error here, a callback's ``HeadRefused`` included.

        Bytes that do not parse after a request still being answered (a body longer than its
        ``Content-Length``, a GET with a body) end the connection after that answer: uvicorn
        would write its 400 at once, ahead of the answer or inside it."""
        if self.refusal is None and not self._answering():
            super().send_400_response(msg)
        else:
            self.refuse(*(self.refusal or (400, msg)))

    def _answering(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def refuse(self, status: int, reason: str) -> None:
        """Answer ``status`` naming ``reason`` and close: the rest of the stream is unread.

        Behind a response still being written the refusal is the connection's end alone,
        once that response is complete: a status line written now would land inside it."""
        self._disarm_head_deadline()
        self.in_head = False
        if self._answering():
            self.cycle.keep_alive = False
            self.flow.pause_reading()
            return
        body = reason.encode("ascii")
        phrase = STATUS_TEXT.get(status, b"Bad Request")
        head = [b"HTTP/1.1 %d %s\r\n" % (status, phrase)]
        head.extend(b"%s: %s\r\n" % pair for pair in self.server_state.default_headers)
        head.append(
            b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n" % len(body)
        )
        self.transport.write(b"".join(head) + body)
        self.transport.close()


# Bytes held for the end of a turn past which they are sent at once (``_WritesAtTurnEnd``).
SEND_AT_ONCE = 65_536


class _WritesAtTurnEnd:
    """A connection's transport whose writes within one turn of the event loop are sent as
    one, when the turn's callbacks have run: a response's head and body in one system call,
    and the responses of every connection the turn served sent together after it, not one
    by one between its callbacks (holding a head only until its body, and writing both at
    once, gained nothing at 32 connections; this gains about a quarter: docs/performance.md).
    Closing sends what is pending first; a connection the peer ended is sent nothing more.
    Past ``SEND_AT_ONCE`` bytes pending (a large body sent in chunks within one turn) they
    go at once, so the transport's own flow control (uvicorn pausing the application while
    its buffer is full) acts as before. What uvicorn's protocol asks of a transport besides
    writing is passed through."""

    __slots__ = ("_loop", "_pending", "_size", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        if type(data) is not bytes:  # held past the call: a caller's buffer may change
            data = bytes(data)
        if not self._pending:
            self._loop.call_soon(self._send)
        self._pending.append(data)
        self._size += len(data)
        if self._size >= SEND_AT_ONCE:
            self._send()

    def _send(self) -> None:
        pending = self._pending
        if pending:
            if not self._transport.is_closing():
                self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
            pending.clear()
            self._size = 0

    def close(self) -> None:
        self._send()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._send()
        self._transport.set_protocol(protocol)
