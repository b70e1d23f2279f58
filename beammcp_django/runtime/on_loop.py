"""Sync host code that declares it never blocks (``never_blocks = True``), run on the event loop.

A plain method otherwise runs on a worker thread (``host_threads.run_sync_host``). The trip
there and back (a thread woken, the GIL handed over, the loop woken again) is the largest
single cost a sync call adds over HTTP; docs/performance.md prices it. Code that neither
queries nor waits on anything needs no thread, and its class can say so. The promise is held
where it can be:

- Django refuses its ORM on the event loop's thread (``SynchronousOnlyOperation``): a call
  that queries fails as any host error does (-32603), and the log names the declaration and
  the way back;
- a call that held the loop longer than ``HELD_TOO_LONG`` (every other request of the worker
  waited meanwhile) is logged, once per method in the process, with how long it held it. The
  time is the wall clock's: a call the GIL's switching kept waiting for sync tools in worker
  threads counts that wait too, which is why the bound is generous.

As on a worker thread, the method runs in a copy of the request's context variables: what it
activates (a translation, a time zone) stays with the call.

The call deadline (``CALL_TIMEOUT_SECONDS``) cannot interrupt code that runs on the loop:
nothing else runs until it returns. That is the contract's price, and why it is opt-in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import copy_context
from time import perf_counter
from typing import Any

from django.core.exceptions import SynchronousOnlyOperation

logger = logging.getLogger("beammcp_django")

# Past this, a call declared never to block held every other request of its worker.
HELD_TOO_LONG = 0.05
# The methods logged for holding the loop too long: each is logged once in the process.
_LOGGED: set[str] = set()


class OnLoop:
    """A plain handler method of a declaration that never blocks, called on the loop."""

    __slots__ = ("_method", "_name")

    def __init__(self, method: Callable[..., Any], name: str) -> None:
        """``name``: the method's dotted path, for the log."""
        self._method = method
        self._name = name

    def __call__(self, *args: Any) -> Any:
        started = perf_counter()
        try:
            return copy_context().run(self._method, *args)
        except SynchronousOnlyOperation:
            logger.error(
                "%s runs on the event loop (its class declares never_blocks = True) but used "
                "the database: remove never_blocks (it then runs on a worker thread)",
                self._name,
            )
            raise
        finally:
            held = perf_counter() - started
            if held > HELD_TOO_LONG and self._name not in _LOGGED:
                _LOGGED.add(self._name)
                logger.warning(
                    "%s runs on the event loop (its class declares never_blocks = True) but "
                    "held it %.0f ms, wall clock (every other request of this worker waited): "
                    "remove never_blocks if it waits on anything (logged once)",
                    self._name,
                    held * 1000,
                )
