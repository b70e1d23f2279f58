"""``echo_async``: the sample's ``echo`` with a coroutine ``call``, so the HTTP benchmark can
compare an async tool (awaited on the event loop) with the sync one (run in a worker thread).
Same name pattern, schema and annotations as ``echo``; only the kind of handler differs."""

from __future__ import annotations

from typing import Any

from beammcp_django import mcp
from sample_project.demo.mcp import Echo


@mcp.site.register
class EchoAsync(Echo):
    """Answers its text unchanged, from a coroutine."""

    name = "echo_async"
    title = "Echo (async)"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return arguments["text"]
