"""A server built from settings: the one constructor every server of the process goes through.

Below ``beammcp_django.process`` (the process's shared servers, which add the task runner)
so that a task worker (``tasks.worker``), which the runner enqueues, can build its own
server without importing the module that made the task: the worker's server runs a task's
call and never makes a task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings

import beammcp_django
from beammcp_django import notify, observability
from beammcp_django.conf import get_settings, load_catalog
from beammcp_django.connectome.core.observed import process_collector
from beammcp_django.connectome.exports import note_handle, start_observing
from beammcp_django.handles.book import handle_books
from beammcp_django.protocol.index import skills_of
from beammcp_django.protocol.server import CacheHint, Server, ServerOptions
from beammcp_django.protocol.task_wire import TaskRunner
from beammcp_django.runtime.host_threads import call_deadline, run_sync_host
from beammcp_django.servers.http_settings import legacy_sessions_served
from beammcp_django.servers.signing import SignedRequestState, cursor_fallback_keys, cursor_key
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
        task_notifications=not stdio and notify.layer_is_shared(),
        debug=settings.DEBUG,
    )


def make_server(
    *,
    stdio: bool,
    run_sync: Callable[..., Awaitable[Any]] = run_sync_host,
    observed: bool = True,
    deadline: bool = True,
    tasks: TaskRunner | None = None,
) -> Server:
    """A server from settings, handed its task runner (None: no task is made).

    Not ``observed``: its calls are not counted in the connectome, and it starts no flusher.
    No ``deadline``: ``CALL_TIMEOUT_SECONDS`` does not bound its host calls (a task worker's:
    a task exists to outlive one)."""
    observe = observed and get_settings()["CONNECTOME_OBSERVE"]
    timeout = get_settings()["CALL_TIMEOUT_SECONDS"] if deadline else None
    if observe:
        start_observing()
    catalog = load_catalog()
    # A site's skills are assembled (read, parsed, hashed) now, at start, not by a request.
    skills_of(catalog)
    return Server(
        catalog,
        server_options(stdio=stdio),
        cursor_key=cursor_key(),
        cursor_fallback_keys=cursor_fallback_keys(),
        run_sync=run_sync,
        state_codec=SignedRequestState(get_settings()["REQUEST_STATE_MAX_AGE_SECONDS"]),
        observe=process_collector.record if observe else None,
        bound_host=call_deadline(timeout) if timeout else None,
        offload=core_threads.run,
        # A span per host call, when the OpenTelemetry API is there to make one.
        trace_host=observability.host_span if observability.TRACING_INSTALLED else None,
        tasks=tasks,
        handles=handle_books(catalog, note_handle if observe else None),
    )
