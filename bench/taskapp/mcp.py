"""``wait_task`` and ``wait_task_async``: tools run as tasks that wait a tenth of a second
and answer their text, one in a sync ``call`` (``time.sleep``: a blocking client, a slow
query), one in a coroutine (``asyncio.sleep``: an awaited one). What a worker running
several tasks at once (``TASKS['WORKER_CONCURRENCY']``) buys is time spent waiting; these
cost nothing else, so a drain of them measures that alone."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from beammcp_django import mcp
from sample_project.demo.mcp import Echo

WAIT_SECONDS = 0.1


@mcp.site.register
class WaitTask(Echo):
    """Waits a tenth of a second in its thread, then answers its text."""

    name = "wait_task"
    title = "Wait, then echo (sync, as a task)"
    task = "required"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        time.sleep(WAIT_SECONDS)
        return arguments["text"]


@mcp.site.register
class WaitTaskAsync(Echo):
    """Waits a tenth of a second on the event loop, then answers its text."""

    name = "wait_task_async"
    title = "Wait, then echo (async, as a task)"
    task = "required"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await asyncio.sleep(WAIT_SECONDS)
        return arguments["text"]
