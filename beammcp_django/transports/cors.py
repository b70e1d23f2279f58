"""CORS for browser clients on an allowed origin: the preflight answered, and the headers
that let a page read every later answer (``BEAMMCP["ALLOWED_ORIGINS"]``; the Origin itself
is checked before this runs, in ``admission``)."""

from __future__ import annotations

import re

from beammcp_django.transports.headers import Disagreement, Headers
from beammcp_django.transports.replies import CLOSE, Refused
from beammcp_django.transports.types import Message, Send

# The request headers an MCP client sends that are not CORS-safelisted (streamable-http.mdx
# §Sending Messages, §Request Metadata; authorization's bearer token), as spelled on the wire.
# Mcp-Param-{Name} headers are allowed by prefix (``CORS_PARAM_PREFIX``).
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
# only explain a refusal no correct client meets.
CORS_EXPOSED_HEADERS = ("WWW-Authenticate",)
# What 2025-11-25 sessions add: DELETE ends one, and its id goes both ways (2025-11-25
# transports.mdx, "Session Management").
SESSION_METHODS = ("GET", "DELETE")
SESSION_HEADERS = ("Mcp-Session-Id",)
# How long a browser may reuse a preflight: Chromium's own cap (7,200 s). Safe to be long:
# the Origin is checked again on every request, so an origin removed from the settings is
# refused (403) whatever a browser cached.
PREFLIGHT_MAX_AGE_SECONDS = 7200
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9a-z]+")  # RFC 9110 tchar, names lower-cased


class CorsRules:
    """What a browser may send and read, by the eras the endpoint serves: built twice, at
    import, so a request only reads bytes already made."""

    def __init__(self, *, sessions: bool) -> None:
        self.methods = ("POST", *SESSION_METHODS) if sessions else ("POST",)
        self.request_headers = (
            (*CORS_REQUEST_HEADERS, *SESSION_HEADERS) if sessions else CORS_REQUEST_HEADERS
        )
        exposed = (*CORS_EXPOSED_HEADERS, *SESSION_HEADERS) if sessions else CORS_EXPOSED_HEADERS
        self.names = frozenset(name.lower() for name in self.request_headers)
        self.allowed = ", ".join(self.request_headers)
        self.on_responses = [
            (b"access-control-expose-headers", ", ".join(exposed).encode("ascii")),
            (b"vary", b"Origin"),
        ]
        self.on_preflights = [
            (b"access-control-allow-methods", ", ".join(self.methods).encode("ascii")),
            (b"access-control-max-age", str(PREFLIGHT_MAX_AGE_SECONDS).encode("ascii")),
            (b"vary", b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
        ]


MODERN_ONLY = CorsRules(sessions=False)
WITH_SESSIONS = CorsRules(sessions=True)


def with_cors(send: Send, origin: str, rules: CorsRules) -> Send:
    """``send`` adding, to the response start, what lets a page on ``origin`` read the answer:
    JSON, an SSE stream and every refusal alike. Never ``Access-Control-Allow-Credentials``:
    a cross-origin page's cookies never authorize a call (a bearer token in Authorization
    does), so "any" can echo every origin without letting one site act with another's
    cookies."""
    added = [(b"access-control-allow-origin", origin.encode("latin-1")), *rules.on_responses]

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message["headers"], *added]
        await send(message)

    return send_with_cors


def _allowed_headers(requested: list[str], rules: CorsRules) -> bytes | None:
    """The ``Access-Control-Allow-Headers`` value for a preflight's requested header names:
    every name ``rules`` allow, then the requested Mcp-Param-{Name} names (a
    preflight lists concrete names, so they are echoed once validated); None when a requested
    name is neither."""
    params: dict[str, None] = {}
    for value in requested:
        for item in value.split(","):
            name = item.strip(" \t").lower()
            if not name or name in rules.names:
                continue
            if (
                name.startswith(CORS_PARAM_PREFIX)
                and len(name) > len(CORS_PARAM_PREFIX)
                and _TOKEN.fullmatch(name)
            ):
                params[name] = None
                continue
            return None
    return ", ".join([rules.allowed, *params]).encode("latin-1")


async def preflight(headers: Headers, origin: str | None, send: Send, rules: CorsRules) -> None:
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
    if method not in rules.methods:
        raise Refused(
            403,
            f"a CORS preflight may ask only for {', '.join(rules.methods)}",
            close=True,
        )
    allowed = _allowed_headers(headers.all("access-control-request-headers"), rules)
    if allowed is None:
        raise Refused(
            403,
            "Access-Control-Request-Headers names a header this endpoint does not accept "
            f"(it accepts {rules.allowed} and Mcp-Param-{{Name}})",
            close=True,
        )
    response = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-headers", allowed),
        *rules.on_preflights,
    ]
    if headers.all("transfer-encoding") or any(
        value != "0" for value in headers.all("content-length")
    ):
        # No browser sends a preflight body; it is never read, so never served either.
        response.append(CLOSE)
    # 204: no Content-Length (RFC 9110 §8.6 forbids it on a 204).
    await send({"type": "http.response.start", "status": 204, "headers": response})
    await send({"type": "http.response.body", "body": b""})
