"""Outages of the parts a server shares with other processes, as the log tells them: once
when a part stops answering, once when it answers again, never once a request.

A part down is answered by name (``PartDown``: 503 and ``Retry-After`` over HTTP) for as
long as it lasts, and every request in that time would otherwise log its own traceback: 390
in 2.5 s were counted with the session store's Redis stopped (2026-12-06). The client that
retries finds the part back without any restart: each request tries the part afresh (redis-py
and Django reconnect on the next use), and the first that gets an answer ends the outage.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from beammcp_django.protocol.errors import PartDown

logger = logging.getLogger("beammcp_django")

# The parts, as clients and the log name them.
SESSION_STORE = "the session store (Redis)"
CHANNEL_LAYER = "the channel layer"
DATABASE = "the database"

# What a client is told to wait before it tries again (Retry-After), in seconds.
RETRY_AFTER_SECONDS = 5
RETRY_AFTER = (b"retry-after", str(RETRY_AFTER_SECONDS).encode("ascii"))


class Outages:
    """Which parts are down in this process, and since when. ``down`` and ``up`` are called
    from the event loop and from worker threads alike: the lock orders the transitions and
    their lines, so each outage is logged once as it starts and once as it ends, in that
    order. A call is judged by when it began: one that began before an outage started and
    succeeds after says nothing of the part now, nor does one that began before the part
    recovered and fails after (both straddle the transition)."""

    def __init__(self) -> None:
        self._since: dict[str, float] = {}  # a part down: when its outage started
        self._ended: dict[str, float] = {}  # a part up again: when its last outage ended
        self._lock = threading.Lock()

    def down(self, part: str, error: BaseException, began: float | None = None) -> PartDown:
        """Note that ``part`` did not answer a call that ``began`` then (``error``, named in
        the log without its traceback: the cause is the part's, not this code's), and what
        to raise for it."""
        with self._lock:
            recovered = self._ended.get(part)
            straddles = began is not None and recovered is not None and began < recovered
            if part not in self._since and not straddles:
                self._since[part] = time.monotonic()
                logger.error(
                    "%s is unavailable (%s: %s): requests that need it are answered 503 until "
                    "it answers again",
                    part,
                    type(error).__name__,
                    str(error)[:200],
                )
        return PartDown(part)

    def up(self, part: str, began: float | None = None) -> None:
        """Note that ``part`` answered a call that ``began`` then: an outage that started
        before it ends. Cheap when none is in progress."""
        if not self._since:
            return
        with self._lock:
            since = self._since.get(part)
            if since is None or (began is not None and began < since):
                return
            del self._since[part]
            now = self._ended[part] = time.monotonic()
            logger.warning("%s answers again, after %.1f s unavailable", part, now - since)

    def reaching(
        self,
        part: str,
        unreachable: tuple[type[BaseException], ...],
        is_down: Callable[[BaseException], bool] | None = None,
    ) -> Reaching:
        """Around a use of ``part``: an ``unreachable`` error (that ``is_down`` confirms,
        when given) becomes ``PartDown``, the outage logged as it starts; an answer ends an
        outage in progress."""
        return Reaching(self, part, unreachable, is_down)

    def is_down(self, part: str) -> bool:
        return part in self._since


class Reaching:
    """``Outages.reaching``'s block: a class rather than a generator, since every request
    in a session and every task request passes through one or two."""

    __slots__ = ("_began", "_is_down", "_outages", "_part", "_unreachable")

    def __init__(
        self,
        outages: Outages,
        part: str,
        unreachable: tuple[type[BaseException], ...],
        is_down: Callable[[BaseException], bool] | None,
    ) -> None:
        self._outages = outages
        self._part = part
        self._unreachable = unreachable
        self._is_down = is_down
        self._began = 0.0

    def __enter__(self) -> None:
        self._began = time.monotonic()

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> bool:
        if error is None:
            self._outages.up(self._part, self._began)
            return False
        if not isinstance(error, self._unreachable) or (
            self._is_down is not None and not self._is_down(error)
        ):
            return False
        raise self._outages.down(self._part, error, self._began) from None


@functools.cache  # asked by every stream that opens: built once
def unreachable_errors() -> tuple[type[BaseException], ...]:
    """What a part's client raises when the part cannot serve a command (gone, unreachable,
    timed out, loading, out of memory, a read-only replica), as against a command's own
    fault: redis-py's (the session store, channels_redis), and the socket's own."""
    try:
        from redis import exceptions
    except ImportError:
        return (OSError,)
    return (
        exceptions.ConnectionError,  # refused, reset, loading, out of pooled connections
        exceptions.TimeoutError,
        exceptions.OutOfMemoryError,
        exceptions.ReadOnlyError,
        OSError,
    )


# This process's: every part's outages, whoever meets them.
outages = Outages()
