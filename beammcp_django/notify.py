"""Telling open ``subscriptions/listen`` streams that something changed.

Changes are published on a Django Channels channel layer, so a change made in one worker
reaches the listeners of every worker that shares the layer (Redis in production). Without a
``CHANNEL_LAYERS`` setting the package keeps one in-memory layer for this process: enough for
one worker, and for tests.

Every function here is safe from sync code (a sync tool in its worker thread, a management
command, a ``post_save`` receiver) and from async code (it then schedules the publication on
the running loop); the ``a``-prefixed forms are awaitable.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from typing import Any

from asgiref.sync import async_to_sync

GROUP = "beammcp.subscriptions"
EVENT_TYPE = "beammcp.change"


@lru_cache(maxsize=1)
def channel_layer() -> Any:
    """The layer ``BEAMMCP["CHANNEL_LAYER"]`` names, or this process's own in-memory one."""
    from channels.layers import InMemoryChannelLayer, get_channel_layer
    from django.conf import settings

    from beammcp_django.conf import get_settings

    if getattr(settings, "CHANNEL_LAYERS", None):
        return get_channel_layer(get_settings()["CHANNEL_LAYER"])
    return InMemoryChannelLayer()


async def apublish(event: dict[str, Any]) -> None:
    await channel_layer().group_send(GROUP, {"type": EVENT_TYPE, **event})


_scheduled: set[asyncio.Task[None]] = set()


def publish(event: dict[str, Any]) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        async_to_sync(apublish)(event)
        return
    task = loop.create_task(apublish(event))
    _scheduled.add(task)  # keep a reference until it is done
    task.add_done_callback(_scheduled.discard)


def tools_changed() -> None:
    publish({"kind": "tools"})


def prompts_changed() -> None:
    publish({"kind": "prompts"})


def resources_changed() -> None:
    publish({"kind": "resources"})


def resource_updated(uri: str) -> None:
    publish({"kind": "resource", "uri": uri})


async def atools_changed() -> None:
    await apublish({"kind": "tools"})


async def aprompts_changed() -> None:
    await apublish({"kind": "prompts"})


async def aresources_changed() -> None:
    await apublish({"kind": "resources"})


async def aresource_updated(uri: str) -> None:
    await apublish({"kind": "resource", "uri": uri})
