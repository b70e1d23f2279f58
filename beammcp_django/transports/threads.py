"""The worker threads sync host code runs in, and the way back from them to the loop.

Each job is a function run in a worker, its outcome handed straight to an asyncio future on
the caller's loop: no ``concurrent.futures.Future`` chained to an asyncio one per call, as
``loop.run_in_executor`` builds (about a tenth of a sync ``tools/call``'s server time,
bench/profiles/echo-c32.txt, 2026-11-29).

One pool per event loop, as asyncio's default executor is: up to ``limit`` threads (as many
as that executor would have), started on demand; a thread idle for ``idle_seconds`` ends,
running ``on_exit`` first (the Django layer closes the thread's database connections there).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from beammcp_django.protocol.errors import contained


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


# A pool's threads unless told otherwise: as many as asyncio's default executor would have.
DEFAULT_THREADS = min(32, (os.cpu_count() or 1) + 4)


def _settle(future: asyncio.Future[Any], error: BaseException | None, value: Any) -> None:
    if future.done():  # the caller stopped waiting (cancelled, past its deadline)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class HostThreads:
    def __init__(
        self,
        limit: int | None = None,
        idle_seconds: float = 60.0,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self.limit = limit or DEFAULT_THREADS
        self.idle_seconds = idle_seconds
        self._on_exit = on_exit
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Under the lock: threads alive, threads waiting for a job, jobs no thread took yet.
        # A thread starts when the jobs outnumber the waiting threads (below the limit); a
        # waiting thread ends only when no job is left, so no job is ever left without one.
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0
        self._queued = 0

    def submit(
        self, loop: asyncio.AbstractEventLoop, function: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        """``function(*args)`` in a worker thread; an asyncio future on ``loop`` settles with
        its outcome. The caller's context variables go with it."""
        future = loop.create_future()
        with self._lock:
            self._queued += 1
            self._jobs.put((loop, future, contextvars.copy_context(), function, args))
            if self._queued > self._waiting and self._threads < self.limit:
                self._threads += 1
                threading.Thread(target=self._work, name="beammcp-host", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                self._waiting += 1
            try:
                loop, future, context, function, args = self._jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    self._waiting -= 1
                    if self._queued == 0:
                        self._threads -= 1
                        break
                continue  # a job came in as the wait ended: take it
            with self._lock:
                self._waiting -= 1
                self._queued -= 1
            try:
                value, error = context.run(function, *args), None
            except BaseException as raised:  # handed to the caller; the thread serves on
                value, error = None, contained(raised)
            with contextlib.suppress(RuntimeError):  # the caller's loop closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, error, value)
            # Hold nothing of this job while waiting for the next.
            del loop, future, context, function, args, value, error
        if self._on_exit is not None:
            self._on_exit()


class ThreadsPerLoop:
    """A ``HostThreads`` for each running event loop, gone with its loop."""

    def __init__(self, on_exit: Callable[[], None] | None = None, limit: int | None = None) -> None:
        self._on_exit = on_exit
        self._limit = limit
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HostThreads] = (
            weakref.WeakKeyDictionary()
        )

    def run(self, function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``function(*args)`` in a worker of the running loop's pool: await the future."""
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools.setdefault(
                loop, HostThreads(limit=self._limit, on_exit=self._on_exit)
            )
        return pool.submit(loop, function, *args)
