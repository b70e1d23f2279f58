"""Notifications from the client: never answered, and ignored when malformed.

A message with no ``id`` member is a notification, and its receiver must not reply to it
(JSON-RPC 2.0 §4.1; MCP basic/index.mdx §Notifications), whatever else it holds: a bad
``jsonrpc`` member, params that are not an object, a cancellation naming no request. Such a
notification is ignored and logged at debug, never answered and never fatal. A message whose
``id`` is present but unreadable is not a notification: it is a request answered with an
error that carries no ``id``.

The core acts on none of them; the transport that owns the running calls acts on
``notifications/cancelled`` (stdio; over HTTP, closing the stream is the cancellation).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .jsonrpc import RequestId, as_request_id

logger = logging.getLogger("beammcp_django")

CANCELLED = "notifications/cancelled"


@dataclass(frozen=True)
class Notification:
    method: str
    params: Mapping[str, Any]


def is_notification(message: Mapping[str, Any]) -> bool:
    """True for a message with no ``id`` member (a response carries one, so it is not)."""
    return "id" not in message


def envelope_problem(message: Mapping[str, Any]) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 notification a server could accept, or None."""
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be "2.0"'
    if type(message.get("method")) is not str:
        return "a notification needs a method string"
    return None


def read(message: Mapping[str, Any]) -> Notification | None:
    """The notification ``message`` holds, or None (logged at debug) when it is malformed."""
    problem = envelope_problem(message)
    params = message.get("params")
    if params is None:
        params = {}
    elif problem is None and type(params) is not dict:
        problem = "params must be an object"
    if problem is not None:
        logger.debug("MCP notification ignored: %s", problem)
        return None
    return Notification(message["method"], params)


def cancelled_request(notification: Notification) -> RequestId | None:
    """The request a ``notifications/cancelled`` withdraws, or None when it names none a
    request could carry (invalid cancellations are ignored: cancellation.mdx §Behavior)."""
    if notification.method != CANCELLED:
        return None
    request_id = as_request_id(notification.params.get("requestId"))
    if request_id is None:
        logger.debug("MCP notifications/cancelled ignored: requestId is not a request id")
    return request_id
