"""Holding what the server sends against the ``schema.json`` of the revision it speaks.

``problems(revision, method, message)`` lists why one server message (a response to a request
of ``method``, or a notification) fails that revision's schema; empty when it passes. The
definition is chosen by what the message is, never by trying them all: 2026-07-28's
``*ResultResponse`` is ``anyOf [InputRequiredResult, <X>Result]``, and ``InputRequiredResult``
needs only ``resultType``, so a result missing its cache hints would otherwise pass.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

REVISIONS = ("2026-07-28", "2025-11-25")
_HERE = Path(__file__).resolve().parent / "spec"

# The result definition of each request method (EmptyResult where the spec answers {}).
RESULT_OF = {
    "server/discover": "DiscoverResult",
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}

NOTIFICATION_OF = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}


@functools.cache
def _document(revision: str) -> dict[str, Any]:
    return json.loads((_HERE / revision / "schema.json").read_text())


@functools.cache
def _validator(revision: str, definition: str) -> Draft202012Validator:
    document = _document(revision)
    if definition not in document["$defs"]:
        raise KeyError(f"{revision} defines no {definition}")
    schema = {**document, "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema)


def _against(revision: str, definition: str, value: Any) -> list[str]:
    return [
        f"{definition}: {'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in _validator(revision, definition).iter_errors(value)
    ]


def problems(revision: str, method: str | None, message: dict[str, Any]) -> list[str]:
    """Why ``message`` fails ``revision``'s schema; ``method`` is the request it answers."""
    if "method" in message:
        definition = NOTIFICATION_OF.get(message["method"])
        if definition is None:
            return [f"{message['method']!r} is not a notification this server may send"]
        return _against(revision, "JSONRPCNotification", message) + _against(
            revision, definition, message
        )
    if "error" in message:
        return _against(revision, "JSONRPCErrorResponse", message)
    found = _against(revision, "JSONRPCResultResponse", message)
    result = message.get("result")
    if revision == "2026-07-28" and isinstance(result, dict):
        if result.get("resultType") == "input_required":
            return found + _against(revision, "InputRequiredResult", result)
        if result.get("resultType") != "complete":
            found.append(f"resultType {result.get('resultType')!r} is not 'complete'")
    if method is None or method not in RESULT_OF:
        return [*found, f"no result definition for {method!r}"]
    return found + _against(revision, RESULT_OF[method], result)
