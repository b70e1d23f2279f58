"""One HTTP request once it is admitted, read and authorized: what every later step (the
stateless exchange, a 2025-11-25 session) is handed, in one object rather than ten
arguments."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from beammcp_django.protocol.context import NO_FACTS, CallerFacts
from beammcp_django.transports.admission import StreamAuthority
from beammcp_django.transports.headers import Headers
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.types import Receive, Send


@dataclass(slots=True)
class Incoming:
    message: dict[str, Any]  # the decoded JSON-RPC message
    headers: Headers
    receive: Receive
    send: Send  # what answers (with the CORS headers, for an allowed Origin)
    policy: HttpPolicy
    # Who is calling, as the AUTHORIZE hook's yes named it, and the OAuth scopes it named
    # (a Grant; else none); and what a stream that outlives the request's own authorization
    # asks before it goes on (the credential's end, that hook again).
    principal: Any
    scopes: frozenset[str]
    still_allowed: StreamAuthority
    task: asyncio.Task[Any]  # the request's own task
    size: int  # the body's length in bytes
    client: str  # the client's address as the ASGI server saw it ("" when it gave none)
    # What host code reads beside the principal: the Grant's claims and values, the named
    # request headers (context.claims, .values, .headers).
    facts: CallerFacts = NO_FACTS
