"""A shift: one job of the task backend that keeps several task runs going at once.

django-tasks-db's ``db_worker`` runs one job at a time, and an RQ worker one job per work
horse; neither runs two jobs of one process side by side. A task mostly waits (on the
network, on the database, on a sleep), so a worker running one task at a time leaves its
machine idle. A shift makes one job run up to ``slots`` tasks at once: it claims the fairest
waiting task into each free slot, and again each time a run ends, for as long as tasks wait.
Each slot is a thread that calls the run; the runs' async host code shares the worker's one
event loop, and sync host code gets a thread of the worker's pool (``tasks.worker``).

Fairness holds with it: every claim is the fairest waiting task, made at the moment a slot
is free, so a principal's backlog never holds more of a shift than the runs already going.

A shift ends when its slots are idle and nothing waits. It stops claiming at the worker's
first SIGTERM, SIGINT or SIGQUIT (the worker's warm shutdown: the runs going end, no new one
starts, then the worker's own handler decides) when the job runs in the main thread, where
signals arrive; a second signal goes to the worker's handler as before, which ends the
process: the slots' threads are daemons and do not hold it, and the runs they leave behind
are taken again after their leases lapse, as after a ``kill -9``.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Generic, TypeVar

logger = logging.getLogger("beammcp_django.tasks")

Claim = TypeVar("Claim")

# How often a shift with a free slot looks for a waiting task while its other slots run:
# a task made runnable meanwhile is taken by the shift within this, or by its own job later.
IDLE_POLL_SECONDS = 0.5

# The signals a worker shuts down on (django-tasks-db's db_worker: these three).
SHUTDOWN_SIGNALS = tuple(
    number for number in signal.Signals if number.name in ("SIGTERM", "SIGINT", "SIGQUIT")
)


class Shift(Generic[Claim]):
    """Up to ``slots`` runs at once: ``claim()`` the next one to run (None: nothing waits),
    ``run(claim)`` it in a slot's thread; ``on_exit`` in each slot's thread as it ends (the
    Django layer closes that thread's database connections)."""

    def __init__(
        self,
        slots: int,
        claim: Callable[[], Claim | None],
        run: Callable[[Claim], object],
        on_exit: Callable[[], None] | None = None,
        idle_poll: float = IDLE_POLL_SECONDS,
    ) -> None:
        self.slots = slots
        self._claim = claim
        self._run = run
        self._on_exit = on_exit
        self._idle_poll = idle_poll
        self._claims: queue.SimpleQueue[Claim | None] = queue.SimpleQueue()
        self._ended: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self.stopping = False

    def run(self) -> int:
        """Run until the slots are idle and nothing waits (or a shutdown signal came and the
        runs going ended): the number of runs started."""
        started = running = 0
        with self._heeding_shutdown():
            try:
                while True:
                    while running < self.slots and not self.stopping:
                        claim = self._claim()
                        if claim is None:
                            break
                        self._start(claim, running)
                        started += 1
                        running += 1
                    if running == 0:
                        break
                    full = running == self.slots or self.stopping
                    with contextlib.suppress(queue.Empty):
                        self._ended.get(timeout=None if full else self._idle_poll)
                        running -= 1
                    while not self._ended.empty():
                        self._ended.get()
                        running -= 1
            except Exception:
                # A claim failed (the database, say): the runs going end before the error
                # ends the job, so the worker's next job never runs beside them past slots.
                while running:
                    self._ended.get()
                    running -= 1
                self._end_slots()
                raise
            except BaseException:  # a forced stop: the process is leaving, the runs with it
                self._release()
                raise
        self._end_slots()
        return started

    def _end_slots(self) -> None:
        self._release()
        for thread in self._threads:
            thread.join()

    def _start(self, claim: Claim, running: int) -> None:
        """Hand ``claim`` to an idle slot, starting a slot's thread when none is idle."""
        if running == len(self._threads):
            thread = threading.Thread(
                target=self._slot, name=f"beammcp-task-slot-{running + 1}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        self._claims.put(claim)

    def _slot(self) -> None:
        try:
            while (claim := self._claims.get()) is not None:
                try:
                    self._run(claim)
                except BaseException:  # one run's fault ends that run, never its slot
                    logger.exception("MCP task shift: a run failed")
                finally:
                    self._ended.put(None)
        finally:
            if self._on_exit is not None:
                self._on_exit()

    def _release(self) -> None:
        """Tell each slot's thread to end once its run ends."""
        for _ in self._threads:
            self._claims.put(None)

    @contextlib.contextmanager
    def _heeding_shutdown(self) -> Iterator[None]:
        """While the shift runs in the main thread: a shutdown signal stops its claiming,
        then goes to the handler the worker had installed."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {number: signal.getsignal(number) for number in SHUTDOWN_SIGNALS}
        previous = {number: was for number, was in previous.items() if was is not None}

        def stop(number: int, frame: FrameType | None) -> None:
            self.stopping = True
            before = previous[number]
            if callable(before):
                before(number, frame)
            elif before == signal.SIG_DFL:
                signal.signal(number, signal.SIG_DFL)
                signal.raise_signal(number)

        for number in previous:
            signal.signal(number, stop)
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
