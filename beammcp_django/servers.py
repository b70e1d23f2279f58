"""The process's MCP servers, built from settings on first use and shared by every request.

Built lazily, on the first request: Django's ASGI handler runs no lifespan protocol, so
nothing may wait for a startup event. The exception is ``FREEZE_HEAP_AT_STARTUP``, which
builds the server while the process is set up (``prepare_process``), synchronously, before
freezing the heap. One server serves HTTP (2026-07-28 only); one serves stdio (dual-era).
Both read the same catalog object.

What a server is handed comes from the modules that own it: how host code is called
(``host_calls``), what clients bring back (``tokens``), and for HTTP the policy
(``http_policy``).
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

import beammcp_django
from beammcp_django import observability
from beammcp_django.conf import forget_on_change, get_settings, load_catalog
from beammcp_django.connectome.exports import start_observing
from beammcp_django.connectome.observed import process_collector
from beammcp_django.host_calls import call_deadline, run_sync_host
from beammcp_django.http_policy import get_http_policy, legacy_sessions_served
from beammcp_django.protocol.server import CacheHint, Server, ServerOptions
from beammcp_django.tokens import SignedRequestState, cursor_fallback_keys, cursor_key
from beammcp_django.transports.threads import ThreadsPerLoop

# The core's own CPU work for large messages (their validation), two threads a loop: the
# work holds the GIL for most of its time, so more threads would add no throughput.
core_threads = ThreadsPerLoop(limit=2)


def server_options(*, stdio: bool) -> ServerOptions:
    """Options from settings. stdio speaks both eras on its one connection; HTTP speaks
    2025-11-25 beside 2026-07-28 unless ``HTTP_LEGACY_SESSIONS`` is off, and holds
    subscriptions/listen streams."""
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
        legacy=stdio or legacy_sessions_served(values),
        subscriptions=not stdio,
    )


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
    """A server built from settings. Requests go to the shared one (``get_server``);
    ``beammcp_django.test`` builds its own with another ``run_sync``, which keeps sync host
    code on the test's thread (its database connection holds the test's transaction), and
    not ``observed``: its calls are not counted in the connectome, and it starts no flusher
    (which would write a test's counts to the store, at exit into the real database)."""
    observe = observed and get_settings()["CONNECTOME_OBSERVE"]
    if observe:
        start_observing()
    return Server(
        load_catalog(),
        server_options(stdio=stdio),
        cursor_key=cursor_key(),
        cursor_fallback_keys=cursor_fallback_keys(),
        run_sync=run_sync,
        state_codec=SignedRequestState(get_settings()["REQUEST_STATE_MAX_AGE_SECONDS"]),
        observe=process_collector.record if observe else None,
        bound_host=call_deadline(timeout)
        if (timeout := get_settings()["CALL_TIMEOUT_SECONDS"])
        else None,
        offload=core_threads.run,
        # A span per host call, when the OpenTelemetry API is there to make one.
        trace_host=observability.host_span if observability.TRACING_INSTALLED else None,
    )


def prepare_process(*, stdio: bool) -> None:
    """With ``BEAMMCP['FREEZE_HEAP_AT_STARTUP']``: build now what the first request would
    build (the server, and HTTP's policy), then move every object alive into the collector's
    permanent generation (``gc.freeze``).

    Why: a full collection walks every tracked object, and a Django process starts with
    about 90,000 of them; on the benchmark machine each full collection paused the loop for
    about 70 ms (21 ms with the freeze), which made the tail latency of a loaded endpoint
    (bench/gc_pauses.py, docs/performance.md).
    Frozen objects are never collected, so this is for the objects a process keeps for its
    life: call it once, when the process is set up. Off by default: it is a choice for the
    whole process, which the host owns.
    """
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
