"""What the access-log line and the request span show of a request: its method, what it
names (as the catalog names it, never the client's own bytes) and how it ended."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from beammcp_django.protocol import echo
from beammcp_django.protocol.catalog import ResourceTemplateSpec

# What a log line shows for a value the client sent that cannot be shown as it is.
UNSHOWN = "?"
# The requests whose ``params`` name what they act on, and the member that names it.
_TARGET_OF = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}


def shown_method(method: Any) -> str | None:
    """The method as a log may show it; None when absent, ``UNSHOWN`` when not showable."""
    if type(method) is not str:
        return None
    return echo.name(method) or UNSHOWN


def target_of(server: Callable[[], Any] | None, method: Any, params: Any) -> tuple[Any, bool]:
    """What the request names, as the catalog names it: a tool or prompt the catalog has, a
    static resource's URI, the URI template a URI matched, a completion's reference; and
    whether that is the client's value itself (False for a template). ``(None, True)`` when
    the request names nothing; ``UNSHOWN`` when it names what the catalog does not have:
    the client's own bytes are never logged (docs/threat-model.md)."""
    if type(params) is not dict:
        return None, True
    if method == "completion/complete":
        ref = params.get("ref")
        value = (ref.get("name") or ref.get("uri")) if type(ref) is dict else None
    else:
        member = _TARGET_OF.get(method) if type(method) is str else None
        value = params.get(member) if member is not None else None
    if type(value) is not str:
        return None, True
    if server is None:
        return UNSHOWN, True
    index = server().index()
    if method == "tools/call":
        known = value in index.tool_entries
    elif method == "prompts/get":
        known = value in index.prompt_entries
    elif method == "resources/read":
        match = index.match(value)
        if match is not None and isinstance(match.spec, ResourceTemplateSpec):
            return match.spec.uri_template, False
        known = match is not None
    else:
        known = (
            value in index.prompt_entries
            or value in index.resources
            or (value in index.template_keys)
        )
    return (value, True) if known else (UNSHOWN, True)


def outcome_of(reply: Any, error: BaseException | None) -> tuple[str, int | None, str | None]:
    """How a request ended: ``ok``, ``tool_error`` (a result with ``isError``), ``error``
    (a JSON-RPC error, with its code and message), ``cancelled`` (the client withdrew it or
    left) or ``failed`` (the transport raised)."""
    if error is not None:
        return ("cancelled" if isinstance(error, asyncio.CancelledError) else "failed"), None, None
    if type(reply) is not dict:
        return "cancelled", None, None  # the client left before its answer
    failure = reply.get("error")
    if type(failure) is dict:
        return "error", failure.get("code"), failure.get("message")
    result = reply.get("result")
    if type(result) is dict and result.get("isError") is True:
        return "tool_error", None, None
    return "ok", None, None
