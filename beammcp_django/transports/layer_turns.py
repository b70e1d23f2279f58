"""Turns on the channel layer for the streams' joins and leaves, so that a burst of streams
never asks the layer for more connections than it has.

channels_redis pools at most 100 connections a process (redis-py's default) and refuses the
next one with ``MaxConnectionsError``, which reads as the layer being down: a thousand GET
streams closed together made a thousand ``group_discard`` calls at once, and the ``DELETE``
that came next was answered 503 (2026-12-07, ``bench/sessions.py --store redis``). A
stream's join or leave waits for one of ``AT_ONCE`` turns instead; a turn is one round trip.
"""

from __future__ import annotations

import asyncio
from weakref import WeakKeyDictionary

# Well below channels_redis' 100, leaving the rest to the calls that answer requests.
AT_ONCE = 32

_turns: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = WeakKeyDictionary()


def layer_turn() -> asyncio.Semaphore:
    """The running loop's turns: ``async with layer_turn():`` around a join or a leave."""
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = asyncio.Semaphore(AT_ONCE)
    return turns
