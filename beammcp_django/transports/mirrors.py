"""The headers that mirror the body (streamable-http.mdx §Request Metadata): held against
what the core read, before anything is served. A mirror that is missing, repeated with
another value, or different from the body is a header mismatch (-32020) naming the header."""

from __future__ import annotations

from typing import Any

from beammcp_django.protocol import jsonrpc, revisions
from beammcp_django.protocol.errors import HEADER_MISMATCH, ProtocolError
from beammcp_django.protocol.request import Request
from beammcp_django.protocol.server import Server
from beammcp_django.transports.headers import (
    Disagreement,
    Headers,
    decode_header_value,
    undecodable_reason,
)


def version_mismatch(message: dict[str, Any], headers: Headers) -> dict[str, Any] | None:
    """A version header that disagrees with ``params._meta`` is a header mismatch (-32020)
    even when the body's version is one this server does not support: which of the two
    a load balancer routed on is unknowable, so neither is believed."""
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    body_version = meta.get(revisions.META_PROTOCOL_VERSION) if type(meta) is dict else None
    try:
        header_version = headers.one("mcp-protocol-version")
    except Disagreement:
        refusal = _mismatch("MCP-Protocol-Version", "appears twice with different values")
    else:
        if header_version is None or type(body_version) is not str:
            return None
        if header_version == body_version:
            return None
        refusal = _mismatch("MCP-Protocol-Version", "does not match params._meta's version")
    return jsonrpc.refusal(jsonrpc.readable_id(message), refusal)


def mirror_refusal(request: Request, headers: Headers) -> dict[str, Any] | None:
    """The -32020 reply when a header every request of its method mirrors (the revision,
    the method, the name it routes by) disagrees with what the core read, else None: checked
    before anything is served, the same whatever the name names."""
    try:
        _check_mirrors(request, headers)
    except (Disagreement, ProtocolError) as refused:
        return _refusal(request, refused)
    return None


def parameter_refusal(request: Request, headers: Headers, server: Server) -> dict[str, Any] | None:
    """The -32020 reply when a ``Mcp-Param-*`` header disagrees with the argument the tool
    declares it mirrors, else None. It depends on what the tool declares: the transport
    asks it only of a tool the caller may see (a hidden one is answered as unknown)."""
    if request.method != "tools/call":
        return None
    try:
        _check_parameter_headers(request, headers, server)
    except (Disagreement, ProtocolError) as refused:
        return _refusal(request, refused)
    return None


def _refusal(request: Request, refused: Disagreement | ProtocolError) -> dict[str, Any]:
    if isinstance(refused, Disagreement):
        display = _DISPLAY_NAME.get(refused.name, refused.name)
        refused = _mismatch(display, "appears twice with different values")
    return jsonrpc.refusal(request.id, refused)


def _check_mirrors(request: Request, headers: Headers) -> None:
    version = headers.one("mcp-protocol-version")
    if version is None:
        # Present and different from params._meta's was refused before the core ran
        # (version_mismatch); here only its absence is left to refuse.
        raise _mismatch("MCP-Protocol-Version", "is missing")
    method = headers.one("mcp-method")
    if method is None:
        raise _mismatch("Mcp-Method", "is missing")
    if method != request.method:
        raise _mismatch("Mcp-Method", "does not match the body's method")
    named = _NAMED_BY.get(request.method)
    if named is not None:
        raw = headers.one("mcp-name")
        if raw is None:
            raise _mismatch("Mcp-Name", "is missing")
        value = decode_header_value(raw)
        if value is None:
            raise _mismatch("Mcp-Name", undecodable_reason(raw))
        if value != request.params.get(named):
            raise _mismatch("Mcp-Name", f"does not match params.{named}")


def _check_parameter_headers(request: Request, headers: Headers, server: Server) -> None:
    name = request.params.get("name")
    arguments = request.params.get("arguments")
    if type(name) is not str or type(arguments) is not dict:
        return  # the core refuses these itself
    for parameter in server.index().header_params(name):
        display = f"Mcp-Param-{parameter.name}"
        try:
            raw = headers.one(parameter.header)
        except Disagreement:
            raise _mismatch(display, "appears twice with different values") from None
        body_value = parameter.body_value(arguments)
        if body_value is None:
            if raw is not None:
                raise _mismatch(display, "is sent but its argument is absent")
            continue
        if raw is None:
            raise _mismatch(display, "is missing")
        value = decode_header_value(raw)
        if value is None:
            raise _mismatch(display, undecodable_reason(raw))
        if not parameter.matches(value, body_value):
            raise _mismatch(display, "does not match its argument")


_NAMED_BY = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension ("HTTP Transport"): each request naming a task routes by its id.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


_DISPLAY_NAME = {
    "mcp-protocol-version": "MCP-Protocol-Version",
    "mcp-method": "Mcp-Method",
    "mcp-name": "Mcp-Name",
}


def _mismatch(header: str, what: str) -> ProtocolError:
    return ProtocolError(HEADER_MISMATCH, f"header mismatch: {header} {what}")
