"""Input requests for ``InputRequired`` (2026-07-28 multi-round-trip requests).

Each builder returns ``{"method": ..., "params": ...}`` as the spec's ``InputRequests`` values
are shaped: plain requests with no ``jsonrpc`` and no ``id``, never sent as server-to-client
requests. ``CAPABILITY_OF`` names the client capability each one needs; the server leaves out
the ones the request's client did not declare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def elicit(message: str, requested_schema: Mapping[str, Any]) -> dict[str, Any]:
    """Ask the user to fill in a form (a flat object schema of primitive properties)."""
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": dict(requested_schema)},
    }


def sample(
    messages: Sequence[Mapping[str, Any]],
    max_tokens: int,
    *,
    system_prompt: str | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """Ask the client's model for a completion (messages built with ``content.user``)."""
    params: dict[str, Any] = {"messages": [dict(m) for m in messages], "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if temperature is not None:
        params["temperature"] = temperature
    return {"method": "sampling/createMessage", "params": params}


def list_roots() -> dict[str, Any]:
    """Ask the client for its roots."""
    return {"method": "roots/list"}
