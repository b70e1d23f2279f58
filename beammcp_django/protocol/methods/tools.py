"""The tools family: ``tools/list`` and ``tools/call``, at both revisions. A call of a tool
that may run as a task is first offered to the tasks family (``tasks.as_task``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..apps import declares_views
from ..catalog import InputRequired
from ..context import RequestContext
from ..errors import MISSING_CLIENT_CAPABILITY, ProtocolError, ToolError
from ..request import Request, optional_object
from ..results import tool_error, tool_result
from ..round_trips import receive_inputs
from ..task_wire import DISABLED
from .base import Asked, Handler, ServerBase, named_entry
from .tasks import as_task


async def tools_list(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = server.index()
    keys, wire, legacy, access = (
        index.tool_keys,
        index.tool_wire,
        index.tool_wire_legacy,
        index.tool_access,
    )
    # A client that did not declare MCP Apps is not listed the app-only tools (apps.py);
    # the list then depends on who asks, so it is never a shared cache's.
    shaped = index.tools_for_models is not None
    if shaped and not declares_views(request.capabilities):
        keys, wire, legacy, access = index.tools_for_models
    wire = wire if request.modern else legacy
    return await server.listing(request, context, "tools", keys, wire, access, varies=shaped)


async def tools_call(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    params = request.params
    index = server.index()
    name, entry = await named_entry(params, index.tool_entries, index.tool_access, "tool", context)
    arguments = optional_object(params, "arguments")
    _require_capabilities(entry.spec.required_client_capabilities, request)
    violation, arguments = await server.checked(request, entry.arguments, arguments)
    if violation is not None:
        return tool_error(f"invalid arguments for tool '{name}': {violation}")
    receive_inputs(server.states, request, context, name, arguments)
    if entry.spec.task != DISABLED:
        created = await as_task(server, request, context, name, arguments, entry.spec.task)
        if created is not None:
            return created
    try:
        value = await server.call_host("dispatch", name, arguments, context)
        if isinstance(value, InputRequired):
            value = await server.answer_input(
                value, request, context, name, arguments, "dispatch", name, arguments, context
            )
            if type(value) is Asked:
                return value.result
    except ToolError as error:
        return tool_error(str(error))
    return tool_result(value, entry, modern=request.modern)


def _require_capabilities(required: Mapping[str, Any] | None, request: Request) -> None:
    if not required:
        return
    missing = {name: value for name, value in required.items() if name not in request.capabilities}
    if missing:
        raise ProtocolError(
            MISSING_CLIENT_CAPABILITY,
            "the tool needs client capabilities the request did not declare: "
            + ", ".join(sorted(missing)),
            {"requiredCapabilities": dict(missing)},
        )


METHODS: dict[str, Handler] = {"tools/list": tools_list, "tools/call": tools_call}
