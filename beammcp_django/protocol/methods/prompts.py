"""The prompts family, with completion (which completes a prompt's or a resource template's
arguments): ``prompts/list``, ``prompts/get`` and ``completion/complete``, at both
revisions."""

from __future__ import annotations

from typing import Any

from ..access import admits, require_scopes
from ..catalog import InputRequired
from ..context import RequestContext
from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from ..request import Request, optional_object
from ..results import completion, prompt_result
from ..round_trips import receive_inputs
from .base import Asked, Handler, ServerBase, named_entry


async def prompts_list(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = server.index()
    return await server.listing(
        request, context, "prompts", index.prompt_keys, index.prompt_wire, index.prompt_access
    )


async def prompts_get(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    params = request.params
    index = server.index()
    name, entry = await named_entry(
        params, index.prompt_entries, index.prompt_access, "prompt", context
    )
    arguments = optional_object(params, "arguments")
    violation, arguments = await server.checked(request, entry.arguments, arguments)
    if violation is not None:
        raise ProtocolError(INVALID_PARAMS, f"invalid arguments for prompt '{name}': {violation}")
    receive_inputs(server.states, request, context, name, arguments)
    value = await server.call_host("get_prompt", name, arguments, context)
    if isinstance(value, InputRequired):
        value = await server.answer_input(
            value, request, context, name, arguments, "get_prompt", name, arguments, context
        )
        if type(value) is Asked:
            return value.result
    return prompt_result(value, name)


async def complete(server: ServerBase, request: Request, context: RequestContext) -> dict[str, Any]:
    if not server.has_completions:
        raise ProtocolError(METHOD_NOT_FOUND, server.no_method(request.method, request.modern))
    params = request.params
    ref = optional_object(params, "ref")
    await _completed_entry(server, ref, context)
    argument = optional_object(params, "argument")
    if type(argument.get("name")) is not str or type(argument.get("value")) is not str:
        raise ProtocolError(INVALID_PARAMS, "params.argument must have string name and value")
    context_arguments = optional_object(optional_object(params, "context"), "arguments")
    value = await server.call_host("complete", ref, argument, context_arguments, context)
    return {"completion": completion(value)}


async def _completed_entry(
    server: ServerBase, ref: dict[str, Any], context: RequestContext
) -> None:
    """Refuse a ``ref`` naming no prompt or resource this caller may use, hidden ones
    answered as unknown ones."""
    index = server.index()
    if ref.get("type") == "ref/prompt":
        name = ref.get("name")
        prompt = index.prompt_entries.get(name) if type(name) is str else None
        spec = prompt.spec if prompt is not None else None
        if spec is None or not await admits(spec.access, context):
            raise ProtocolError(INVALID_PARAMS, "params.ref names no prompt of this server")
    elif ref.get("type") == "ref/resource":
        uri = ref.get("uri")
        spec = (
            index.resources.get(uri) or index.template_by_key.get(uri) if type(uri) is str else None
        )
        if spec is None or not await admits(spec.access, context):
            raise ProtocolError(INVALID_PARAMS, "params.ref names no resource of this server")
    else:
        raise ProtocolError(INVALID_PARAMS, "params.ref.type must be ref/prompt or ref/resource")
    require_scopes(spec.access, context)


METHODS: dict[str, Handler] = {
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": complete,
}
