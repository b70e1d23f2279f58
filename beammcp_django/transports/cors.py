"""CORS for browser clients on an allowed origin: the preflight answered, and the headers
that let a page read every later answer (``BEAMMCP["ALLOWED_ORIGINS"]``; the Origin itself
is checked before this runs, in ``admission``)."""

from __future__ import annotations

import re

from beammcp_django.transports.headers import Disagreement, Headers
from beammcp_django.transports.replies import CLOSE, Refused
from beammcp_django.transports.types import Message, Send

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


def with_cors(send: Send, origin: str) -> Send:
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


def _allowed_headers(requested: list[str]) -> bytes | None:
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


async def preflight(headers: Headers, origin: str | None, send: Send) -> None:
    """Answer a CORS preflight from an allowed origin: 204 with what the actual request
    may use. The authorize hook is not asked: a browser sends no credentials on a
    preflight, and the request it clears is authorized as any other. Anything that is
    not a preflight, or asks for what the endpoint does not accept, is refused by name
    and carries no CORS header, so the browser never sends the request."""
    if not origin:
        raise Refused(
            400, "OPTIONS is answered only as a CORS preflight: Origin is missing", close=True
        )
    try:
        method = headers.one("access-control-request-method")
    except Disagreement:
        raise Refused(
            400,
            "Access-Control-Request-Method appears twice with different values",
            close=True,
        ) from None
    if method is None:
        raise Refused(
            400,
            "OPTIONS is answered only as a CORS preflight: "
            "Access-Control-Request-Method is missing",
            close=True,
        )
    if method not in CORS_METHODS:
        raise Refused(
            403,
            f"a CORS preflight may ask only for {', '.join(CORS_METHODS)}",
            close=True,
        )
    allowed = _allowed_headers(headers.all("access-control-request-headers"))
    if allowed is None:
        raise Refused(
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
        response.append(CLOSE)
    # 204: no Content-Length (RFC 9110 §8.6 forbids it on a 204).
    await send({"type": "http.response.start", "status": 204, "headers": response})
    await send({"type": "http.response.body", "body": b""})
