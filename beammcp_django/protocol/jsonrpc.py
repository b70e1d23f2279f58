"""The JSON-RPC 2.0 envelope every reply is written in: results, errors and notifications.

One place builds them, so the rules hold everywhere at once: an error carries the id of the
request it answers when that id could be read (a string or an integer, even in a message
refused for another reason) and no ``id`` member at all when it could not: both revisions'
schemas make ``id`` optional on an error and forbid ``null``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from . import wire
from .errors import INTERNAL_ERROR, PartDown, ProtocolError

logger = logging.getLogger("beammcp_django")

RequestId = str | int

# The whole message of an internal error: what went wrong is in the server's log only.
LOGGED = "internal error; the server logged it"


def as_request_id(value: Any) -> RequestId | None:
    """``value`` when it is an id a reply can carry (a string or an integer; a boolean is not
    an integer here), else None."""
    kind = type(value)
    if kind is str or kind is int:
        return value
    return None


def readable_id(message: Mapping[str, Any]) -> RequestId | None:
    """The message's ``id`` when a reply can carry it, else None."""
    return as_request_id(message.get("id"))


def is_response(message: Mapping[str, Any]) -> bool:
    """A response (a result or an error, no method): what a client may not send a server."""
    return "method" not in message and ("result" in message or "error" in message)


def result(request_id: RequestId, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    """An error response; without ``id`` when the request's id could not be read."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    if request_id is None:
        return {"jsonrpc": "2.0", "error": body}
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def internal_error(
    request_id: RequestId | None, data: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The answer when host code failed or broke its contract: the cause is in the log, and
    in the reply only as ``data`` a project running with ``DEBUG`` on is given
    (``faults.py``)."""
    return error(request_id, INTERNAL_ERROR, LOGGED, data)


def refusal(request_id: RequestId | None, refused: ProtocolError) -> dict[str, Any]:
    """The error response for a ``ProtocolError``."""
    return error(request_id, refused.code, refused.message, refused.data)


def unavailable(request_id: RequestId | None, down: PartDown) -> dict[str, Any]:
    """The error response to a request a shared part did not answer: the part named."""
    return error(request_id, INTERNAL_ERROR, down.message)


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode_reply(reply: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """The reply as it is sent, and its bytes. Host code may have put in it what JSON cannot
    carry (an object of no JSON type, a NaN or an infinity, a container holding itself): that
    is logged, and the reply becomes the internal error for its id, so every transport
    answers such a fault alike."""
    encoded = _encoded_or_logged(reply)
    if encoded is not None:
        return reply, encoded
    sent = internal_error(readable_id(reply))
    return sent, wire.encode(sent)


def encode_outgoing(message: dict[str, Any]) -> bytes | None:
    """The bytes of any message the server sends: a reply as ``encode_reply``; a message with
    a method (a notification) that JSON cannot carry is logged and dropped (None)."""
    if "method" in message:
        return _encoded_or_logged(message)
    return encode_reply(message)[1]


def _encoded_or_logged(message: dict[str, Any]) -> bytes | None:
    try:
        return wire.encode(message)
    except (TypeError, ValueError, RecursionError):
        logger.exception(
            "an MCP message holds a value JSON cannot carry (a host answer off contract)"
        )
        return None
