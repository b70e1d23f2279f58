"""The worker threads of sync host code: outcomes reach the caller, the limit holds, idle
threads end (closing what they hold), and a caller that stops waiting loses nothing else."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from beammcp_django.transports.threads import HostThreads, ThreadsPerLoop

REQUEST = contextvars.ContextVar("request", default="none")


def test_a_value_an_exception_and_the_callers_context_variables_reach_the_caller():
    pool = ThreadsPerLoop()

    def boom() -> None:
        raise LookupError("from the worker")

    async def scenario() -> tuple[str, str]:
        REQUEST.set("r-17")
        value = await pool.run(lambda: f"{REQUEST.get()} on {threading.current_thread().name}")
        with pytest.raises(LookupError, match="from the worker"):
            await pool.run(boom)
        return value, threading.current_thread().name

    value, loop_thread = asyncio.run(scenario())
    assert value == "r-17 on beammcp-host"
    assert loop_thread != "beammcp-host"


def test_no_more_threads_than_the_limit_run_and_every_job_is_answered():
    pool = HostThreads(limit=3)
    running = 0
    most = 0
    lock = threading.Lock()

    def job(number: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return number

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        return list(await asyncio.gather(*(pool.submit(loop, job, n) for n in range(40))))

    assert asyncio.run(scenario()) == list(range(40))
    assert most <= 3


def test_an_idle_thread_ends_after_its_idle_time_and_runs_its_exit_hook():
    exited: list[threading.Thread] = []
    pool = HostThreads(
        limit=2, idle_seconds=0.2, on_exit=lambda: exited.append(threading.current_thread())
    )

    async def scenario() -> threading.Thread:
        return await pool.submit(asyncio.get_running_loop(), threading.current_thread)

    worker = asyncio.run(scenario())
    worker.join(5)
    assert not worker.is_alive()
    assert exited == [worker]


def test_a_caller_that_stops_waiting_leaves_the_pool_serving_the_next_call():
    pool = HostThreads(limit=1)
    release = threading.Event()

    async def scenario() -> str:
        loop = asyncio.get_running_loop()
        first = pool.submit(loop, release.wait, 5)
        first.cancel()
        release.set()
        return await pool.submit(loop, lambda: "next")

    assert asyncio.run(scenario()) == "next"


def test_after_a_burst_past_the_limit_and_every_thread_ending_idle_a_lone_call_is_answered():
    pool = HostThreads(limit=2, idle_seconds=0.2)

    async def burst() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(pool.submit(loop, time.sleep, 0.01) for _ in range(30)))

    async def lone_call() -> str:
        await asyncio.sleep(0.6)  # every thread has ended by now
        return await asyncio.wait_for(
            pool.submit(asyncio.get_running_loop(), lambda: "answered"), timeout=5
        )

    asyncio.run(burst())
    assert asyncio.run(lone_call()) == "answered"
