"""The process's MCP servers, built from settings on first use and shared by every request.

Built lazily, on the first request: Django's ASGI handler runs no lifespan protocol, so
nothing may wait for a startup event. The exception is ``FREEZE_HEAP_AT_STARTUP``, which
builds the server while the process is set up (``prepare_process``), synchronously, before
freezing the heap. One server serves HTTP (2026-07-28 only); one serves stdio (dual-era).
Both read the same catalog object.

What a server is handed comes from the modules that own it: how host code is called
(``runtime.host_threads``), what clients bring back (``servers.signing``), and for HTTP the
policy (``servers.http_settings``).
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from beammcp_django.conf import forget_on_change, get_settings, load_catalog, task_settings
from beammcp_django.protocol.index import skills_of
from beammcp_django.protocol.server import Server
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.factory import make_server
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.tasks.backend import backend_problem
from beammcp_django.tasks.runner import DatabaseTaskRunner


def get_server(*, stdio: bool = False) -> Server:
    """The shared server: HTTP's or, with ``stdio``, stdio's."""
    return _build_server(stdio)


@lru_cache(maxsize=2)
def _build_server(stdio: bool) -> Server:
    return build_server(stdio=stdio)


def build_server(
    *,
    stdio: bool,
    run_sync: Callable[..., Awaitable[Any]] = run_sync_host,
    observed: bool = True,
) -> Server:
    """A server built from settings (``servers.factory``), serving tasks when the configured
    Tasks backend can run them (``tasks.backend``; ``manage.py check`` refuses the others).
    Requests go to the shared one (``get_server``); ``beammcp_django.test`` builds its own
    with another ``run_sync``, which keeps sync host code on the test's thread (its database
    connection holds the test's transaction), and not ``observed``: its calls are not counted
    in the connectome, and it starts no flusher (which would write a test's counts to the
    store, at exit into the real database)."""
    runs_tasks = backend_problem(task_settings()["BACKEND"]) is None
    return make_server(
        stdio=stdio,
        run_sync=run_sync,
        observed=observed,
        tasks=DatabaseTaskRunner(run_sync) if runs_tasks else None,
    )


def prepare_process(*, stdio: bool) -> None:
    """Assemble the catalog's skills. Then, with ``BEAMMCP['FREEZE_HEAP_AT_STARTUP']``:
    build now what the first request would build (the server, and HTTP's policy), then move
    every object alive into the collector's permanent generation (``gc.freeze``).

    Why: a full collection walks every tracked object, and a Django process starts with
    about 90,000 of them; on the benchmark machine each full collection paused the loop for
    about 70 ms (21 ms with the freeze), which made the tail latency of a loaded endpoint
    (bench/gc_pauses.py, docs/performance.md).
    Frozen objects are never collected, so this is for the objects a process keeps for its
    life: call it once, when the process is set up. Off by default: it is a choice for the
    whole process, which the host owns.
    """
    # The skills are read, parsed and hashed now, in this sync start-up, never by a request
    # on the event loop (a host's files() may query the database).
    skills_of(load_catalog())
    if not get_settings()["FREEZE_HEAP_AT_STARTUP"]:
        return
    get_server(stdio=stdio)
    if not stdio:
        get_http_policy()
    gc.collect()
    gc.freeze()


@forget_on_change
def forget_servers() -> None:
    _build_server.cache_clear()
