"""The resources family: ``resources/list``, ``resources/templates/list`` and
``resources/read``, at both revisions."""

from __future__ import annotations

from typing import Any

from ..access import hides, require_scopes
from ..apps import is_view, view_contents
from ..catalog import InputRequired, ResourceSpec
from ..context import RequestContext
from ..errors import HostContractError, ResourceNotFound
from ..request import Request, require_string
from ..results import not_found, resource_contents
from ..round_trips import receive_inputs
from .base import Asked, Handler, ServerBase
from .skills import read_skill_file


async def resources_list(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = server.index()
    return await server.listing(
        request,
        context,
        "resources",
        index.resource_keys,
        index.resource_wire,
        index.resource_access,
    )


async def templates_list(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = server.index()
    return await server.listing(
        request,
        context,
        "resourceTemplates",
        index.template_keys,
        index.template_wire,
        index.template_access,
    )


async def resources_read(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    uri = require_string(request.params, "uri")
    index = server.index()
    skill_file = index.skill_files.get(uri)
    if skill_file is not None:
        read = await read_skill_file(server, request, context, index, skill_file)
        if read is not None:
            return read
        # Hidden: answered as any URI no skill serves (a host's template may serve it).
    match = await server.visible_match(uri, context)
    if match is None:
        raise not_found(uri, request.modern)
    require_scopes(match.spec.access, context)
    receive_inputs(server.states, request, context, uri, {})
    try:
        value = await server.call_host("read_resource", match, context)
        if isinstance(value, InputRequired):
            value = await server.answer_input(
                value, request, context, uri, {}, "read_resource", match, context
            )
            if type(value) is Asked:
                return value.result
    except ResourceNotFound:
        raise not_found(uri, request.modern) from None
    contents = resource_contents(value, match)
    spec = match.spec
    if isinstance(spec, ResourceSpec) and is_view(spec.uri, spec.mime_type):
        try:
            contents = view_contents(contents, spec.uri, spec.meta)
        except ValueError as wrong:
            raise HostContractError(str(wrong)) from None
    result: dict[str, Any] = {"contents": contents}
    if request.modern:
        server.add_cache_hint(result, request.method, hides(match.spec.access))
    return result


METHODS: dict[str, Handler] = {
    "resources/list": resources_list,
    "resources/templates/list": templates_list,
    "resources/read": resources_read,
}
