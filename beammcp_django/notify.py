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
import inspect
from collections.abc import Coroutine
from functools import lru_cache
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings

from beammcp_django.conf import forget_on_change, get_settings

GROUP = "beammcp.subscriptions"
EVENT_TYPE = "beammcp.change"


@lru_cache(maxsize=1)
def channel_layer() -> Any:
    """The layer ``BEAMMCP["CHANNEL_LAYER"]`` names, or this process's own in-memory one."""
    from channels.layers import InMemoryChannelLayer, get_channel_layer

    if getattr(settings, "CHANNEL_LAYERS", None):
        return get_channel_layer(get_settings()["CHANNEL_LAYER"])
    return InMemoryChannelLayer()


forget_on_change(channel_layer.cache_clear)


def layer_is_shared() -> bool:
    """Whether publications can reach other processes (``CHANNEL_LAYERS`` is set): what a
    task's status notifications need, its worker being a process of its own."""
    return bool(getattr(settings, "CHANNEL_LAYERS", None))


async def apublish(event: dict[str, Any]) -> None:
    await channel_layer().group_send(GROUP, {"type": EVENT_TYPE, **event})


_scheduled: set[asyncio.Task[None]] = set()


def run_or_schedule(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run ``coroutine`` to its end from sync code, or schedule it on the running loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        async_to_sync(_awaited)(coroutine)
        return
    task = loop.create_task(coroutine)
    _scheduled.add(task)  # keep a reference until it is done
    task.add_done_callback(_scheduled.discard)


async def _awaited(coroutine: Coroutine[Any, Any, None]) -> None:
    await coroutine


def publish(event: dict[str, Any]) -> None:
    run_or_schedule(apublish(event))


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


REDIS_LAYER = "channels_redis.core.RedisChannelLayer"


def idle_stream_problems() -> list[str]:
    """Why the configured Redis layer would end a quiet ``subscriptions/listen`` stream.

    channels_redis receives by blocking in Redis for ``brpop_timeout`` seconds (5) at a time,
    and redis-py 8 gives up any read after ``socket_timeout`` seconds, 5 by default: a read
    bound no longer than the blocking pop makes every stream quiet for 5 s end in a timeout
    (seen with channels-redis 4.3.0 and redis 8.1.0). Empty when no such layer is set."""
    alias = get_settings()["CHANNEL_LAYER"]
    layer = (getattr(settings, "CHANNEL_LAYERS", None) or {}).get(alias)
    if not isinstance(layer, dict) or layer.get("BACKEND") != REDIS_LAYER:
        return []
    try:
        from channels_redis.core import RedisChannelLayer
        from channels_redis.utils import decode_hosts
    except ImportError:
        return []  # the layer cannot load at all; Channels says so at its first use
    blocking = RedisChannelLayer.brpop_timeout
    problems = []
    for number, host in enumerate(decode_hosts((layer.get("CONFIG") or {}).get("hosts"))):
        timeout = _read_timeout(host)
        if timeout is not None and timeout <= blocking:
            problems.append(
                f"CHANNEL_LAYERS['{alias}'] host {number}: Redis reads time out after "
                f"{timeout:g} s, no longer than the {blocking:g} s channels_redis blocks "
                "waiting for a message, so every subscriptions/listen stream quiet that long "
                "ends with an internal error"
            )
    return problems


def _read_timeout(host: dict[str, Any]) -> float | None:
    """The ``socket_timeout`` redis-py will use for ``host``: its own key, the address's
    query, else redis-py's default (None before redis-py 8), read from the signature of its
    public client, ``redis.asyncio.Redis``, whose connections share that default (redis-py
    keeps the constant itself in a private module)."""
    from urllib.parse import parse_qs, urlsplit

    if "socket_timeout" in host:
        value = host["socket_timeout"]
        return None if value is None else float(value)
    query = parse_qs(urlsplit(str(host.get("address", ""))).query)
    if "socket_timeout" in query:
        return float(query["socket_timeout"][-1])
    try:
        from redis.asyncio import Redis
    except ImportError:
        return None
    parameter = inspect.signature(Redis).parameters.get("socket_timeout")
    default = None if parameter is None else parameter.default
    return float(default) if isinstance(default, (int, float)) else None
