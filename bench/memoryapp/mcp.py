"""``hold``: a tool that keeps its request in flight for a while, for ``bench/memory.py``.
Installed only by ``bench/memory_settings.py``, so the side-by-side catalogs stay equal."""

from __future__ import annotations

import asyncio
from typing import Any

from beammcp_django import mcp


@mcp.site.register
class Hold(mcp.Tool):
    """Holds its request for a while, then answers its text's length: the memory bench keeps
    many requests in flight with it."""

    name = "hold"
    input_schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "seconds": {"type": "number", "minimum": 0, "maximum": 60},
        },
        "required": ["text", "seconds"],
        "additionalProperties": False,
    }

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await asyncio.sleep(arguments["seconds"])
        return str(len(arguments["text"]))
