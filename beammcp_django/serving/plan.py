"""What ``manage.py mcp_serve`` runs: one uvicorn configuration, and the ones it refuses.

Every choice a deployment can get wrong unnoticed is made here, named and printed at start:
the application (``ASGI_APPLICATION`` when it is set, else the package's router), the parser
(``serving.http11``, httptools with bounded heads), the listen backlog, the concurrency limit
(answered with 503 beyond it, rather than left to the file-descriptor limit), keep-alive, the
graceful-shutdown bound, and the number of workers.

With ``DEBUG`` on and ``django.contrib.staticfiles`` installed, the application is wrapped in
staticfiles' ``ASGIStaticFilesHandler``, as ``runserver`` does: the admin's CSS then loads on
the development path too. With ``DEBUG`` off nothing is served from ``STATIC_URL``; that is
the proxy's job (``collectstatic``, docs/deployment.md).

Several workers are refused while the settings keep state inside each process: the embedded
defaults (a local-memory cache, the in-memory channel layer) would then give each worker its
own, and a subscription opened on one worker would never hear a change made on another.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from beammcp_django.asgi import get_asgi_application
from beammcp_django.serving.http11 import BoundedHttpToolsProtocol

PROCESS_LOCAL_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)
PROCESS_LOCAL_LAYER = "channels.layers.InMemoryChannelLayer"
# File descriptors kept free beyond the connections: listening sockets, the database, logs.
SPARE_DESCRIPTORS = 256
ROUTER_FACTORY = "beammcp_django.asgi:get_asgi_application"
STATIC_FACTORY = "beammcp_django.serving.plan:static_application"


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    backlog: int = 2048
    limit_concurrency: int = 2048
    timeout_keep_alive: int = 5
    timeout_graceful_shutdown: int = 30
    forwarded_allow_ips: str = "127.0.0.1"
    access_log: bool = True


def shared_state_problems() -> list[str]:
    """Why these settings cannot serve from more than one process; empty when they can."""
    problems = []
    for alias, cache in getattr(settings, "CACHES", {}).items():
        backend = cache.get("BACKEND", "")
        if backend in PROCESS_LOCAL_CACHES:
            problems.append(
                f"CACHES['{alias}'] uses {backend.rsplit('.', 1)[-1]}, which each worker keeps "
                "to itself: configure a shared cache (Redis, Memcached or the database)"
            )
    layers = getattr(settings, "CHANNEL_LAYERS", None)
    if not layers:
        problems.append(
            "CHANNEL_LAYERS is not set, so each worker has its own in-memory layer and a "
            "subscription on one never hears a change made on another: pip install "
            "channels-redis and set CHANNEL_LAYERS = {'default': {'BACKEND': "
            "'channels_redis.core.RedisChannelLayer', 'CONFIG': {'hosts': [{'address': "
            "'redis://HOST:6379/0', 'socket_timeout': 30}]}}}"
        )
    else:
        for alias, layer in layers.items():
            if layer.get("BACKEND") == PROCESS_LOCAL_LAYER:
                problems.append(
                    f"CHANNEL_LAYERS['{alias}'] is the in-memory layer, which each worker keeps "
                    "to itself: set its BACKEND to 'channels_redis.core.RedisChannelLayer'"
                )
    return problems


def serves_static_files() -> bool:
    """Whether the workers serve ``STATIC_URL`` themselves: as ``runserver``, only with
    ``DEBUG`` on and staticfiles installed (the finders read the apps' directories, which is
    no production file server)."""
    from django.apps import apps

    return bool(settings.DEBUG) and apps.is_installed("django.contrib.staticfiles")


def application_path() -> tuple[str, bool]:
    """The import string uvicorn loads in each worker, and whether it is a factory."""
    if serves_static_files():
        return STATIC_FACTORY, True
    return configured_application()


def configured_application() -> tuple[str, bool]:
    """The project's application as an import string (``ASGI_APPLICATION``, else the
    package's router factory), and whether it is a factory."""
    configured = getattr(settings, "ASGI_APPLICATION", None)
    if configured:
        module, _, attribute = configured.rpartition(".")
        return f"{module}:{attribute}", False
    return ROUTER_FACTORY, True


def static_application() -> Any:
    """The factory each worker calls with ``DEBUG`` on: the configured application (or the
    package's router) behind staticfiles' handler, which answers paths under ``STATIC_URL``
    and passes every other request, and the lifespan, to it."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.utils.module_loading import import_string

    configured = getattr(settings, "ASGI_APPLICATION", None)
    application = import_string(configured) if configured else get_asgi_application()
    return ASGIStaticFilesHandler(application)


def descriptors_for(connections: int) -> int:
    """Raise this process's soft file-descriptor limit (its workers inherit it) towards what
    ``connections`` need; return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + SPARE_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        soft = ceiling
    return soft


def uvicorn_config(options: ServeOptions) -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.run`` for ``options``."""
    app, factory = application_path()
    return {
        "app": app,
        "factory": factory,
        "host": options.host,
        "port": options.port,
        "workers": options.workers,
        "http": BoundedHttpToolsProtocol,
        "backlog": options.backlog,
        "limit_concurrency": options.limit_concurrency,
        "timeout_keep_alive": options.timeout_keep_alive,
        "timeout_graceful_shutdown": options.timeout_graceful_shutdown,
        "forwarded_allow_ips": options.forwarded_allow_ips,
        "access_log": options.access_log,
    }
