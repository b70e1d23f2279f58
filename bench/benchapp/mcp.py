"""``echo_async``: the sample's ``echo`` with a coroutine ``call``, so the HTTP benchmark can
compare an async tool (awaited on the event loop) with the sync one (run in a worker thread);
``echo_on_loop``: the sync one declaring ``never_blocks`` (run on the event loop, no thread).
Same name pattern, schema and annotations as ``echo``; only where the handler runs differs."""

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
class EchoOnLoop(Echo):
    """Answers its text unchanged, on the event loop: it never blocks."""

    name = "echo_on_loop"
    title = "Echo (on the loop)"
    never_blocks = True


@mcp.site.register
class EchoTask(Echo):
    """The sample's ``echo`` as a task when the client can take one: ``bench/tasks.py``
    prices making and polling a task against the plain call, and drains thousands of them
    through one worker, with a tool that costs nothing itself."""

    name = "echo_task"
    title = "Echo (as a task)"
    task = "optional"
