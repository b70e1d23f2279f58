"""How the package calls host code: sync code on worker threads, every call under a deadline.

The Django side of running a host's tools, readers and prompts: the worker threads sync host
code runs on, with Django's connection hygiene around each call, and the bound that
``BEAMMCP['CALL_TIMEOUT_SECONDS']`` sets on every call. The core receives both as values
(``run_sync`` and ``bound_host``; ``process.build_server`` hands them over).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from django.db import close_old_connections, connections

from beammcp_django.protocol.errors import INTERNAL_ERROR, ProtocolError
from beammcp_django.protocol.server import BoundHost
from beammcp_django.transports.deadline import Deadline
from beammcp_django.transports.threads import ThreadsPerLoop

logger = logging.getLogger("beammcp_django")


def _with_connection_hygiene(function: Callable[..., Any], *args: Any) -> Any:
    # Sync host code runs in a pool thread whose connection outlives one call: drop it if
    # it is broken or past CONN_MAX_AGE, before and after, as Django does around a request.
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


def threads_for_host(limit: int | None = None) -> Callable[..., asyncio.Future[Any]]:
    """A ``run_sync`` with a pool of its own per event loop, of up to ``limit`` threads
    (``threads.DEFAULT_THREADS`` by default); idle threads end after a minute, closing
    their database connections first."""
    pool = ThreadsPerLoop(on_exit=connections.close_all, limit=limit)

    def run_sync_host(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run sync host code in a worker thread (never on the event loop), with the
        caller's context variables and Django's connection hygiene around it; await the
        future for its outcome. A function returning the future, not a coroutine: one
        fewer to create and to resume on every sync call."""
        return pool.run(_with_connection_hygiene, function, *args)

    return run_sync_host


# The serving process's: every sync host call of its servers.
run_sync_host = threads_for_host()


def call_deadline(seconds: float) -> BoundHost:
    """Bound every host call to ``seconds``: past it the caller gets -32603 naming the limit.

    An async handler is cancelled at the deadline. A sync handler cannot be: Python has no
    way to stop a thread, so its worker thread stays busy until the handler returns, and only
    the caller is released (docs/threat-model.md).
    """

    async def bounded(pending: Awaitable[Any]) -> Any:
        deadline = Deadline(seconds)
        try:
            with deadline:
                return await pending
        except TimeoutError:
            if not deadline.expired:
                raise  # the host's own TimeoutError, not our deadline
            logger.warning("MCP host call passed BEAMMCP['CALL_TIMEOUT_SECONDS'] (%g s)", seconds)
            raise ProtocolError(
                INTERNAL_ERROR, f"the host did not answer within {seconds:g} s"
            ) from None

    return bounded
