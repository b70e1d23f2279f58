"""What a request must pass before the core reads it, in the order the endpoint asks: the
Host and Origin it names, the declared media type, the authorization hooks, the declared
length, and then the body itself, under one size cap and one deadline. Each refusal is a
``Refused`` naming its cause."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from beammcp_django.authorization import HttpRequestInfo, Refusal, granted, refuses
from beammcp_django.protocol import jsonrpc
from beammcp_django.protocol.errors import HOST_FAULTS, INTERNAL_ERROR
from beammcp_django.protocol.principal import principal_key
from beammcp_django.transports.deadline import Deadline
from beammcp_django.transports.headers import Disagreement, Headers
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.replies import ClientGone, Refused
from beammcp_django.transports.types import Receive, Scope

logger = logging.getLogger("beammcp_django.http")

# Hooks come from settings only, so the cache holds a handful: asked once, not per request.
_is_coroutine_function = functools.lru_cache(maxsize=16)(inspect.iscoroutinefunction)


def check_host_and_origin(headers: Headers, policy: HttpPolicy) -> str | None:
    """The request's Origin when it is present and allowed, None when it is absent;
    a Host this server does not serve (400) or an Origin it does not allow (403) is
    refused, preflight or not."""
    try:
        _check_host(headers, policy)
        return _check_origin(headers, policy)
    except Disagreement as disagreement:
        raise Refused(
            403 if disagreement.name == "origin" else 400,
            f"the {disagreement.name} header appears twice with different values",
            close=True,
        ) from None


def _check_host(headers: Headers, policy: HttpPolicy) -> None:
    # As Django's HttpRequest.get_host(): X-Forwarded-Host as sent, when trusted.
    host = headers.one("x-forwarded-host") if policy.use_forwarded_host else None
    host = host or headers.one("host") or ""
    if host in policy.served_hosts:
        return
    if not host or not policy.serves_host(host):
        raise Refused(400, "the Host header names a host this server does not serve", close=True)
    policy.served_hosts.remember(host)


def _check_origin(headers: Headers, policy: HttpPolicy) -> str | None:
    origin = headers.one("origin")
    if origin is None or policy.allowed_origins is None:
        return origin  # "any" allows (and the CORS headers echo) every origin
    if origin not in policy.allowed_origins:
        # The setting is named, the origin is not echoed: it is the client's to choose.
        raise Refused(
            403,
            "the Origin header names an origin BEAMMCP['ALLOWED_ORIGINS'] does not allow",
            close=True,
        )
    return origin


def check_content_type(headers: Headers) -> None:
    """The body must be declared JSON: a browser sends ``text/plain`` (and two other form
    types) cross-origin without a CORS preflight, so anything else is refused unread."""
    try:
        declared = headers.one("content-type")
    except Disagreement:
        raise Refused(415, "Content-Type appears twice with different values", close=True) from None
    media_type = (declared or "").partition(";")[0].strip(" \t").lower()
    if media_type != "application/json":
        raise Refused(
            415,
            "the body must be sent with Content-Type: application/json",
            close=True,
            extra=[(b"accept-post", b"application/json")],
        )


def request_info(scope: Scope, headers: Headers) -> HttpRequestInfo:
    client = scope.get("client")
    return HttpRequestInfo(
        method=scope["method"],
        path=scope["path"],
        headers=headers.as_mapping(),
        client=tuple(client) if client else None,  # type: ignore[arg-type]
    )


def declared_length(headers: Headers, policy: HttpPolicy) -> int | None:
    try:
        encodings = headers.all("transfer-encoding")
        if encodings:
            raise Refused(
                411,
                "chunked bodies are not accepted; send Content-Length",
                close=True,
            )
        declared = headers.one("content-length")
    except Disagreement:
        raise Refused(
            400, "Content-Length appears twice with different values", close=True
        ) from None
    if declared is None:
        return None
    if not declared.isdigit():
        raise Refused(400, "Content-Length is not a number", close=True)
    length = int(declared)
    if length > policy.max_body:
        raise Refused(413, f"the body exceeds {policy.max_body} bytes", close=True)
    return length


async def read_body(
    receive: Receive, policy: HttpPolicy, declared: int | None, task: asyncio.Task[Any]
) -> bytes:
    chunks = bytearray()
    try:
        with Deadline(policy.body_timeout, task):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunk = message.get("body", b"")
                if len(chunks) + len(chunk) > policy.max_body:
                    raise Refused(413, f"the body exceeds {policy.max_body} bytes", close=True)
                if not message.get("more_body", False):
                    if not chunks:
                        return chunk  # the whole body in one message: no copy
                    chunks += chunk
                    break
                chunks += chunk
    except TimeoutError:
        raise Refused(
            408, f"the body did not arrive within {policy.body_timeout:g} s", close=True
        ) from None
    return bytes(chunks)


class StreamAuthority:
    """What a stream a request opened asks before it goes on: whether its credential has ended
    (``expires_at``, the ``Grant``'s), and the ``AUTHORIZE`` hook again, whose yes must still
    name the principal the stream was opened by. ``key`` is that principal's key, which an
    ended principal's event names (``credentials``)."""

    __slots__ = ("_authorizer", "_info", "_key", "_policy", "expires_at", "principal")

    def __init__(
        self,
        authorizer: Authorizer,
        info: HttpRequestInfo,
        policy: HttpPolicy,
        principal: Any,
        expires_at: float | None,
    ) -> None:
        self._authorizer = authorizer
        self._info = info
        self._policy = policy
        self._key: str | None = None
        self.principal = principal
        self.expires_at = expires_at

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = principal_key(self.principal)
        return self._key

    def seconds_left(self) -> float:
        """Until the credential ends (``inf`` for one that does not)."""
        if self.expires_at is None:
            return float("inf")
        return self.expires_at - time.time()

    async def __call__(self) -> bool:
        if self.seconds_left() <= 0:
            return False
        return await self._authorizer.still_allowed(self._info, self._policy, self.principal)


class Authorizer:
    """Runs the host's authorization hooks: a coroutine function awaited on the loop, a plain
    one on a worker thread (``run_sync``). A refusal is opaque to the caller, logged here."""

    def __init__(self, run_sync: Callable[..., Awaitable[Any]]) -> None:
        self._run_sync = run_sync

    async def _verdict(self, hook: Callable[..., Any], *args: Any) -> Any:
        if _is_coroutine_function(hook):
            return await hook(*args)
        return await self._run_sync(hook, *args)

    async def still_allowed(
        self, info: HttpRequestInfo, policy: HttpPolicy, principal: Any
    ) -> bool:
        """The hook asked again (a long-lived stream re-checks): a yes that names the principal
        the stream was opened by; a raise, a refusal or another principal counts as a no."""
        try:
            verdict = await self._verdict(policy.authorize, info)
            if verdict is True:
                return principal is None
            # The rule a session binds its principal by, so a stream and a session agree.
            return not refuses(verdict) and (
                principal_key(granted(verdict)[0]) == principal_key(principal)
            )
        except HOST_FAULTS:
            logger.exception("the MCP authorize hook raised while re-checking a stream")
            return False

    async def check(
        self, hook: Callable[..., Any], *args: Any, before_body: bool, names_principal: bool
    ) -> Any:
        """Run an authorization hook: the principal its yes names (None for ``True``), or a
        ``Refused``, opaque to the caller and logged here. Only ``AUTHORIZE`` names one
        (``names_principal``); any answer of ``AUTHORIZE_BODY`` but ``True`` refuses."""
        try:
            verdict = await self._verdict(hook, *args)
        except HOST_FAULTS:
            logger.exception("an MCP authorization hook raised; answering 500")
            raise Refused(500, jsonrpc.LOGGED, close=before_body, code=INTERNAL_ERROR) from None
        if verdict is True:
            return None
        if names_principal and not refuses(verdict):
            return verdict
        refusal = verdict if isinstance(verdict, Refusal) else Refusal()
        logger.info("MCP request refused by an authorization hook: %s", refusal.reason)
        extra = []
        if refusal.status == 401 and refusal.www_authenticate:
            extra.append((b"www-authenticate", refusal.www_authenticate.encode("latin-1")))
        raise Refused(refusal.status, None, close=before_body, extra=extra)
