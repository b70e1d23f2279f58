"""Streamable HTTP for 2026-07-28: one POST, one JSON-RPC message, one reply.

This ASGI application sees the request before anything reads its body, so it can refuse by
the headers alone (method, Host, Origin, the host's ``authorize`` hook, declared size,
chunked framing) without reading a byte, and then read the body under one size cap and one
deadline. The decoded message goes to the protocol core; the HTTP headers that must mirror
the body are held against what the core decoded, before any host code runs.

A browser on an allowed origin (``BEAMMCP["ALLOWED_ORIGINS"]``) preflights every call (the
body is ``application/json`` and the MCP headers are not CORS-safelisted): ``OPTIONS`` is
answered here, after the Host and Origin checks and without the authorize hook, and every
later answer to that origin carries ``Access-Control-Allow-Origin``. A request without
``Origin`` (every non-browser client) gets no CORS header, at the cost of a comparison.

A request answers ``application/json``, or ``text/event-stream`` once the call emits a
notification (progress, or a log at the level the request asked for): the notifications as
they happen, then the response. A client that disconnects cancels the call (noticed once the
call has run WATCH_AFTER_SECONDS; a call that answers sooner simply finishes).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import inspect
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.authorization import HttpRequestInfo, Refusal
from beammcp_django.protocol import jsonrpc, notifications, revisions, wire
from beammcp_django.protocol.context import CancelFlag
from beammcp_django.protocol.errors import (
    HEADER_MISMATCH,
    HOST_FAULTS,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    ProtocolError,
)
from beammcp_django.protocol.request import Request, Unanswered
from beammcp_django.protocol.server import Server
from beammcp_django.protocol.subscriptions import subscription_notification
from beammcp_django.transports import Deadline, from_any_thread

logger = logging.getLogger("beammcp_django.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# JSON-RPC error code -> HTTP status (streamable-http.mdx §Server Validation, and the codes
# the spec leaves open answered as the official SDK does); anything else is 200.
STATUS_OF_ERROR = {
    -32700: 400,
    -32600: 400,
    -32602: 400,
    -32020: 400,
    -32021: 400,
    -32022: 400,
    -32601: 404,
    -32603: 500,
}
KEEPALIVE_SECONDS = 15.0
# How late a disconnect may be noticed (and the call cancelled): a call answered sooner never
# starts the task that watches for it.
WATCH_AFTER_SECONDS = 0.05
_SENTINEL_OPEN = "=?base64?"
_SENTINEL_SIZE = len(_SENTINEL_OPEN) + 2  # and "?=" after the payload
_JSON = [(b"content-type", b"application/json")]
_CLOSE = (b"connection", b"close")
# The scope key under which a request's observation (spans, the access log) travels.
OBSERVATION_KEY = "beammcp.observation"
_ALLOW = (b"allow", b"POST, OPTIONS")

# CORS. The methods a preflight may ask for: what the endpoint serves.
CORS_METHODS = ("POST",)
# The request headers an MCP client sends that are not CORS-safelisted (streamable-http.mdx
# §Sending Messages, §Request Metadata; authorization's bearer token), as spelled on the wire.
# Mcp-Param-{Name} headers are allowed by prefix (``CORS_PARAM_PREFIX``). Legacy sessions
# will add Mcp-Session-Id and Last-Event-ID here.
CORS_REQUEST_HEADERS = (
    "Content-Type",
    "Accept",
    "Authorization",
    "MCP-Protocol-Version",
    "Mcp-Method",
    "Mcp-Name",
)
CORS_PARAM_PREFIX = "mcp-param-"
# The response headers a client must read that are not CORS-safelisted: the 401 challenge
# (authorization-server-discovery.mdx: clients MUST parse WWW-Authenticate and follow its
# resource_metadata). Content-Type and Content-Length are safelisted; Allow and Accept-Post
# only explain a refusal no correct client meets. Legacy sessions will add Mcp-Session-Id.
CORS_EXPOSED_HEADERS = ("WWW-Authenticate",)
# How long a browser may reuse a preflight: Chromium's own cap (7,200 s). Safe to be long:
# the Origin is checked again on every request, so an origin removed from the settings is
# refused (403) whatever a browser cached.
PREFLIGHT_MAX_AGE_SECONDS = 7200
_CORS_NAMES = frozenset(name.lower() for name in CORS_REQUEST_HEADERS)
_CORS_ALLOWED = ", ".join(CORS_REQUEST_HEADERS)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9a-z]+")  # RFC 9110 tchar, names lower-cased
_CORS_ON_RESPONSES = [
    (b"access-control-expose-headers", ", ".join(CORS_EXPOSED_HEADERS).encode("ascii")),
    (b"vary", b"Origin"),
]
_CORS_ON_PREFLIGHTS = [
    (b"access-control-allow-methods", ", ".join(CORS_METHODS).encode("ascii")),
    (b"access-control-max-age", str(PREFLIGHT_MAX_AGE_SECONDS).encode("ascii")),
    (b"vary", b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
]


class Headers:
    """Request headers by lower-case name, every value kept: a repeat is never dropped."""

    __slots__ = ("_values",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[str, list[str]] = {}
        for name, value in raw:
            values.setdefault(name.decode("latin-1").lower(), []).append(
                value.decode("latin-1").strip(" \t")
            )
        self._values = values

    def all(self, name: str) -> list[str]:
        return self._values.get(name, [])

    def one(self, name: str) -> str | None:
        """The value when present once, or repeated identically; ``Disagreement`` otherwise."""
        values = self._values.get(name)
        if not values:
            return None
        first = values[0]
        for value in values[1:]:
            if value != first:
                raise Disagreement(name)
        return first

    def as_mapping(self) -> dict[str, tuple[str, ...]]:
        return {name: tuple(values) for name, values in self._values.items()}


class Disagreement(Exception):
    """A header appears more than once with different values."""

    def __init__(self, name: str) -> None:
        self.name = name


def _sentinel_payload(value: str) -> str | None:
    """The payload of a value in the ``=?base64?...?=`` form, whatever it holds, or None."""
    if len(value) >= _SENTINEL_SIZE and value.startswith(_SENTINEL_OPEN) and value.endswith("?="):
        return value[len(_SENTINEL_OPEN) : -2]
    return None


def decode_header_value(value: str) -> str | None:
    """Undo the ``=?base64?...?=`` sentinel (streamable-http.mdx §Value Encoding).

    Every value in that form is a sentinel (a client must encode a plain value that looks
    like one), so its payload must be base64 of UTF-8, and canonical: the one encoding of its
    bytes (``QR==`` and ``QQ==`` both decode to ``A``; only the second is accepted), so a
    value has one spelling and a proxy's rule on it cannot be walked around. None when it is
    not, or when a plain value holds characters a header must not carry
    (``undecodable_reason`` says which).
    """
    payload = _sentinel_payload(value)
    if payload is None:
        if value.isascii() and value.isprintable():  # 0x20-0x7E only: the usual value
            return value
        if any((ord(char) < 0x20 and char != "\t") or ord(char) > 0x7E for char in value):
            return None
        return value
    try:
        raw = base64.b64decode(payload, validate=True)
        if base64.b64encode(raw).decode("ascii") != payload:
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def undecodable_reason(value: str) -> str:
    """Why ``decode_header_value`` refused ``value``, in words for a -32020 message."""
    if _sentinel_payload(value) is not None:
        return "is a =?base64?...?= value whose payload is not canonical base64 of UTF-8"
    return "holds characters a header value must not carry"


class ServedHosts:
    """Host header values already validated as allowed, at most ``LIMIT`` of them: the caller
    chooses the header (a wildcard like ``.example.com`` admits endless names), so the memo
    forgets everything when full rather than grow."""

    LIMIT = 64

    def __init__(self) -> None:
        self._hosts: set[str] = set()

    def __contains__(self, host: str) -> bool:
        return host in self._hosts

    def __len__(self) -> int:
        return len(self._hosts)

    def remember(self, host: str) -> None:
        if len(self._hosts) >= self.LIMIT:
            self._hosts.clear()
        self._hosts.add(host)


@dataclass(frozen=True)
class HttpPolicy:
    """The endpoint's settings, read once per server build."""

    allowed_origins: frozenset[str] | None  # None: any origin, written out as "any"
    # Whether a Host value (as sent, port included) names this server: the Django layer's
    # rule (ALLOWED_HOSTS, as HttpRequest.get_host() applies it).
    serves_host: Callable[[str], bool]
    use_forwarded_host: bool
    authorize: Callable[[HttpRequestInfo], Any]
    body_timeout: float
    authorize_body: Callable[[HttpRequestInfo, bytes], Any] | None = None
    subscription_max_seconds: float = 3600.0
    subscription_queue_limit: int = 64
    subscription_reauthorize_seconds: float = 60.0
    max_body: int = wire.MAX_MESSAGE_BYTES
    # The channel layer and group that carry change announcements to listen streams (the
    # Django layer's Channels layer); None: subscriptions/listen is not carried.
    subscription_channel: Callable[[], tuple[Any, str]] | None = None
    # Host header values already found allowed: Django's check costs ~20 µs a request here.
    served_hosts: ServedHosts = field(default_factory=ServedHosts, compare=False)


# How listen streams ended, per process: for the operator, and for tests that prove the bounds.
STREAM_ENDINGS = {"overflow": 0, "lifetime": 0, "unauthorized": 0}


class _Refused(Exception):
    """An HTTP-level refusal, answered before or instead of the core."""

    def __init__(
        self,
        status: int,
        message: str | None,
        *,
        close: bool,
        code: int = INVALID_REQUEST,
        extra: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.close = close
        self.code = code
        self.extra = extra or []


class _ClientGone(Exception):
    pass


def _error_body(request_id: jsonrpc.RequestId | None, code: int, message: str) -> bytes:
    return wire.encode(jsonrpc.error(request_id, code, message))


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode("ascii"))],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _with_cors(send: Send, origin: str) -> Send:
    """``send`` adding, to the response start, what lets a page on ``origin`` read the answer:
    JSON, an SSE stream and every refusal alike. Never ``Access-Control-Allow-Credentials``:
    a cross-origin page's cookies never authorize a call (a bearer token in Authorization
    does), so "any" can echo every origin without letting one site act with another's
    cookies."""
    added = [(b"access-control-allow-origin", origin.encode("latin-1")), *_CORS_ON_RESPONSES]

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message["headers"], *added]
        await send(message)

    return send_with_cors


def _preflight_headers(requested: list[str]) -> bytes | None:
    """The ``Access-Control-Allow-Headers`` value for a preflight's requested header names:
    every name of ``CORS_REQUEST_HEADERS``, then the requested Mcp-Param-{Name} names (a
    preflight lists concrete names, so they are echoed once validated); None when a requested
    name is neither."""
    params: dict[str, None] = {}
    for value in requested:
        for item in value.split(","):
            name = item.strip(" \t").lower()
            if not name or name in _CORS_NAMES:
                continue
            if (
                name.startswith(CORS_PARAM_PREFIX)
                and len(name) > len(CORS_PARAM_PREFIX)
                and _TOKEN.fullmatch(name)
            ):
                params[name] = None
                continue
            return None
    return ", ".join([_CORS_ALLOWED, *params]).encode("latin-1")


# Hooks come from settings only, so the cache holds a handful: asked once, not per request.
_is_coroutine_function = functools.lru_cache(maxsize=16)(inspect.iscoroutinefunction)


class McpEndpoint:
    """The ASGI application of the MCP endpoint."""

    def __init__(
        self,
        server: Callable[[], Server],
        policy: Callable[[], HttpPolicy],
        run_sync: Callable[..., Awaitable[Any]],
    ) -> None:
        self._server = server
        self._policy = policy
        self._run_sync = run_sync

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise RuntimeError("the MCP endpoint serves HTTP only")
        reply = send  # what answers: with the CORS headers once the Origin is allowed
        try:
            policy = self._policy()
            method = scope["method"]
            if method != "POST" and method != "OPTIONS":
                raise _Refused(405, None, close=True, extra=[_ALLOW])
            headers = Headers(scope["headers"])
            origin = self._check_host_and_origin(headers, policy)
            if method == "OPTIONS":
                await self._preflight(headers, origin, send)
                return
            if origin:  # an empty Origin (no browser sends one) is answered as none
                reply = _with_cors(send, origin)
            await self._serve(scope, headers, policy, receive, reply)
        except _Refused as refused:
            answer = list(_JSON) if refused.message else []
            if refused.close:
                answer.append(_CLOSE)
            answer.extend(refused.extra)
            body = _error_body(None, refused.code, refused.message) if refused.message else b""
            await _respond(reply, refused.status, body, answer)
        except _ClientGone:
            return

    # -- before the body ------------------------------------------------------------------

    def _check_host_and_origin(self, headers: Headers, policy: HttpPolicy) -> str | None:
        """The request's Origin when it is present and allowed, None when it is absent;
        a Host this server does not serve (400) or an Origin it does not allow (403) is
        refused, preflight or not."""
        try:
            self._check_host(headers, policy)
            return self._check_origin(headers, policy)
        except Disagreement as disagreement:
            raise _Refused(
                403 if disagreement.name == "origin" else 400,
                f"the {disagreement.name} header appears twice with different values",
                close=True,
            ) from None

    @staticmethod
    async def _preflight(headers: Headers, origin: str | None, send: Send) -> None:
        """Answer a CORS preflight from an allowed origin: 204 with what the actual request
        may use. The authorize hook is not asked: a browser sends no credentials on a
        preflight, and the request it clears is authorized as any other. Anything that is
        not a preflight, or asks for what the endpoint does not accept, is refused by name
        and carries no CORS header, so the browser never sends the request."""
        if not origin:
            raise _Refused(
                400, "OPTIONS is answered only as a CORS preflight: Origin is missing", close=True
            )
        try:
            method = headers.one("access-control-request-method")
        except Disagreement:
            raise _Refused(
                400,
                "Access-Control-Request-Method appears twice with different values",
                close=True,
            ) from None
        if method is None:
            raise _Refused(
                400,
                "OPTIONS is answered only as a CORS preflight: "
                "Access-Control-Request-Method is missing",
                close=True,
            )
        if method not in CORS_METHODS:
            raise _Refused(
                403,
                f"a CORS preflight may ask only for {', '.join(CORS_METHODS)}",
                close=True,
            )
        allowed = _preflight_headers(headers.all("access-control-request-headers"))
        if allowed is None:
            raise _Refused(
                403,
                "Access-Control-Request-Headers names a header this endpoint does not accept "
                f"(it accepts {_CORS_ALLOWED} and Mcp-Param-{{Name}})",
                close=True,
            )
        response = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-headers", allowed),
            *_CORS_ON_PREFLIGHTS,
        ]
        if headers.all("transfer-encoding") or any(
            value != "0" for value in headers.all("content-length")
        ):
            # No browser sends a preflight body; it is never read, so never served either.
            response.append(_CLOSE)
        # 204: no Content-Length (RFC 9110 §8.6 forbids it on a 204).
        await send({"type": "http.response.start", "status": 204, "headers": response})
        await send({"type": "http.response.body", "body": b""})

    async def _serve(
        self, scope: Scope, headers: Headers, policy: HttpPolicy, receive: Receive, send: Send
    ) -> None:
        self._check_content_type(headers)
        info = self._request_info(scope, headers)
        await self._authorize(policy.authorize, info, before_body=True)
        length = self._declared_length(headers, policy)
        # Asked once and passed on: in Python 3.11 each lookup of the running loop makes a
        # getpid() system call (its fork check).
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("the MCP endpoint runs in an asyncio task")
        body = await self._read_body(receive, policy, length, task)
        if policy.authorize_body is not None:
            # The exact bytes as sent, before any decoding: what a signature covers.
            await self._authorize(policy.authorize_body, info, body, before_body=False)
        try:
            message = wire.decode(body)
        except ProtocolError as refusal:
            await _respond(send, 400, _error_body(None, refusal.code, refusal.message), list(_JSON))
            return
        size = len(body)
        # Decoded, the raw bytes are dropped: a request in flight holds one copy of its body.
        del body
        answer = self._answer(
            message, headers, receive, send, policy, lambda: self._allowed(info, policy), task, size
        )
        # Set by beammcp_django.observability.ObservedEndpoint when something observes.
        observation = scope.get(OBSERVATION_KEY)
        if observation is None:
            await answer
            return
        with observation.serving(message, headers) as served:
            served.reply = await answer

    @staticmethod
    def _check_host(headers: Headers, policy: HttpPolicy) -> None:
        # As Django's HttpRequest.get_host(): X-Forwarded-Host as sent, when trusted.
        host = headers.one("x-forwarded-host") if policy.use_forwarded_host else None
        host = host or headers.one("host") or ""
        if host in policy.served_hosts:
            return
        if not host or not policy.serves_host(host):
            raise _Refused(
                400, "the Host header names a host this server does not serve", close=True
            )
        policy.served_hosts.remember(host)

    @staticmethod
    def _check_origin(headers: Headers, policy: HttpPolicy) -> str | None:
        origin = headers.one("origin")
        if origin is None or policy.allowed_origins is None:
            return origin  # "any" allows (and the CORS headers echo) every origin
        if origin not in policy.allowed_origins:
            raise _Refused(
                403, "the Origin header names an origin this server does not allow", close=True
            )
        return origin

    @staticmethod
    def _check_content_type(headers: Headers) -> None:
        """The body must be declared JSON: a browser sends ``text/plain`` (and two other form
        types) cross-origin without a CORS preflight, so anything else is refused unread."""
        try:
            declared = headers.one("content-type")
        except Disagreement:
            raise _Refused(
                415, "Content-Type appears twice with different values", close=True
            ) from None
        media_type = (declared or "").partition(";")[0].strip(" \t").lower()
        if media_type != "application/json":
            raise _Refused(
                415,
                "the body must be sent with Content-Type: application/json",
                close=True,
                extra=[(b"accept-post", b"application/json")],
            )

    @staticmethod
    def _request_info(scope: Scope, headers: Headers) -> HttpRequestInfo:
        client = scope.get("client")
        return HttpRequestInfo(
            method=scope["method"],
            path=scope["path"],
            headers=headers.as_mapping(),
            client=tuple(client) if client else None,  # type: ignore[arg-type]
        )

    async def _verdict(self, hook: Callable[..., Any], *args: Any) -> Any:
        if _is_coroutine_function(hook):
            return await hook(*args)
        return await self._run_sync(hook, *args)

    async def _allowed(self, info: HttpRequestInfo, policy: HttpPolicy) -> bool:
        """The hook asked again (a long-lived stream re-checks); a raise counts as a no."""
        try:
            return await self._verdict(policy.authorize, info) is True
        except HOST_FAULTS:
            logger.exception("the MCP authorize hook raised while re-checking a stream")
            return False

    async def _authorize(self, hook: Callable[..., Any], *args: Any, before_body: bool) -> None:
        """Run an authorization hook; a refusal is opaque to the caller, logged here."""
        try:
            verdict = await self._verdict(hook, *args)
        except HOST_FAULTS:
            logger.exception("an MCP authorization hook raised; answering 500")
            raise _Refused(500, jsonrpc.LOGGED, close=before_body, code=INTERNAL_ERROR) from None
        if verdict is True:
            return
        refusal = verdict if isinstance(verdict, Refusal) else Refusal()
        logger.info("MCP request refused by an authorization hook: %s", refusal.reason)
        extra = []
        if refusal.status == 401 and refusal.www_authenticate:
            extra.append((b"www-authenticate", refusal.www_authenticate.encode("latin-1")))
        raise _Refused(refusal.status, None, close=before_body, extra=extra)

    @staticmethod
    def _declared_length(headers: Headers, policy: HttpPolicy) -> int | None:
        try:
            encodings = headers.all("transfer-encoding")
            if encodings:
                raise _Refused(
                    411,
                    "chunked bodies are not accepted; send Content-Length",
                    close=True,
                )
            declared = headers.one("content-length")
        except Disagreement:
            raise _Refused(
                400, "Content-Length appears twice with different values", close=True
            ) from None
        if declared is None:
            return None
        if not declared.isdigit():
            raise _Refused(400, "Content-Length is not a number", close=True)
        length = int(declared)
        if length > policy.max_body:
            raise _Refused(413, f"the body exceeds {policy.max_body} bytes", close=True)
        return length

    @staticmethod
    async def _read_body(
        receive: Receive, policy: HttpPolicy, declared: int | None, task: asyncio.Task[Any]
    ) -> bytes:
        chunks = bytearray()
        try:
            with Deadline(policy.body_timeout, task):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _ClientGone
                    chunk = message.get("body", b"")
                    if len(chunks) + len(chunk) > policy.max_body:
                        raise _Refused(413, f"the body exceeds {policy.max_body} bytes", close=True)
                    if not message.get("more_body", False):
                        if not chunks:
                            return chunk  # the whole body in one message: no copy
                        chunks += chunk
                        break
                    chunks += chunk
        except TimeoutError:
            raise _Refused(
                408, f"the body did not arrive within {policy.body_timeout:g} s", close=True
            ) from None
        return bytes(chunks)

    # -- after the body --------------------------------------------------------------------

    async def _answer(
        self,
        message: dict[str, Any],
        headers: Headers,
        receive: Receive,
        send: Send,
        policy: HttpPolicy,
        still_allowed: Callable[[], Awaitable[bool]],
        task: asyncio.Task[Any],
        size: int,
    ) -> dict[str, Any] | None:
        """The reply sent to a request; None for a notification or a stray response."""
        server = self._server()
        read = server.read(message, size=size)
        if type(read) is Unanswered:
            if read.reason == "notification":
                # 2026-07-28 defines no client notification over HTTP: a JSON-RPC 2.0 one
                # is accepted (202) and ignored, whatever its params; any other is refused,
                # without an id (streamable-http.mdx §Sending Messages).
                if read.problem is None:
                    notifications.read(message)
                    await _respond(send, 202, b"", [])
                else:
                    body = _error_body(None, INVALID_REQUEST, read.problem)
                    await _respond(send, 400, body, list(_JSON))
            else:
                body = _error_body(
                    jsonrpc.readable_id(message), INVALID_REQUEST, "clients must not send responses"
                )
                await _respond(send, 400, body, list(_JSON))
            return None
        return await _Exchange(
            server, headers, message, read, receive, send, policy, still_allowed, task
        ).run()


class _Exchange:
    """One request's reply: JSON, or an SSE stream once the call emits a notification.

    The call runs in the request's own task. Notifications are written by a task started
    when the first one is queued (and again after a quiet spell); the disconnect watcher
    starts only when the call outlives WATCH_AFTER_SECONDS. So a call that answers quickly
    and emits nothing, the usual one, costs no task beyond the request's own.
    """

    def __init__(
        self,
        server: Server,
        headers: Headers,
        message: dict[str, Any],
        read: Request | dict[str, Any],
        receive: Receive,
        send: Send,
        policy: HttpPolicy,
        still_allowed: Callable[[], Awaitable[bool]],
        task: asyncio.Task[Any],
    ) -> None:
        self.server = server
        self.read = read  # what the core read: the request, or the reply refusing it
        self.policy = policy
        self.still_allowed = still_allowed
        self.headers = headers
        self.message = message
        self.receive = receive
        self.send = send
        self.cancelled = CancelFlag()
        self.task = task
        self.loop = task.get_loop()
        self.pending: list[dict[str, Any]] = []
        self.streaming = False
        self.calling = False  # the host call is running in self.task
        self.answered = False  # the core returned the reply: nothing more is queued
        self.gone = False  # the client disconnected, or a write to it failed
        self.writer: asyncio.Task[None] | None = None  # writing queued notifications
        self.cut_off: asyncio.Task[None] | None = None  # the write abandoned by _cut_off
        self.keepalive: asyncio.TimerHandle | None = None

    async def run(self) -> dict[str, Any] | None:
        """The reply sent; None when the client left before it."""
        early = self._version_mismatch()
        if early is None:
            early = self.read if type(self.read) is dict else self._mirror_refusal(self.read)
        if early is not None:
            await self._finish(early)
            return early
        request = self.read
        assert type(request) is Request
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
            )
        except asyncio.CancelledError:
            if self.gone and self.task.uncancel() == 0:
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
            abandoned, self.cut_off = self.cut_off, None  # no cycle through its traceback
            if abandoned is not None:
                # Let the abandoned write's cancellation land: no task outlives the request.
                await asyncio.wait([abandoned])
            return None
        try:
            # Notifications queued before the reply are written before it.
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
        """Stop the call (its cancel flag for a sync handler, a cancellation for the task)."""
        if self.gone:
            return
        self.gone = True
        self.cancelled.set()
        if self.calling:
            self.task.cancel()

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
            self.streaming = True
            await self.send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
        data = b"".join(b"event: message\ndata: " + encoded + b"\n\n" for encoded in events)
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

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
        status = STATUS_OF_ERROR.get(error["code"], 200) if error else 200
        await _respond(self.send, status, encoded, list(_JSON))

    # -- subscriptions/listen ------------------------------------------------------------------

    async def listen(
        self, subscription_id: Any, honoured: Any, context: Any, acknowledge: Callable[[], None]
    ) -> None:
        """Forward published changes the stream asked for, until it must end. The stream is
        acknowledged once this worker's channel is in the group: a change published after the
        acknowledgment reaches it, whichever worker publishes.

        Ends, and the core then sends the closing result, when the stream outlives
        ``SUBSCRIPTION_MAX_SECONDS`` or when the authorize hook, asked again every
        ``SUBSCRIPTION_REAUTHORIZE_SECONDS``, no longer says yes. When more than
        ``SUBSCRIPTION_QUEUE_LIMIT`` notifications wait for a reader that stopped reading,
        the stream is cut off instead (``_cut_off``): no closing result, the connection
        closed. A client that closes the stream cancels this coroutine.
        """
        policy = self.policy
        if policy.subscription_channel is None:
            raise ProtocolError(INTERNAL_ERROR, "this endpoint carries no subscriptions")
        layer, group = policy.subscription_channel()
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        acknowledge()
        ends_at = self.loop.time() + policy.subscription_max_seconds
        recheck_at = self.loop.time() + policy.subscription_reauthorize_seconds
        try:
            while True:
                now = self.loop.time()
                if now >= ends_at:
                    STREAM_ENDINGS["lifetime"] += 1
                    return
                if now >= recheck_at:
                    if not await self.still_allowed():
                        STREAM_ENDINGS["unauthorized"] += 1
                        return
                    recheck_at = now + policy.subscription_reauthorize_seconds
                try:
                    with Deadline(min(ends_at, recheck_at) - now):
                        event = await layer.receive(channel)
                except TimeoutError:
                    continue
                notification = subscription_notification(event, honoured, subscription_id)
                if notification is None:
                    continue
                if len(self.pending) >= policy.subscription_queue_limit:
                    STREAM_ENDINGS["overflow"] += 1
                    logger.warning(
                        "a subscriptions/listen stream was cut off: its reader stopped reading "
                        "with %d notifications waiting (SUBSCRIPTION_QUEUE_LIMIT)",
                        len(self.pending),
                    )
                    self._cut_off()
                    return
                context.send(notification)
        finally:
            await layer.group_discard(group, channel)

    # -- the headers that mirror the body ----------------------------------------------------

    def _version_mismatch(self) -> dict[str, Any] | None:
        """A version header that disagrees with ``params._meta`` is a header mismatch (-32020)
        even when the body's version is one this server does not support: which of the two
        a load balancer routed on is unknowable, so neither is believed."""
        params = self.message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        body_version = meta.get(revisions.META_PROTOCOL_VERSION) if type(meta) is dict else None
        try:
            header_version = self.headers.one("mcp-protocol-version")
        except Disagreement:
            refusal = _mismatch("MCP-Protocol-Version", "appears twice with different values")
        else:
            if header_version is None or type(body_version) is not str:
                return None
            if header_version == body_version:
                return None
            refusal = _mismatch("MCP-Protocol-Version", "does not match params._meta's version")
        return jsonrpc.refusal(jsonrpc.readable_id(self.message), refusal)

    def _mirror_refusal(self, request: Request) -> dict[str, Any] | None:
        """The -32020 reply when a header that mirrors the body disagrees with what the core
        read, else None: checked before anything is served."""
        try:
            self._check_mirrors(request)
        except Disagreement as disagreement:
            refused = _mismatch(
                _DISPLAY_NAME.get(disagreement.name, disagreement.name),
                "appears twice with different values",
            )
        except ProtocolError as mismatch:
            refused = mismatch
        else:
            return None
        return jsonrpc.refusal(request.id, refused)

    def _check_mirrors(self, request: Request) -> None:
        headers = self.headers
        version = headers.one("mcp-protocol-version")
        if version is None:
            # Present and different from params._meta's was refused before the core ran
            # (_version_mismatch); here only its absence is left to refuse.
            raise _mismatch("MCP-Protocol-Version", "is missing")
        method = headers.one("mcp-method")
        if method is None:
            raise _mismatch("Mcp-Method", "is missing")
        if method != request.method:
            raise _mismatch("Mcp-Method", "does not match the body's method")
        named = _NAMED_BY.get(request.method)
        if named is not None:
            raw = headers.one("mcp-name")
            if raw is None:
                raise _mismatch("Mcp-Name", "is missing")
            value = decode_header_value(raw)
            if value is None:
                raise _mismatch("Mcp-Name", undecodable_reason(raw))
            if value != request.params.get(named):
                raise _mismatch("Mcp-Name", f"does not match params.{named}")
        if request.method == "tools/call":
            self._check_parameter_headers(request)

    def _check_parameter_headers(self, request: Request) -> None:
        name = request.params.get("name")
        arguments = request.params.get("arguments")
        if type(name) is not str or type(arguments) is not dict:
            return  # the core refuses these itself
        for parameter in self.server.index().header_params(name):
            display = f"Mcp-Param-{parameter.name}"
            try:
                raw = self.headers.one(parameter.header)
            except Disagreement:
                raise _mismatch(display, "appears twice with different values") from None
            body_value = parameter.body_value(arguments)
            if body_value is None:
                if raw is not None:
                    raise _mismatch(display, "is sent but its argument is absent")
                continue
            if raw is None:
                raise _mismatch(display, "is missing")
            value = decode_header_value(raw)
            if value is None:
                raise _mismatch(display, undecodable_reason(raw))
            if not parameter.matches(value, body_value):
                raise _mismatch(display, "does not match its argument")


_NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


_DISPLAY_NAME = {
    "mcp-protocol-version": "MCP-Protocol-Version",
    "mcp-method": "Mcp-Method",
    "mcp-name": "Mcp-Name",
}


def _mismatch(header: str, what: str) -> ProtocolError:
    return ProtocolError(HEADER_MISMATCH, f"header mismatch: {header} {what}")
