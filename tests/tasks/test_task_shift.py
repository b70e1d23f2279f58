"""A shift (``task_shift.Shift``) on its own: claims are plain values, runs wait on events the
test sets, so what runs at once, what is claimed when, and how a shift ends are read
directly, with no database and no worker. Then in a real worker (django-tasks-db's
``db_worker`` beside ``manage.py mcp_serve``): async tools side by side on the worker's one
event loop; ``test_task_fairness.py`` runs sync ones, each on a thread, with fairness."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import pytest

from beammcp_django.tasks.shift import Shift
from tests.http.mcphttp_support import server_env

from .tasks_support import client, serving

SETTLE = 10.0  # seconds a step may take on a loaded machine before the test fails


class Runs:
    """Claims from a list; each run holds its slot until the test releases it by name."""

    def __init__(self, names: list[str]) -> None:
        self.waiting = list(names)
        self.lock = threading.Lock()
        self.going: set[str] = set()
        self.most = 0
        self.order: list[str] = []  # as the runs began, in their slots' threads
        self.claimed: list[str] = []  # as the shift claimed them, one at a time
        self.released = {name: threading.Event() for name in names}
        self.slot_threads: set[str] = set()
        self.exits: list[str] = []

    def add(self, name: str) -> None:
        with self.lock:
            self.released[name] = threading.Event()
            self.waiting.append(name)

    def claim(self) -> str | None:
        with self.lock:
            if not self.waiting:
                return None
            self.claimed.append(self.waiting.pop(0))
            return self.claimed[-1]

    def run(self, name: str) -> None:
        with self.lock:
            self.going.add(name)
            self.most = max(self.most, len(self.going))
            self.order.append(name)
            self.slot_threads.add(threading.current_thread().name)
        try:
            assert self.released[name].wait(SETTLE), f"{name} was never released"
            if name.startswith("faulty"):
                raise RuntimeError("the host's tool broke")
        finally:
            with self.lock:
                self.going.discard(name)

    def exit(self) -> None:
        self.exits.append(threading.current_thread().name)

    def when(self, test: Callable[[], bool]) -> None:
        deadline = time.monotonic() + SETTLE
        while not test():
            assert time.monotonic() < deadline, "the shift never got there"
            time.sleep(0.01)


def in_background(shift: Shift[str]) -> tuple[threading.Thread, list[int]]:
    started: list[int] = []
    thread = threading.Thread(target=lambda: started.append(shift.run()))
    thread.start()
    return thread, started


def test_a_shift_runs_its_slots_at_once_and_never_more():
    runs = Runs([f"t{number}" for number in range(7)])
    shift = Shift(3, runs.claim, runs.run, on_exit=runs.exit, idle_poll=0.05)
    thread, started = in_background(shift)
    runs.when(lambda: runs.going == {"t0", "t1", "t2"})
    assert runs.waiting == ["t3", "t4", "t5", "t6"]  # claimed only as a slot frees
    runs.released["t1"].set()
    runs.when(lambda: runs.going == {"t0", "t2", "t3"})  # the freed slot took the next
    for event in runs.released.values():
        event.set()
    thread.join(SETTLE)
    assert not thread.is_alive()
    # Claimed in order; begun in whichever order their threads got going.
    assert started == [7] and runs.claimed == [f"t{number}" for number in range(7)]
    assert sorted(runs.order) == runs.claimed
    assert runs.most == 3
    # Three slots' threads, each told to end and each tidied as it ended (on_exit).
    assert len(runs.slot_threads) == 3 and sorted(runs.exits) == sorted(runs.slot_threads)


def test_a_free_slot_takes_a_task_made_runnable_while_the_others_run():
    runs = Runs(["long"])
    shift = Shift(2, runs.claim, runs.run, idle_poll=0.05)
    thread, started = in_background(shift)
    runs.when(lambda: runs.going == {"long"})
    runs.add("late")  # nothing waited when the shift began; it looks again while one runs
    runs.when(lambda: runs.going == {"long", "late"})
    runs.released["late"].set()
    runs.released["long"].set()
    thread.join(SETTLE)
    assert started == [2]


def test_a_shift_with_nothing_waiting_ends_at_once_and_starts_no_thread():
    runs = Runs([])
    shift = Shift(4, runs.claim, runs.run, on_exit=runs.exit)
    assert shift.run() == 0
    assert runs.exits == []  # on_exit runs in each slot's thread as it ends: none began


def test_a_run_that_raises_ends_that_run_and_the_shift_goes_on(caplog):
    runs = Runs(["faulty", "next", "last"])
    for event in runs.released.values():
        event.set()
    shift = Shift(1, runs.claim, runs.run)
    with caplog.at_level("ERROR", logger="beammcp_django.tasks"):
        assert shift.run() == 3
    assert runs.order == ["faulty", "next", "last"]
    assert [record.getMessage() for record in caplog.records] == ["MCP task shift: a run failed"]


def test_a_claim_that_raises_ends_the_shift_with_its_error_once_the_runs_going_end():
    runs = Runs(["first"])
    broken = threading.Event()

    def claim() -> str | None:
        if broken.is_set():
            raise ConnectionError("the database is down")
        return runs.claim()

    shift = Shift(2, claim, runs.run, on_exit=runs.exit, idle_poll=0.05)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            shift.run()
        except ConnectionError as error:
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    runs.when(lambda: runs.going == {"first"})
    broken.set()  # the next look for a waiting task (a free slot's poll) fails
    time.sleep(0.3)  # it has failed by now: six polls
    # The run going ends before the error ends the shift: a next job of the worker never
    # runs beside it past the slots.
    assert thread.is_alive() and errors == []
    runs.released["first"].set()
    thread.join(SETTLE)
    assert [str(error) for error in errors] == ["the database is down"]
    assert runs.going == set() and len(runs.exits) == 1  # its slot ended after its run


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="no SIGTERM here")
def test_a_shutdown_signal_stops_the_claiming_lets_the_runs_end_and_reaches_the_worker():
    """In the main thread, as in db_worker: the first SIGTERM stops the claims, the runs
    going end, then the shift returns; the worker's own handler got the signal too."""
    runs = Runs(["a", "b", "c", "d"])
    told: list[int] = []

    def worker_handler(number: int, frame: object) -> None:
        told.append(number)

    before = signal.signal(signal.SIGTERM, worker_handler)
    try:
        shift = Shift(2, runs.claim, runs.run, idle_poll=0.05)
        threading.Thread(target=lambda: stop_then_release(runs)).start()
        assert shift.run() == 2
        assert told == [signal.SIGTERM] and shift.stopping
        assert runs.waiting == ["c", "d"]  # left for the next worker's jobs
        assert signal.getsignal(signal.SIGTERM) is worker_handler  # put back
    finally:
        signal.signal(signal.SIGTERM, before)


def stop_then_release(runs: Runs) -> None:
    runs.when(lambda: runs.going == {"a", "b"})
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)  # the handler runs in the main thread, between its waits
    runs.released["a"].set()
    runs.released["b"].set()


@pytest.mark.slow
@pytest.mark.orm
def test_one_worker_runs_its_concurrency_of_async_tasks_at_once_on_its_loop(tmp_path):
    env = {**server_env(tmp_path), "BEAMMCP_TASK_WORKER_CONCURRENCY": "4"}
    with serving(env, tmp_path) as running:
        ada = client(running)
        call = {"name": "mcphttp_pause", "arguments": {"seconds": 3}}
        paused = [ada.result("tools/call", call)["taskId"] for _ in range(5)]
        for task in paused[:4]:
            ada.wait_for(task, "working", message="pausing")
        # All four pause at once, one worker's four slots; the fifth waits for a free one.
        states = [ada.get(task) for task in paused]
        assert [state["status"] for state in states] == ["working"] * 5
        assert [state.get("statusMessage") for state in states] == ["pausing"] * 4 + [None]
        for task in paused:
            assert ada.wait_for(task, "completed")["status"] == "completed"
