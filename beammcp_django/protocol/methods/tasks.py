"""The tasks extension's family (2026-07-28 only): a call made a task (``as_task``),
``tasks/get``, ``tasks/update`` and ``tasks/cancel``, the tasks a listen stream may watch,
and one run of a task's tool in the worker (``run_task``). ``task_wire.py`` is the
extension's wire: its statuses, ids and what a task shows."""

from __future__ import annotations

import logging
from typing import Any

from .. import jsonrpc, revisions
from ..catalog import InputRequired
from ..context import Cancellation, Emit, RequestContext
from ..errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    HostContractError,
    ProtocolError,
    ToolError,
)
from ..faults import fault_data
from ..principal import principal_key
from ..request import Request
from ..results import tool_error, tool_result
from ..round_trips import askable, input_required
from ..task_wire import (
    EXTENSION,
    REQUIRED,
    TaskCall,
    TaskOutcome,
    TaskRunner,
    declares_tasks,
    input_responses_param,
    missing_tasks_capability,
    task_id_param,
)
from .base import Handler, ServerBase

logger = logging.getLogger("beammcp_django")


async def as_task(
    server: ServerBase,
    request: Request,
    context: RequestContext,
    name: str,
    arguments: dict[str, Any],
    mode: str,
) -> dict[str, Any] | None:
    """The answer to a call of a tool that may run as a task: its ``CreateTaskResult``,
    an ``input_required`` result the host asks before the task is made, or None to run
    the call now (an optional tool, to a client that cannot take a task or when the
    host's ``admit_task`` says so). A required tool is refused by name where no task can
    be made: -32021 to a 2026-07-28 client that did not declare the extension, -32602
    in a 2025-11-25 session (the extension is 2026-07-28's) or on a server with no
    runner."""
    runner = server.task_runner
    if not request.modern or runner is None:
        if mode == REQUIRED:
            where = "in a 2025-11-25 session" if not request.modern else "on this transport"
            raise ProtocolError(
                INVALID_PARAMS,
                f"tool '{name}' runs only as a task (the {EXTENSION} extension of "
                f"2026-07-28), which cannot be made {where}",
            )
        return None
    if not declares_tasks(request.capabilities):
        if mode == REQUIRED:
            raise missing_tasks_capability(f"tool '{name}'")
        return None
    admitted = await _admit_task(server, name, arguments, context)
    if isinstance(admitted, InputRequired):
        return input_required(server.states, admitted, request, name, arguments)
    if admitted is not True and admitted is not False:
        raise HostContractError("admit_task answered neither True, False nor InputRequired")
    if not admitted:
        if mode == REQUIRED:
            raise HostContractError(f"admit_task declined tool '{name}', which is required")
        return None
    view = await runner.start(
        TaskCall(
            tool=name,
            arguments=arguments,
            owner=principal_key(context.principal),
            principal=context.principal,
            scopes=context.scopes,
            client_capabilities=request.capabilities,
            input_responses=context.input_responses,
            state=context.request_state,
        )
    )
    return view.created()


async def _admit_task(
    server: ServerBase, name: str, arguments: dict[str, Any], context: RequestContext
) -> Any:
    """The host's word on running this call as a task (``admit_task``, optional on a
    catalog): True when it has none."""
    admit = getattr(server.catalog, "admit_task", None)
    if admit is None:
        return True
    return await server.call_hook(admit, name, arguments, context)


async def tasks_get(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    runner, task_id = _task_request(server, request)
    view = await runner.get(task_id, principal_key(context.principal))
    if view is None:
        raise _no_task()
    return view.detailed()


async def tasks_update(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    runner, task_id = _task_request(server, request)
    responses = input_responses_param(request.params)
    if not await runner.update(task_id, principal_key(context.principal), responses):
        raise _no_task()
    return {}


async def tasks_cancel(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    runner, task_id = _task_request(server, request)
    if not await runner.cancel(task_id, principal_key(context.principal)):
        raise _no_task()
    return {}


def _task_request(server: ServerBase, request: Request) -> tuple[TaskRunner, str]:
    """The runner and the task id a tasks/* request names, once the extension is served
    and the request declared it (per request: the extension has no session)."""
    runner = server.task_runner
    if runner is None or not server.serves_tasks:
        raise ProtocolError(METHOD_NOT_FOUND, server.no_method(request.method, True))
    if not declares_tasks(request.capabilities):
        raise missing_tasks_capability(request.method)
    return runner, task_id_param(request.params)


def _no_task() -> ProtocolError:
    """An unknown, expired or another principal's task id, answered alike (never echoed)."""
    return ProtocolError(INVALID_PARAMS, "params.taskId names no task of this caller")


async def watched_tasks(
    server: ServerBase, request: Request, task_ids: list[str], context: RequestContext
) -> list[str]:
    """The tasks a listen stream asked for that it will be told of, which its
    acknowledgment names: the caller's own, where task notifications are served. Another
    caller's task is left out exactly as an unknown one is (no oracle)."""
    if not declares_tasks(request.capabilities):
        raise missing_tasks_capability("params.notifications.taskIds")
    runner = server.task_runner
    if runner is None or not server.options.task_notifications:
        return []
    owner = principal_key(context.principal)
    found = [await runner.get(task_id, owner) for task_id in task_ids]
    return [task for task, view in zip(task_ids, found, strict=True) if view is not None]


async def run_task(
    server: ServerBase,
    call: TaskCall,
    *,
    cancelled: Cancellation | None = None,
    emit: Emit | None = None,
    progress_token: str | None = None,
) -> TaskOutcome:
    """Run a task's tool once, in the worker: the host's ``call`` with the arguments the
    task was made with, ``call.input_responses`` the answers gathered so far and
    ``call.state`` what its last ``InputRequired`` kept. What it comes to, as the task
    records it: a tool error is a completed task (the extension: ``failed`` is for
    JSON-RPC errors only), a ``ProtocolError`` or a host fault a failed one."""
    entry = server.index().tool_entries.get(call.tool)
    if entry is None:
        refused = ProtocolError(INVALID_PARAMS, f"tool '{call.tool}' is no longer served")
        return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
    context = _task_context(server, call, cancelled, emit, progress_token)
    try:
        value = await server.call_host("dispatch", call.tool, dict(call.arguments), context)
        if isinstance(value, InputRequired):
            return _asked_of_task(value, call)
        result = tool_result(value, entry, modern=True)
    except ToolError as error:
        result = tool_error(str(error))
    except ProtocolError as refused:
        return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
    except HostContractError as fault:
        logger.error("MCP host answer off contract (task of tool %s): %s", call.tool, fault)
        return TaskOutcome(error=_internal_error(server, fault, call))
    except Exception as fault:
        logger.exception("MCP host fault while running a task of tool %s", call.tool)
        return TaskOutcome(error=_internal_error(server, fault, call))
    finally:
        context.finish()
    result.setdefault("resultType", "complete")
    return TaskOutcome(result=result)


def _internal_error(server: ServerBase, fault: Exception, call: TaskCall) -> dict[str, Any]:
    """The task's error for a host fault: with ``DEBUG`` on, its data names the cause and
    place (``faults.py``), as a request's would."""
    data = None
    if server.options.debug:
        data = fault_data(fault, server.handler_of("tools/call", {"name": call.tool}))
    return jsonrpc.internal_error(None, data)["error"]


def _task_context(
    server: ServerBase,
    call: TaskCall,
    cancelled: Cancellation | None,
    emit: Emit | None,
    progress_token: str | None,
) -> RequestContext:
    """What the tool's code receives in the worker: the task's request as it was made."""
    context = RequestContext(
        request_id="",
        method="tools/call",
        protocol_version=revisions.MODERN,
        client_capabilities=call.client_capabilities,
        client_info=None,
        meta={"progressToken": progress_token} if progress_token is not None else {},
        run_sync=server.run_sync,
        emit=emit,
        log_level=None,
        cancelled=cancelled,
        principal=call.principal,
        scopes=call.scopes,
        handles=server.handles,
    )
    context.input_responses = dict(call.input_responses)
    context.request_state = call.state
    return context


def _asked_of_task(value: InputRequired, call: TaskCall) -> TaskOutcome:
    """A task's ``InputRequired``: the requests its client can answer, or a failure naming
    the capabilities the task's request lacked."""
    kept, missing = askable(value, call.client_capabilities)
    if not kept:
        refused = ProtocolError(
            MISSING_CLIENT_CAPABILITY,
            "the task needs client capabilities its request did not declare",
            {"requiredCapabilities": missing},
        )
        return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
    return TaskOutcome(input_requests=kept, state=value.state)


MODERN: dict[str, Handler] = {
    "tasks/get": tasks_get,
    "tasks/update": tasks_update,
    "tasks/cancel": tasks_cancel,
}
