"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the wire: what a
task is as the client sees it, which status may follow which, and how the requests that
name a task are read. The store that holds tasks and the runner that works them are the
Django layer's; nothing here does I/O.

A task's status moves only forward along the extension's diagram: ``working`` and
``input_required`` alternate, and each may end in one of the three terminal statuses, after
which nothing moves it (a cancellation that arrives after the work finished is acknowledged
and changes nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from .errors import INVALID_PARAMS, MISSING_CLIENT_CAPABILITY, ProtocolError

EXTENSION = "io.modelcontextprotocol/tasks"

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
STATUSES = frozenset({WORKING, INPUT_REQUIRED}) | TERMINAL
_NEXT: Mapping[str, frozenset[str]] = {
    WORKING: frozenset({INPUT_REQUIRED}) | TERMINAL,
    INPUT_REQUIRED: frozenset({WORKING}) | TERMINAL,
}

# What a tool declares (``ToolSpec.task``): never a task (the default), a task when the
# client declares the extension and the host's ``admit_task`` agrees, or only ever a task
# (a client that cannot take one is refused -32021).
DISABLED = "disabled"
OPTIONAL = "optional"
REQUIRED = "required"
TASK_MODES = (DISABLED, OPTIONAL, REQUIRED)

# The methods that name a task (each routed by ``Mcp-Name: <taskId>`` over HTTP).
TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

# A task id as this server mints it (``secrets.token_urlsafe``) fits this; anything else is
# refused by name before a store is asked, and the refusal echoes none of it.
TASK_ID = re.compile(r"[A-Za-z0-9_-]{16,128}")
# Keys of inputRequests and inputResponses: the server mints them; a client's are bounded.
MAX_INPUT_KEY_CHARS = 128


def may_move(current: str, new: str) -> bool:
    """Whether a task in ``current`` may move to ``new`` (the extension's state diagram)."""
    return new in _NEXT.get(current, frozenset())


def declares_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether a request's client capabilities declare the extension: decided per request,
    never from an earlier one (the extension has no session)."""
    extensions = capabilities.get("extensions")
    return type(extensions) is dict and type(extensions.get(EXTENSION)) is dict


def missing_tasks_capability(what: str) -> ProtocolError:
    """-32021 naming the extension, as the extension's capability negotiation answers a
    client that did not declare it."""
    return ProtocolError(
        MISSING_CLIENT_CAPABILITY,
        f"{what} needs the client capability extensions['{EXTENSION}']",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def task_id_param(params: Mapping[str, Any]) -> str:
    """``params.taskId``, or -32602 naming what is wrong with it (never echoing it)."""
    task_id = params.get("taskId")
    if type(task_id) is not str:
        raise ProtocolError(INVALID_PARAMS, "params.taskId must be a string")
    if not TASK_ID.fullmatch(task_id):
        raise ProtocolError(INVALID_PARAMS, "params.taskId is not a task id this server issued")
    return task_id


def input_responses_param(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params.inputResponses`` of ``tasks/update``: an object keyed by input-request keys.
    Values are not read here: a response to a key that is not outstanding is ignored, so it
    is never validated either."""
    responses = params.get("inputResponses")
    if type(responses) is not dict:
        raise ProtocolError(INVALID_PARAMS, "params.inputResponses must be an object")
    if any(len(key) > MAX_INPUT_KEY_CHARS for key in responses):
        raise ProtocolError(
            INVALID_PARAMS, f"an inputResponses key is at most {MAX_INPUT_KEY_CHARS} characters"
        )
    return responses


@dataclass(frozen=True)
class TaskView:
    """One task as the client may see it: what ``tasks/get`` answers, and what a
    ``notifications/tasks`` carries. ``result`` is set when completed, ``error`` when
    failed, ``input_requests`` (the outstanding ones) when input is required."""

    task_id: str
    status: str
    created_at: datetime
    updated_at: datetime
    ttl_ms: int | None
    poll_interval_ms: int
    status_message: str = ""
    input_requests: Mapping[str, Any] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    def _task(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _timestamp(self.created_at),
            "lastUpdatedAt": _timestamp(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        return task

    def created(self) -> dict[str, Any]:
        """The ``CreateTaskResult`` a ``tools/call`` answers: the task and no payload.
        ``content`` is empty, and there only because conformance 0.2.0-alpha.11 holds every
        ``tools/call`` result to ``CallToolResult`` (alpha.12 reads ``resultType``); the
        extension's ``Result`` admits extra members."""
        return {"resultType": "task", **self._task(), "content": []}

    def detailed(self) -> dict[str, Any]:
        """The ``DetailedTask``: the task with what its status carries, and nothing else."""
        task = self._task()
        if self.status == INPUT_REQUIRED:
            task["inputRequests"] = dict(self.input_requests)
        elif self.status == COMPLETED and self.result is not None:
            task["result"] = dict(self.result)
        elif self.status == FAILED and self.error is not None:
            task["error"] = dict(self.error)
        return task


def _timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``, as the extension's examples write it."""
    if moment.utcoffset() is None:
        raise ValueError("a task's timestamps are aware datetimes")
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="milliseconds") + "Z"


@dataclass(frozen=True)
class TaskCall:
    """A ``tools/call`` the core decided to run as a task: what the runner records and
    later hands back to ``Server.run_task``. ``owner`` is the caller's principal key (the
    task is found only with it); ``input_responses`` are the answers the request itself
    gathered before the task was made (a multi-round-trip before creation), which the tool
    reads again inside the task, and ``state`` what its ``InputRequired`` kept (verified)."""

    tool: str
    arguments: Mapping[str, Any]
    owner: str
    principal: Any
    scopes: frozenset[str] | None
    client_capabilities: Mapping[str, Any]
    input_responses: Mapping[str, Any] = field(default_factory=dict)
    state: Any = None


@dataclass(frozen=True)
class TaskOutcome:
    """What one run of a task's tool came to: ``result`` (completed: the ``CallToolResult``,
    a tool error included), ``error`` (failed: the JSON-RPC error), or ``input_requests``
    (the tool needs input; ``state`` is the host's ``InputRequired.state``, kept by the
    store for the next run, never sent)."""

    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    input_requests: Mapping[str, Any] | None = None
    state: Any = None


class TaskRunner(Protocol):
    """Where tasks are made, kept and worked: the Django layer's (``tasks/runner.py``). Each
    method is asked with the caller's principal key, and answers for that owner's tasks
    only: another owner's id is answered as one that does not exist (None or False)."""

    async def start(self, call: TaskCall) -> TaskView:
        """Record the task durably (a ``tasks/get`` finds it once this returns) and have a
        worker run it."""
        ...

    async def get(self, task_id: str, owner: str) -> TaskView | None: ...

    async def update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> bool:
        """Accept the responses to outstanding input requests (others ignored); False when
        no such task is the owner's."""
        ...

    async def cancel(self, task_id: str, owner: str) -> bool:
        """Record the wish to cancel (cooperative); False when no such task is the owner's."""
        ...
