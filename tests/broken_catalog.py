"""A catalog that must not serve: it has no ``prompts`` list (beammcp.E002) and a tool whose
name holds a space (beammcp.E010). ``manage.py mcp_stdio`` must refuse to start on it."""

from __future__ import annotations

from typing import Any

from beammcp_django.protocol.catalog import ToolSpec


class BrokenCatalog:
    tools = (ToolSpec("bad name", {"type": "object", "additionalProperties": False}),)
    resources = ()
    # No ``prompts`` attribute at all.

    def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> str:
        return "never served"

    def read_resource(self, match: Any, context: Any) -> str:
        return "never served"

    def get_prompt(self, name: str, arguments: dict[str, str], context: Any) -> list[Any]:
        return []


catalog = BrokenCatalog()
