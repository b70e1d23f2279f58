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
from collections.abc import Awaitable, Callable
from typing import Any

from beammcp_django.authorization import HttpRequestInfo, expiry_of, facts_of, granted
from beammcp_django.protocol import jsonrpc, notifications, wire
from beammcp_django.protocol.errors import INVALID_REQUEST, PartDown, ProtocolError
from beammcp_django.protocol.request import Request, Unanswered
from beammcp_django.protocol.server import Server
from beammcp_django.transports.admission import (
    Authorizer,
    StreamAuthority,
    check_content_type,
    check_host_and_origin,
    declared_length,
    read_body,
    request_info,
)
from beammcp_django.transports.cors import MODERN_ONLY, WITH_SESSIONS, preflight, with_cors
from beammcp_django.transports.exchange import Exchange
from beammcp_django.transports.headers import Headers
from beammcp_django.transports.incoming import Incoming
from beammcp_django.transports.limits import RateLimited, check_rate
from beammcp_django.transports.mirrors import (
    mirror_refusal,
    parameter_refusal,
    version_mismatch,
)
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.replies import (
    JSON,
    ClientGone,
    Refused,
    error_body,
    refuse,
    refuse_unavailable,
    respond,
)
from beammcp_django.transports.sessions.legacy_http import LegacySessions, in_legacy_era
from beammcp_django.transports.types import Receive, Scope, Send

# The scope key under which a request's observation (spans, the access log) travels.
OBSERVATION_KEY = "beammcp.observation"
_ALLOW = (b"allow", b"POST, OPTIONS")
_ALLOW_WITH_SESSIONS = (b"allow", b"GET, POST, DELETE, OPTIONS")


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
        self._authorizer = Authorizer(run_sync)
        self._run_sync = run_sync
        self._legacy = LegacySessions()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise RuntimeError("the MCP endpoint serves HTTP only")
        reply = send  # what answers: with the CORS headers once the Origin is allowed
        try:
            policy = self._policy()
            method = scope["method"]
            headers = Headers(scope["headers"])
            # GET and DELETE act on a 2025-11-25 session; without one named they are refused
            # as at 2026-07-28, which has neither.
            in_session = (
                (method == "GET" or method == "DELETE")
                and policy.sessions is not None
                and bool(headers.all("mcp-session-id"))
            )
            if method != "POST" and method != "OPTIONS" and not in_session:
                allow = _ALLOW if policy.sessions is None else _ALLOW_WITH_SESSIONS
                raise Refused(405, None, close=True, extra=[allow])
            origin = check_host_and_origin(headers, policy)
            rules = MODERN_ONLY if policy.sessions is None else WITH_SESSIONS
            if method == "OPTIONS":
                await preflight(headers, origin, send, rules)
                return
            if origin:  # an empty Origin (no browser sends one) is answered as none
                reply = with_cors(send, origin, rules)
            if in_session:
                await self._in_session(scope, headers, policy, receive, reply)
                return
            await self._serve(scope, headers, policy, receive, reply)
        except Refused as refused:
            await refuse(reply, refused)
        except PartDown as down:  # met before any answer began (a stream ends on its own)
            await refuse_unavailable(reply, None, down)
        except ClientGone:
            return

    async def _serve(
        self, scope: Scope, headers: Headers, policy: HttpPolicy, receive: Receive, send: Send
    ) -> None:
        check_content_type(headers)
        info = request_info(scope, headers)
        authorizer = self._authorizer
        verdict = await authorizer.check(
            policy.authorize, info, before_body=True, names_principal=True
        )
        principal, scopes = granted(verdict)
        # Asked once and passed on: in Python 3.11 each lookup of the running loop makes a
        # getpid() system call (its fork check).
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("the MCP endpoint runs in an asyncio task")
        decoded = await self._decoded_body(info, headers, policy, receive, send, task)
        if decoded is None:
            return
        message, size = decoded
        if policy.rate_limit is not None:
            try:
                await check_rate(policy.rate_limit, self._run_sync, principal, message)
            except RateLimited as limited:
                retry = (b"retry-after", str(limited.seconds).encode("ascii"))
                body = wire.encode(limited.reply(jsonrpc.readable_id(message)))
                await respond(send, 429, body, [*JSON, retry])
                return
        still_allowed = StreamAuthority(
            self._authorizer, info, policy, principal, expiry_of(verdict)
        )
        answer = self._answer(
            Incoming(
                message,
                headers,
                receive,
                send,
                policy,
                principal,
                scopes,
                still_allowed,
                task,
                size,
                info.client[0] if info.client else "",
                facts_of(verdict, info, policy.handler_headers),
            )
        )
        # Set by beammcp_django.observability.ObservedEndpoint when something observes.
        observation = scope.get(OBSERVATION_KEY)
        if observation is None:
            await answer
            return
        with observation.serving(message, headers) as served:
            served.reply = await answer

    async def _decoded_body(
        self,
        info: HttpRequestInfo,
        headers: Headers,
        policy: HttpPolicy,
        receive: Receive,
        send: Send,
        task: asyncio.Task[Any],
    ) -> tuple[Any, int] | None:
        """The body read within its bounds, held to ``AUTHORIZE_BODY``, and decoded, with its
        size; None once a body that is not JSON was refused 400."""
        body = await read_body(receive, policy, declared_length(headers, policy), task)
        if policy.authorize_body is not None:
            # The exact bytes as sent, before any decoding: what a signature covers.
            await self._authorizer.check(
                policy.authorize_body, info, body, before_body=False, names_principal=False
            )
        try:
            message = wire.decode(body)
        except ProtocolError as refusal:
            await respond(send, 400, error_body(None, refusal.code, refusal.message), list(JSON))
            return None
        # Decoded, the raw bytes are dropped: a request in flight holds one copy of its body.
        return message, len(body)

    async def _in_session(
        self, scope: Scope, headers: Headers, policy: HttpPolicy, receive: Receive, send: Send
    ) -> None:
        """``GET`` (a session's stream) or ``DELETE`` (its end), with ``Mcp-Session-Id``:
        authorized as any request, so that only the principal who opened a session reaches
        it."""
        info = request_info(scope, headers)
        verdict = await self._authorizer.check(
            policy.authorize, info, before_body=True, names_principal=True
        )
        principal, _ = granted(verdict)
        if scope["method"] == "DELETE":
            await self._legacy.end(headers, send, policy, principal)
            return
        still_allowed = StreamAuthority(
            self._authorizer, info, policy, principal, expiry_of(verdict)
        )
        await self._legacy.open_stream(headers, receive, send, policy, principal, still_allowed)

    async def _answer(self, incoming: Incoming) -> dict[str, Any] | None:
        """The reply sent to a request; None for a notification or a stray response."""
        server = self._server()
        message, headers, send = incoming.message, incoming.headers, incoming.send
        if incoming.policy.sessions is not None and in_legacy_era(message, headers):
            return await self._legacy.answer(server, incoming)
        read = server.receive(message, size=incoming.size)
        if type(read) is Unanswered:
            if read.reason == "notification":
                # 2026-07-28 defines no client notification over HTTP: a JSON-RPC 2.0 one
                # is accepted (202) and ignored, whatever its params; any other is refused,
                # without an id (streamable-http.mdx §Sending Messages).
                if read.problem is None:
                    notifications.read(message)
                    await respond(send, 202, b"", [])
                else:
                    body = error_body(None, INVALID_REQUEST, read.problem)
                    await respond(send, 400, body, list(JSON))
            else:
                body = error_body(
                    jsonrpc.readable_id(message), INVALID_REQUEST, "clients must not send responses"
                )
                await respond(send, 400, body, list(JSON))
            return None
        early = version_mismatch(message, headers)
        if early is None and type(read) is Request:
            early = mirror_refusal(read, headers)
            if early is None:
                early = parameter_refusal(read, headers, server)
                if early is not None and await server.hides_target(
                    read, incoming.principal, incoming.scopes
                ):
                    early = None  # a hidden tool: the core answers as for an unknown one
        return await Exchange(server, incoming, read if early is None else early).run()
