"""``subscriptions/listen`` (2026-07-28): the filter a stream asks for, and the notification a
published change becomes on a stream that asked for it. The transport holds the stream; the
change feed is the Django layer's.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from . import jsonrpc
from .errors import INVALID_PARAMS, ProtocolError
from .request import optional_object
from .task_wire import TASK_ID

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# What one listen stream or one 2025-11-25 session may watch: a bounded number of URIs, each
# of bounded length (what a stream holds, and the gates asked for it, stay small).
MAX_SUBSCRIBED_URIS = 256
MAX_SUBSCRIBED_URI_CHARS = 2048
# The tasks one listen stream may watch (the tasks extension's ``notifications.taskIds``).
MAX_SUBSCRIBED_TASKS = 64


# The change-feed event that ends every stream of one principal (``credentials.py`` publishes
# it): its ``principal`` is the principal's key (``principal.principal_key``).
PRINCIPAL_ENDED = "principal_ended"


def ended_key(event: Mapping[str, Any]) -> str | None:
    """The key of the principal whose streams a change-feed event ends, or None."""
    if event.get("kind") != PRINCIPAL_ENDED:
        return None
    key = event.get("principal")
    return key if type(key) is str and key else None


_LIST_CHANGED = {
    "tools": ("toolsListChanged", "notifications/tools/list_changed"),
    "prompts": ("promptsListChanged", "notifications/prompts/list_changed"),
    "resources": ("resourcesListChanged", "notifications/resources/list_changed"),
}


def listen_filter(params: Mapping[str, Any]) -> dict[str, Any]:
    """The filter a subscriptions/listen request asks for, validated; -32602 when malformed."""
    notifications = optional_object(params, "notifications")
    honoured: dict[str, Any] = {}
    for flag, _ in _LIST_CHANGED.values():
        value = notifications.get(flag)
        if value is not None and type(value) is not bool:
            raise ProtocolError(INVALID_PARAMS, f"params.notifications.{flag} must be a boolean")
        if value:
            honoured[flag] = True
    uris = _string_list(notifications, "resourceSubscriptions", "URIs", MAX_SUBSCRIBED_URIS)
    if any(len(uri) > MAX_SUBSCRIBED_URI_CHARS for uri in uris):
        raise ProtocolError(
            INVALID_PARAMS, f"a subscribed URI is at most {MAX_SUBSCRIBED_URI_CHARS} characters"
        )
    if uris:
        honoured["resourceSubscriptions"] = uris
    task_ids = notifications.get("taskIds")
    if task_ids is not None:
        task_ids = _string_list(notifications, "taskIds", "task ids", MAX_SUBSCRIBED_TASKS)
        if not all(TASK_ID.fullmatch(task) for task in task_ids):
            raise ProtocolError(
                INVALID_PARAMS,
                "params.notifications.taskIds holds a value that is not a task id this "
                "server issued",
            )
        honoured["taskIds"] = task_ids
    return honoured


def _string_list(notifications: Mapping[str, Any], key: str, what: str, limit: int) -> list[str]:
    """``notifications[key]``, a list of at most ``limit`` strings, its repeats dropped (empty
    when absent); -32602 naming the key otherwise."""
    values = notifications.get(key)
    if values is None:
        return []
    if type(values) is not list or not all(type(value) is str for value in values):
        raise ProtocolError(INVALID_PARAMS, f"params.notifications.{key} must be a list of {what}")
    if len(values) > limit:
        raise ProtocolError(
            INVALID_PARAMS, f"params.notifications.{key} holds at most {limit} {what}"
        )
    return list(dict.fromkeys(values))


def subscription_notification(
    event: Mapping[str, Any],
    honoured: Mapping[str, Any],
    subscription_id: Any,
    told: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """The notification a published change becomes on one listen stream, or None when the
    stream did not ask for it. ``event`` is ``{"kind": "tools"|"prompts"|"resources"}``,
    ``{"kind": "resource", "uri": ...}`` or, for the tasks extension, ``{"kind": "task",
    "taskId": ..., "task": <the DetailedTask>}``.

    ``told`` is the stream's own record of the ``lastUpdatedAt`` it last told of each task:
    a task's state older than one already told is not told. Each process that moves a task
    publishes where it stands, and publications from two processes reach the stream in no
    set order: a worker's ``input_required`` once arrived after the server's ``working``
    that answered it (2026-12-06), which would have told a client the task waits for input
    while it works."""
    kind = event.get("kind")
    params: dict[str, Any] = {}
    if kind in _LIST_CHANGED:
        flag, method = _LIST_CHANGED[kind]
        if not honoured.get(flag):
            return None
    elif kind == "resource" and event.get("uri") in honoured.get("resourceSubscriptions", ()):
        method = "notifications/resources/updated"
        params["uri"] = event["uri"]
    elif kind == "task" and event.get("taskId") in honoured.get("taskIds", ()):
        method = "notifications/tasks"
        task = event.get("task")
        if type(task) is not dict:
            return None
        if told is not None and not _newest(told, event["taskId"], task.get("lastUpdatedAt")):
            return None
        params.update(task)
    else:
        return None
    params["_meta"] = {SUBSCRIPTION_ID: subscription_id}
    return jsonrpc.notification(method, params)


def _newest(told: dict[str, str], task_id: str, updated_at: Any) -> bool:
    """Whether a task's state last updated at ``updated_at`` is not older than what the
    stream told of it, recording it if so. The timestamps share one fixed format (UTC,
    milliseconds, ``Z``), so their text orders them."""
    if type(updated_at) is not str:
        return True
    if updated_at < told.get(task_id, ""):
        return False
    told[task_id] = updated_at
    return True


def session_notification(
    event: Mapping[str, Any], subscriptions: Container[str]
) -> dict[str, Any] | None:
    """The notification a published change becomes on a 2025-11-25 session's stream, or None:
    every list change (the session's capabilities declared them all), and a resource update
    for a URI the session subscribed to (``resources/subscribe``)."""
    kind = event.get("kind")
    if kind in _LIST_CHANGED:
        return jsonrpc.notification(_LIST_CHANGED[kind][1], {})
    uri = event.get("uri")
    if kind == "resource" and type(uri) is str and uri in subscriptions:
        return jsonrpc.notification("notifications/resources/updated", {"uri": uri})
    return None
