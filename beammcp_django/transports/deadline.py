"""The deadline the HTTP hot path puts on a block: the body read, the host call, a listen
stream's wait."""

from __future__ import annotations

import asyncio
from typing import Any


class Deadline:
    """Bound the block it guards: past ``seconds`` the current task is cancelled, and the
    block's ``CancelledError`` leaves it as ``TimeoutError``; ``expired`` says it was ours.

    ``asyncio.timeout``'s contract for a block entered once, without its rescheduling state
    machine: one timer handle, entered with a plain ``with``. The HTTP hot path enters two per
    request (the body read and the host call); the change from ``asyncio.timeout`` is priced
    with the others of its round in docs/performance.md.
    """

    __slots__ = ("_cancelling", "_seconds", "_task", "_timer", "expired")

    def __init__(self, seconds: float, task: asyncio.Task[Any] | None = None) -> None:
        """``task``: the task running the block, when the caller knows it (looking it up
        makes a getpid() system call in Python 3.11)."""
        self._seconds = seconds
        self._task = task
        self.expired = False

    def __enter__(self) -> Deadline:
        task = self._task or asyncio.current_task()
        if task is None:
            raise RuntimeError("a Deadline guards code running in an asyncio task")
        self._task = task
        self._cancelling = task.cancelling()
        self._timer = task.get_loop().call_later(self._seconds, self._expire)
        return self

    def _expire(self) -> None:
        self.expired = True
        self._task.cancel()

    def __exit__(self, kind: type[BaseException] | None, error: Any, traceback: Any) -> None:
        self._timer.cancel()
        # Only the cancellation this deadline requested becomes a TimeoutError: one the
        # caller requested as well stays a cancellation (as asyncio.timeout decides).
        if (
            self.expired
            and self._task.uncancel() <= self._cancelling
            and kind is asyncio.CancelledError
        ):
            raise TimeoutError from error
