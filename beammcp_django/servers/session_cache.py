"""Where the endpoint's 2025-11-25 sessions live, from ``BEAMMCP["SESSION_CACHE"]``.

None (the default) keeps them in the serving process: one worker, as the embedded defaults
and ``manage.py mcp_serve`` run. The alias of a ``CACHES`` entry on Django's ``RedisCache``
puts them in that Redis, shared by every worker and machine on it
(``transports.sessions.shared``), with the Channels layer (``CHANNEL_LAYER``, which must then
cross processes too) carrying the client's answers, cancellations and sessions' ends between
workers (``transports.sessions.relay``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.conf import settings

from beammcp_django import notify
from beammcp_django.conf import forget_on_change, get_settings
from beammcp_django.transports.sessions.relay import SessionRelay
from beammcp_django.transports.sessions.shared import RedisSessions

REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"
IN_MEMORY_LAYER = "channels.layers.InMemoryChannelLayer"
# What Django's RedisCache reads from OPTIONS for itself, not for the connection.
_CACHE_ONLY_OPTIONS = frozenset({"pool_class", "parser_class", "serializer"})


def session_cache_problem() -> str | None:
    """Why ``SESSION_CACHE`` cannot hold sessions every worker shares, or None."""
    alias = get_settings()["SESSION_CACHE"]
    if alias is None:
        return None
    where = "BEAMMCP['SESSION_CACHE']"
    if not isinstance(alias, str) or not alias:
        return f"{where} must be None or the alias of a CACHES entry (a non-empty string)"
    cache = (getattr(settings, "CACHES", None) or {}).get(alias)
    if not isinstance(cache, dict):
        return f"{where} names '{alias}', which CACHES does not define"
    if cache.get("BACKEND") != REDIS_CACHE:
        return (
            f"{where} names CACHES['{alias}'], whose BACKEND is not {REDIS_CACHE}: sessions "
            "every worker shares are kept in Redis, which counts their bounds atomically"
        )
    layers = getattr(settings, "CHANNEL_LAYERS", None) or {}
    layer = layers.get(get_settings()["CHANNEL_LAYER"])
    if not isinstance(layer, dict) or layer.get("BACKEND") == IN_MEMORY_LAYER:
        return (
            f"{where} shares sessions across workers, but the channel layer is this "
            "process's own in-memory one: a client's answer or a session's end could not "
            "reach the worker it concerns. Set CHANNEL_LAYERS to a layer every worker "
            "shares (channels_redis)"
        )
    try:
        import redis.asyncio  # noqa: F401
    except ImportError:
        return f"{where} needs the redis package: pip install 'beammcp-django[redis]'"
    return None


@lru_cache(maxsize=1)
def shared_session_store() -> RedisSessions:
    """The one store of this process on the Redis ``SESSION_CACHE`` names."""
    cache: dict[str, Any] = settings.CACHES[get_settings()["SESSION_CACHE"]]
    location = cache["LOCATION"]
    if isinstance(location, str):
        location = location.split(",")
    options = {
        key: value
        for key, value in (cache.get("OPTIONS") or {}).items()
        if key not in _CACHE_ONLY_OPTIONS
    }
    key_prefix = cache.get("KEY_PREFIX") or ""
    prefix = (f"{key_prefix}:" if key_prefix else "") + "beammcp:session:"
    # Django's RedisCache writes to its first server: so do the sessions.
    values = get_settings()
    return RedisSessions(
        location[0].strip(),
        prefix,
        SessionRelay(notify.channel_layer),
        options,
        connections=int(values["SESSION_CACHE_CONNECTIONS"]),
        wait_seconds=float(values["SESSION_CACHE_WAIT_SECONDS"]),
    )


def _forget_store() -> None:
    if shared_session_store.cache_info().currsize:
        shared_session_store().relay.stop()
    shared_session_store.cache_clear()


forget_on_change(_forget_store)
