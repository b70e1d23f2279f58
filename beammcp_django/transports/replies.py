"""How the HTTP endpoint answers: the status a JSON-RPC error is sent with, a whole response
in two ASGI messages, and the refusals raised before or instead of the core."""

from __future__ import annotations

from beammcp_django.protocol import jsonrpc, wire
from beammcp_django.protocol.errors import INVALID_REQUEST, PartDown
from beammcp_django.transports.outages import RETRY_AFTER
from beammcp_django.transports.types import Send

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
JSON = [(b"content-type", b"application/json")]
CLOSE = (b"connection", b"close")


class Refused(Exception):
    """An HTTP-level refusal, answered before or instead of the core: ``status``, a JSON-RPC
    error body when ``message`` is given (else none), and ``Connection: close`` when the
    request's body may still be on the wire unread."""

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


async def refuse_unavailable(
    send: Send, request_id: jsonrpc.RequestId | None, down: PartDown
) -> None:
    """Answer a request that needed a part that did not answer, before anything else was
    sent for it: 503, the part named, and when to send it again (``Retry-After``)."""
    body = wire.encode(jsonrpc.unavailable(request_id, down))
    await respond(send, 503, body, [*JSON, RETRY_AFTER])


class ClientGone(Exception):
    """The client disconnected before its request was read: nothing is left to answer."""


def error_body(request_id: jsonrpc.RequestId | None, code: int, message: str) -> bytes:
    return wire.encode(jsonrpc.error(request_id, code, message))


async def respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """A whole response: ``headers`` and the body's length, then the body."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode("ascii"))],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def refuse(send: Send, refused: Refused) -> None:
    """Answer ``refused`` as it says."""
    answer = list(JSON) if refused.message else []
    if refused.close:
        answer.append(CLOSE)
    answer.extend(refused.extra)
    body = error_body(None, refused.code, refused.message) if refused.message else b""
    await respond(send, refused.status, body, answer)
