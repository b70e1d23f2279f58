"""A tool as a 2025-11-25 client may receive it.

2025-11-25's ``Tool`` is narrower than 2026-07-28's: its ``inputSchema`` and ``outputSchema``
must each be an object whose ``type`` is ``"object"``, whose ``properties`` (when present)
maps names to objects, and whose ``required`` (when present) is a list of strings; and
``CallToolResult.structuredContent`` must be an object. 2026-07-28 admits any JSON Schema as
the output schema, and any value as structured content.

So, at 2025-11-25: a boolean property subschema is written as the object schema that means
the same (``true`` as ``{}``, ``false`` as ``{"not": {}}``); an output schema that still does
not fit (its root is not an object schema) is left out of the tool, and the tool's results
carry their structured value as JSON text only, without ``structuredContent``
(``manage.py check`` warns, ``beammcp.W004``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TRUE_SCHEMA: dict[str, Any] = {}
_FALSE_SCHEMA: dict[str, Any] = {"not": {}}


def _with_object_properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with boolean property subschemas written as their object equivalents."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not any(
        type(value) is bool for value in properties.values()
    ):
        return schema
    rewritten = {
        name: (_TRUE_SCHEMA if value else _FALSE_SCHEMA) if type(value) is bool else value
        for name, value in properties.items()
    }
    return {**schema, "properties": rewritten}


def fits(schema: Any) -> bool:
    """Whether ``schema`` is what 2025-11-25's ``Tool`` admits as an input or output schema."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return False
    if "$schema" in schema and type(schema["$schema"]) is not str:
        return False
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(value, Mapping) for value in properties.values()
    ):
        return False
    required = schema.get("required", [])
    return isinstance(required, list) and all(type(name) is str for name in required)


def output_schema_fits(schema: Mapping[str, Any] | None) -> bool:
    """Whether a tool's output schema can be sent at 2025-11-25 (None: there is none)."""
    return schema is None or fits(_with_object_properties(schema))


def legacy_tool(wire: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's ``tools/list`` entry at 2026-07-28, as 2025-11-25 may receive it."""
    tool = dict(wire)
    tool["inputSchema"] = _with_object_properties(wire["inputSchema"])
    output = wire.get("outputSchema")
    if output is not None:
        output = _with_object_properties(output)
        if fits(output):
            tool["outputSchema"] = output
        else:
            del tool["outputSchema"]
    return tool
