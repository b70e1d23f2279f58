"""Connection hygiene for the ORM queries of async host code.

An async handler's ORM query (``await Model.objects.aget()``, ``async for``) runs in
asgiref's one thread for thread-sensitive sync code, on that thread's connection. Django's own
ASGI handler tidies that connection around every request (``close_old_connections`` on
``request_started`` and ``request_finished``, sent through that thread); an MCP call is not a
Django request, so nothing did. Found on PostgreSQL: the connection stayed open for the
process's life whatever ``CONN_MAX_AGE`` said, and once the server dropped it (a restart, a
failover, an idle timeout) every async handler's query failed until the worker restarted.

So a connection created outside the host worker threads (which tidy their own,
``host_threads.run_sync_host``) marks a tidy as due; after an async host call, while one is due,
``close_old_connections`` runs in that thread, as Django does after a request: a connection
past ``CONN_MAX_AGE`` (at 0, every one) is closed, an unusable one is dropped, and the next
query is health-checked. Async handlers that never open a connection pay one attribute read.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import AsyncToSync, SyncToAsync, sync_to_async
from django.db import close_old_connections, connections
from django.db.backends.signals import connection_created

logger = logging.getLogger("beammcp_django")

# Threads that tidy their own connections: the host workers (threads.py) and the flusher.
_SELF_TIDYING = ("beammcp-host", "beammcp-connectome-flush")


class SyncThreadConnections:
    """Whether asgiref's sync thread may hold a connection, and the tidy that closes it."""

    def __init__(self) -> None:
        self.due = False
        self._tidy = sync_to_async(self._tidy_here, thread_sensitive=True)

    def created(self, **kwargs: Any) -> None:
        """``connection_created``: a connection opened outside the self-tidying threads."""
        if threading.current_thread().name not in _SELF_TIDYING:
            self.due = True

    def _tidy_here(self) -> None:
        close_old_connections()
        # Still due while this thread keeps one open (a CONN_MAX_AGE above 0).
        self.due = any(c.connection is not None for c in connections.all(initialized_only=True))

    async def tidy(self) -> None:
        """Run ``close_old_connections`` in asgiref's sync thread (await after a host call).
        A failure is logged in one line and leaves the call's outcome as it was: the next
        query meets the connection's trouble where the host can see it.

        Only when that thread is the process-wide one: a caller that brought a thread of its
        own owns its connection, as Django's handler does per request and as a test does
        (``beammcp_django.test``: closing it would end the test's transaction)."""
        if not _on_the_process_wide_thread():
            return
        try:
            await self._tidy()
        except Exception as error:
            logger.warning(
                "MCP async ORM connection tidy failed: %s: %s", type(error).__name__, error
            )


def _on_the_process_wide_thread() -> bool:
    """Whether thread-sensitive sync code called from this task runs on asgiref's one
    process-wide thread: asgiref's own choice (``SyncToAsync.__call__``) when no sync caller
    waits in ``async_to_sync`` and no ``ThreadSensitiveContext`` is open."""
    return (
        getattr(AsyncToSync.executors, "current", None) is None
        and SyncToAsync.thread_sensitive_context.get(None) is None
        and asyncio.get_running_loop() not in AsyncToSync.loop_thread_executors
    )


sync_thread_connections = SyncThreadConnections()
connection_created.connect(sync_thread_connections.created, dispatch_uid=__name__)
