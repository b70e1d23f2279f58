"""The skills extension (``io.modelcontextprotocol/skills``): ``skills/list``, ``skills/get``
and ``resources/directory/read``, and ``resources/read`` of a skill's files, served from the
skills the catalog lists (``skills.py`` built them: nothing is parsed or hashed here).

Served at both revisions: the page is written against 2026-07-28, and a 2025-11-25 session
is offered the same methods, the extension declared in ``initialize``'s capabilities (the
cache hints are 2026-07-28's alone). A skill is gated like any entry: one its caller's gates
hide is answered through every method exactly as one that does not exist, after the same
gates were asked (``hidden_or_unknown``).
"""

from __future__ import annotations

from typing import Any

from .. import echo
from ..access import admits, admitted, hides, require_scopes
from ..context import RequestContext
from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from ..index import CatalogIndex
from ..request import Request, require_string
from ..skills import SkillFile, SkillSpec
from .base import Handler, ServerBase


async def skills_list(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = _served(server, request)
    return await server.listing(
        request, context, "skills", index.skill_keys, index.skill_wire, index.skill_access
    )


async def skills_get(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    index = _served(server, request)
    uri = require_string(request.params, "uri")
    spec = index.skills.get(uri)
    if not await usable(spec, index.skill_access, context):
        raise _refused(uri, "no skill is served at {}")
    require_scopes(spec.access, context)
    result: dict[str, Any] = {"skill": spec.to_wire()}
    if request.modern:
        server.add_cache_hint(result, request.method, hides(spec.access))
    return result


async def read_skill_file(
    server: ServerBase,
    request: Request,
    context: RequestContext,
    index: CatalogIndex,
    served: tuple[SkillSpec, SkillFile],
) -> dict[str, Any] | None:
    """``resources/read`` of a skill's file: the contents built with the skill, for a caller
    the skill's gates admit; None for any other, whose read goes on as for a URI no skill
    serves (``resources.py``), after the same gates were asked."""
    spec, file = served
    if not await usable(spec, index.read_access, context):
        return None
    require_scopes(spec.access, context)
    result: dict[str, Any] = {"contents": [file.contents]}
    if request.modern:
        server.add_cache_hint(result, "resources/read", hides(spec.access))
    return result


async def directory_read(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    """``resources/directory/read``: the direct children of a skill's directory, paged as
    ``resources/list`` is. A URI that is no directory (a file, a hidden skill's directory,
    nothing at all) gets one answer."""
    index = _served(server, request)
    uri = require_string(request.params, "uri")
    directory = index.skill_directories.get(uri)
    spec = directory[0] if directory is not None else None
    if not await usable(spec, index.skill_access, context):
        raise _refused(uri, "{} is not a directory resource of this server")
    require_scopes(spec.access, context)
    _, keys, children = directory
    # A cursor names its directory too: one directory's is no position in another.
    page, next_cursor = server.page(
        request.method, request.params, keys, children, context, within=uri
    )
    result: dict[str, Any] = {"resources": page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _refused(uri: str, sentence: str) -> ProtocolError:
    """-32602 naming ``uri`` in ``sentence`` when it may be echoed (``echo.py``), and as
    "the requested URI" when it may not: odd bytes are never sent back."""
    shown = echo.uri(uri)
    if shown is None:
        return ProtocolError(INVALID_PARAMS, sentence.format("the requested URI (not shown)"))
    return ProtocolError(INVALID_PARAMS, sentence.format(shown))


def _served(server: ServerBase, request: Request) -> CatalogIndex:
    """The catalog, when it serves a skill; otherwise the extension is not declared, and its
    methods are unknown ones (the page: a server that did not declare ``directoryRead``
    answers ``resources/directory/read`` as the base protocol answers an unknown method)."""
    index = server.index()
    if not index.skill_keys:
        raise ProtocolError(METHOD_NOT_FOUND, server.no_method(request.method, request.modern))
    return index


async def usable(spec: Any, accesses: list[Any], context: RequestContext) -> bool:
    """Whether the caller may use the skill ``spec`` (None: nothing is there). Unknown and
    hidden cost the same: either way every gate of ``accesses`` is asked at once first, as
    ``named_entry`` does for names."""
    if spec is None or hides(spec.access):
        await admitted(accesses, context)
    return spec is not None and await admits(spec.access, context)


METHODS: dict[str, Handler] = {
    "skills/list": skills_list,
    "skills/get": skills_get,
    "resources/directory/read": directory_read,
}
