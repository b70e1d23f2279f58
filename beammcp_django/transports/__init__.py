"""Thin carriers around the protocol core: HTTP (ASGI) and stdio."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


def from_any_thread(
    loop: asyncio.AbstractEventLoop, function: Callable[[Any], None]
) -> Callable[[Any], None]:
    """Wrap ``function`` so that calling it from a worker thread runs it on ``loop``.

    On the loop's own thread it runs at once, so a notification an async handler emits is
    written before the reply that follows it; from a sync handler's worker thread it is
    scheduled, in order, ahead of the completion that the thread's return schedules later.
    """
    loop_thread = threading.get_ident()

    def call(argument: Any) -> None:
        if threading.get_ident() == loop_thread:
            function(argument)
        else:
            loop.call_soon_threadsafe(function, argument)

    return call
