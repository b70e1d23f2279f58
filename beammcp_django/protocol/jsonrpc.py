"""The JSON-RPC 2.0 envelope every reply is written in: results, errors and notifications.

One place builds them, so the rules hold everywhere at once: an error carries the id of the
request it answers when that id could be read (a string or an integer, even in a message
refused for another reason) and no ``id`` member at all when it could not: both revisions'
schemas make ``id`` optional on an error and forbid ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import ProtocolError

RequestId = str | int


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


def refusal(request_id: RequestId | None, refused: ProtocolError) -> dict[str, Any]:
    """The error response for a ``ProtocolError``."""
    return error(request_id, refused.code, refused.message, refused.data)


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
