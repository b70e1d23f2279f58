"""The endpoint as a plain Django view, for requests that reach Django's URL resolver.

Behind ``beammcp_django.asgi.get_asgi_application`` the MCP path never gets here. When a
project serves Django's own ASGI handler instead, this view answers the same protocol, but
Django has already read the body (into memory or a spool file) by the time it runs: the size
cap before reading, the chunked refusal and the body deadline cannot hold. The system check
``beammcp.W002`` says so at startup; this view logs it once at run time too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from beammcp_django.asgi import build_endpoint
from beammcp_django.observability import ObservedEndpoint
from beammcp_django.transports.types import Message

logger = logging.getLogger("beammcp_django.http")
_HOP_BY_HOP = {b"connection", b"content-length", b"transfer-encoding"}


@lru_cache(maxsize=1)
def _observed_endpoint() -> ObservedEndpoint:
    logger.warning(
        "The MCP endpoint is served through a plain Django view: the body is read before "
        "any check. Use beammcp_django.asgi.get_asgi_application() (system check beammcp.W002)."
    )
    # Django's handler sent request_started for this request, and sends request_finished.
    return build_endpoint(request_signals=False)


class _Responder:
    """Collects the endpoint's ASGI messages and turns them into a Django response."""

    def __init__(self) -> None:
        self.started: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started.set_result(message)
        elif message["type"] == "http.response.body":
            await self.chunks.put(message.get("body", b""))
            if not message.get("more_body", False):
                await self.chunks.put(None)

    async def stream(self) -> AsyncIterator[bytes]:
        while (chunk := await self.chunks.get()) is not None:
            yield chunk

    async def body(self) -> bytes:
        return b"".join([chunk async for chunk in self.stream()])


@csrf_exempt
async def endpoint_view(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The URL ``beammcp:endpoint`` as a Django view: the body Django has read is handed to
    the ASGI endpoint (``asgi.build_endpoint``) and its answer becomes a Django response."""
    return await relay(request, _observed_endpoint())


async def relay(
    request: HttpRequest, endpoint: ObservedEndpoint
) -> HttpResponse | StreamingHttpResponse:
    """``request``, whose body Django has read, answered by the ASGI ``endpoint``."""
    scope: dict[str, Any] | None = getattr(request, "scope", None)
    if scope is None:
        return HttpResponse(
            "The MCP endpoint needs an ASGI server.", status=501, content_type="text/plain"
        )
    body = request.body
    delivered = False
    # Django cancels a view whose client went away (and closes a streaming response's
    # iterator); either way the endpoint hears http.disconnect, which cancels the call.
    gone = asyncio.Event()

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def stream(responder: _Responder) -> AsyncIterator[bytes]:
        try:
            async for chunk in responder.stream():
                yield chunk
        finally:
            gone.set()

    responder = _Responder()
    task = asyncio.create_task(endpoint(scope, receive, responder.send))
    try:
        start = await responder.started
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in start.get("headers", [])
            if name.lower() not in _HOP_BY_HOP
        }
        if headers.get("content-type") == "text/event-stream":
            return StreamingHttpResponse(stream(responder), status=start["status"], headers=headers)
        content = await responder.body()
        await task
        return HttpResponse(content, status=start["status"], headers=headers)
    except asyncio.CancelledError:
        gone.set()
        raise
