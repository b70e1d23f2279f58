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


@mcp.site.register
class EchoTask(Echo):
    """The sample's ``echo`` as a task when the client can take one: ``bench/tasks.py``
    prices making and polling a task against the plain call, and drains thousands of them
    through one worker, with a tool that costs nothing itself."""

    name = "echo_task"
    title = "Echo (as a task)"
    task = "optional"
