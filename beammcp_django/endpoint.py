"""The process's MCP servers, built from settings on first use and shared by every request.

Built lazily, not at startup: Django's ASGI handler runs no lifespan protocol, so nothing may
wait for a startup event. One server serves HTTP (2026-07-28 only); one serves stdio
(dual-era). Both read the same catalog object.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.utils.crypto import salted_hmac
from django.utils.module_loading import import_string

import beammcp_django
from beammcp_django.conf import get_settings
from beammcp_django.protocol.server import CacheHint, Server, ServerOptions
from beammcp_django.transports.http import HttpPolicy, policy_from_settings


def load_catalog() -> Any:
    """The object ``BEAMMCP['CATALOG']`` names (by default the autodiscovered site)."""
    return import_string(get_settings()["CATALOG"])


def _with_connection_hygiene(function: Callable[..., Any], *args: Any) -> Any:
    # Sync host code runs in a pool thread whose connection outlives one call: drop it if
    # it is broken or past CONN_MAX_AGE, before and after, as Django does around a request.
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


async def run_sync_host(function: Callable[..., Any], *args: Any) -> Any:
    """Run sync host code in a worker thread (never on the event loop)."""
    return await sync_to_async(_with_connection_hygiene, thread_sensitive=False)(function, *args)


def server_options(*, legacy: bool) -> ServerOptions:
    values = get_settings()
    hints = {
        method: CacheHint(ttl_ms=hint.get("ttl_ms", 0), scope=hint.get("scope", "private"))
        for method, hint in values["CACHE_HINTS"].items()
    }
    return ServerOptions(
        name=values["SERVER_NAME"],
        version=values["SERVER_VERSION"] or beammcp_django.__version__,
        title=values["SERVER_TITLE"],
        instructions=values["INSTRUCTIONS"],
        page_size=values["PAGE_SIZE"],
        cache_hints=hints,
        legacy=legacy,
    )


def cursor_key() -> bytes:
    """A key for pagination cursors derived from SECRET_KEY, so any worker accepts them."""
    return salted_hmac("beammcp_django.cursor", "pagination").digest()


def get_server(*, legacy: bool = False) -> Server:
    """The shared server: HTTP's (2026-07-28 only) or, with ``legacy``, stdio's (dual-era)."""
    return _build_server(legacy)


@lru_cache(maxsize=2)
def _build_server(legacy: bool) -> Server:
    return Server(
        load_catalog(),
        server_options(legacy=legacy),
        cursor_key=cursor_key(),
        run_sync=run_sync_host,
    )


def forget_servers() -> None:
    _build_server.cache_clear()
    get_http_policy.cache_clear()


@lru_cache(maxsize=1)
def get_http_policy() -> HttpPolicy:
    return policy_from_settings(get_settings())
