"""The handshake family: ``server/discover`` (2026-07-28); ``initialize``, ``ping`` and
``logging/setLevel``, which only the 2025-11-25 era has."""

from __future__ import annotations

from typing import Any

from ..context import LOG_LEVELS, RequestContext
from ..errors import INVALID_PARAMS, ProtocolError
from ..request import Request, is_implementation, optional_object, require_string
from ..revisions import LEGACY, LEGACY_VERSIONS
from .base import Handler, ServerBase


async def discover(server: ServerBase, request: Request, context: RequestContext) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": server.supported_versions,
        "capabilities": server.capabilities(),
    }
    if server.options.instructions:
        result["instructions"] = server.options.instructions
    server.add_cache_hint(result, request.method)
    return result


async def initialize(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    params = request.params
    requested = require_string(params, "protocolVersion")
    capabilities = optional_object(params, "capabilities")
    client_info = params.get("clientInfo")
    if client_info is not None and not is_implementation(client_info):
        raise ProtocolError(
            INVALID_PARAMS, "params.clientInfo must be an object with string name and version"
        )
    version = requested if requested in LEGACY_VERSIONS else LEGACY
    session = request.session
    if session is not None:
        session.version = version
        session.client_capabilities = capabilities
        session.client_info = client_info
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": server.capabilities(modern=False),
        "serverInfo": server.server_info(),
    }
    if server.options.instructions:
        result["instructions"] = server.options.instructions
    return result


async def ping(server: ServerBase, request: Request, context: RequestContext) -> dict[str, Any]:
    return {}


async def set_level(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    level = request.params.get("level")
    if level not in LOG_LEVELS:
        raise ProtocolError(INVALID_PARAMS, "params.level is not a log level")
    if request.session is not None:
        request.session.log_level = level
    return {}


MODERN: dict[str, Handler] = {"server/discover": discover}
LEGACY_ONLY: dict[str, Handler] = {
    "initialize": initialize,
    "ping": ping,
    "logging/setLevel": set_level,
}
