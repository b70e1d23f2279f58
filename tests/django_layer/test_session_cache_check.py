"""``BEAMMCP["SESSION_CACHE"]`` (E132): each way it cannot share sessions is named at startup,
and a Redis cache with a Redis channel layer passes and makes the endpoint's store Redis."""

from __future__ import annotations

import pytest

from beammcp_django.checks.settings import check_settings
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.servers.session_cache import shared_session_store
from beammcp_django.transports.sessions.shared import RedisSessions

REDIS_CACHE = {
    "BACKEND": "django.core.cache.backends.redis.RedisCache",
    "LOCATION": "redis://h:1/0",
}
REDIS_LAYER = {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": []}}


def e132(settings) -> list[str]:
    return [message.msg for message in check_settings() if message.id == "beammcp.E132"]


@pytest.mark.parametrize(
    ("alias", "caches", "layers", "named"),
    [
        (7, {"default": REDIS_CACHE}, {"default": REDIS_LAYER}, "non-empty string"),
        ("sessions", {"default": REDIS_CACHE}, {"default": REDIS_LAYER}, "CACHES does not define"),
        (
            "default",
            {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
            {"default": REDIS_LAYER},
            "whose BACKEND is not django.core.cache.backends.redis.RedisCache",
        ),
        ("default", {"default": REDIS_CACHE}, None, "in-memory one"),
        (
            "default",
            {"default": REDIS_CACHE},
            {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}},
            "in-memory one",
        ),
    ],
)
def test_a_session_cache_that_cannot_share_is_refused_by_name(
    settings, alias, caches, layers, named
):
    settings.CACHES = caches
    settings.CHANNEL_LAYERS = layers
    settings.BEAMMCP = {**settings.BEAMMCP, "SESSION_CACHE": alias}
    problems = e132(settings)
    assert len(problems) == 1 and named in problems[0], problems


def test_a_redis_cache_and_a_redis_layer_share_sessions(settings):
    settings.CACHES = {"default": {**REDIS_CACHE, "KEY_PREFIX": "site"}}
    settings.CHANNEL_LAYERS = {"default": REDIS_LAYER}
    settings.BEAMMCP = {**settings.BEAMMCP, "SESSION_CACHE": "default"}
    assert e132(settings) == []
    policy = get_http_policy()
    assert policy.sessions is not None and policy.session_store is shared_session_store
    store = shared_session_store()
    assert isinstance(store, RedisSessions)
    assert store.url == "redis://h:1/0" and store.prefix == "site:beammcp:session:"


def test_without_a_session_cache_sessions_stay_in_the_process(settings):
    assert settings.BEAMMCP.get("SESSION_CACHE") is None
    assert e132(settings) == []
    assert get_http_policy().session_store is None
