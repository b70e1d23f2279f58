"""``transports.Deadline``: asyncio.timeout's contract for one block, at a lower cost.

It bounds the body read and every host call, so a wrong answer here either hangs a request
(no TimeoutError) or cancels one that should have gone on (a cancellation left behind).
"""

from __future__ import annotations

import asyncio
import time

import pytest

from beammcp_django.transports.deadline import Deadline


def test_a_block_that_ends_in_time_is_untouched_and_leaves_no_timer_behind() -> None:
    async def scenario() -> tuple[str, bool, int]:
        with Deadline(0.05) as deadline:
            await asyncio.sleep(0)
            value = "done"
        # Past the deadline's moment: a timer left running would cancel this sleep.
        await asyncio.sleep(0.1)
        return value, deadline.expired, asyncio.current_task().cancelling()

    assert asyncio.run(scenario()) == ("done", False, 0)


def test_an_overrun_leaves_as_timeout_error_and_the_task_is_not_left_cancelled() -> None:
    async def scenario() -> tuple[bool, int, str]:
        deadline = Deadline(0.01)
        with pytest.raises(TimeoutError), deadline:
            await asyncio.sleep(10)
        await asyncio.sleep(0)  # the task goes on: no cancellation is pending
        return deadline.expired, asyncio.current_task().cancelling(), "after"

    assert asyncio.run(scenario()) == (True, 0, "after")


def test_a_timeout_error_of_the_guarded_code_is_not_taken_for_the_deadline() -> None:
    async def scenario() -> bool:
        deadline = Deadline(10)
        with pytest.raises(TimeoutError, match="the host's own"), deadline:
            await asyncio.sleep(0)
            raise TimeoutError("the host's own")
        return deadline.expired

    assert asyncio.run(scenario()) is False


def cancelled_from_outside(deadline_seconds: float, hold_loop_seconds: float) -> bool:
    """Cancel a task from outside while it waits in a Deadline's block, after holding the loop
    (without yielding) for ``hold_loop_seconds``; whether the task ends cancelled."""

    async def guarded(started: asyncio.Event) -> None:
        with Deadline(deadline_seconds):
            started.set()
            await asyncio.sleep(10)

    async def scenario() -> bool:
        started = asyncio.Event()
        task = asyncio.create_task(guarded(started))
        await started.wait()
        time.sleep(hold_loop_seconds)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    return asyncio.run(scenario())


def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    assert cancelled_from_outside(deadline_seconds=10, hold_loop_seconds=0) is True


def test_an_outside_cancellation_at_the_deadline_stays_a_cancellation() -> None:
    """Both asked before the task wakes (the loop is held past the deadline, so its timer
    fires on the next turn): the caller's cancellation wins, as with asyncio.timeout."""
    assert cancelled_from_outside(deadline_seconds=0.01, hold_loop_seconds=0.05) is True


def test_entered_on_the_loop_outside_any_task_it_refuses_by_name() -> None:
    loop = asyncio.new_event_loop()
    refusals: list[str] = []

    def callback() -> None:
        try:
            with Deadline(1):
                pass
        except RuntimeError as error:
            refusals.append(str(error))
        loop.stop()

    try:
        loop.call_soon(callback)
        loop.run_forever()
    finally:
        loop.close()
    assert refusals == ["a Deadline guards code running in an asyncio task"]
