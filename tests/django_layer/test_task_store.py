"""The tasks extension's store (``tasks/store.py``) on the test database (SQLite, and
PostgreSQL on the run that sets ``DATABASE_URL``): a task found only with its owner's key,
every status change a compare-and-set that one mover wins, input requests answered once,
cancellation cooperative, a dead worker's lease running out, expired tasks purged."""

from __future__ import annotations

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from beammcp_django.models import McpTask
from beammcp_django.protocol.task_wire import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    TASK_ID,
    WORKING,
)
from beammcp_django.tasks import store as task_store

pytestmark = pytest.mark.django_db

ADA = "model:auth.user:1"
MALLORY = "model:auth.user:2"
LEASE = timedelta(seconds=30)
CONFIRM = {"method": "elicitation/create", "params": {"message": "Sure?"}}


def new_task(owner: str = ADA, ttl_ms: int | None = 60_000) -> McpTask:
    return task_store.create(
        owner, "slow_compute", {"seconds": 1}, ttl_ms=ttl_ms, poll_interval_ms=500
    )


def status(task: McpTask) -> str:
    return McpTask.objects.get(pk=task.pk).status


def test_a_task_is_created_working_with_an_unguessable_id_and_found_by_its_owner_only():
    task = new_task()
    assert TASK_ID.fullmatch(task.task_id) and len(task.task_id) >= 43
    assert task_store.find(task.task_id, ADA) == task
    assert task_store.find(task.task_id, MALLORY) is None
    assert task_store.find("no-such-task-id-at-all", ADA) is None
    shown = task_store.view_of(task).created()
    assert shown["status"] == WORKING and shown["ttlMs"] == 60_000
    assert "slow_compute" not in str(shown) and "seconds" not in str(shown)


def test_an_expired_task_is_found_by_nobody_and_purged():
    expired = new_task(ttl_ms=1)
    kept = new_task(ttl_ms=None)
    McpTask.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - LEASE)
    assert task_store.find(expired.task_id, ADA) is None
    assert task_store.purge_expired() == 1
    assert list(McpTask.objects.values_list("pk", flat=True)) == [kept.pk]


def test_a_status_change_is_a_compare_and_set_that_the_second_mover_loses():
    task = new_task()
    assert task_store.move(task.task_id, [WORKING], COMPLETED, result={"content": []})
    assert not task_store.move(task.task_id, [WORKING], FAILED)
    assert status(task) == COMPLETED
    with pytest.raises(ValueError):
        task_store.move(task.task_id, [COMPLETED], WORKING)  # terminal is terminal


@pytest.mark.django_db(transaction=True)
def test_of_many_threads_racing_to_end_one_task_exactly_one_wins():
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"] == ":memory:":
        pytest.skip("an in-memory SQLite database is one connection's own")
    task = new_task()
    start = threading.Barrier(8)
    won: list[bool] = []

    def racer(ending: str) -> None:
        try:
            start.wait()
            won.append(task_store.move(task.task_id, [WORKING], ending))
        finally:
            connection.close()

    threads = [
        threading.Thread(target=racer, args=(COMPLETED if n % 2 else CANCELLED,)) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(won) == [False] * 7 + [True]


def test_input_requests_are_answered_once_and_other_keys_ignored_unread():
    task = new_task()
    assert task_store.claim(task.task_id, lease=LEASE, max_attempts=3) is not None
    assert task_store.ask(task.task_id, {"first": CONFIRM, "second": CONFIRM}, "two questions")
    found = task_store.find(task.task_id, ADA)
    assert found.status == INPUT_REQUIRED and found.lease_until is None
    assert set(task_store.view_of(found).detailed()["inputRequests"]) == {"first", "second"}

    assert task_store.answer(task.task_id, MALLORY, {"first": {"action": "accept"}}) is None
    unread = {"unknown-key": {"ignored": True}}
    assert task_store.answer(task.task_id, ADA, unread) is False
    assert task_store.answer(task.task_id, ADA, {"first": {"action": "accept"}}) is False
    partial = task_store.find(task.task_id, ADA)
    assert partial.status == INPUT_REQUIRED and set(partial.input_requests) == {"second"}
    # Answered already: ignored, the first answer kept.
    assert task_store.answer(task.task_id, ADA, {"first": {"action": "decline"}}) is False
    assert task_store.answer(task.task_id, ADA, {"second": {"action": "accept"}}) is True
    resumed = task_store.find(task.task_id, ADA)
    assert resumed.status == WORKING and resumed.input_requests == {}
    assert resumed.input_responses == {
        "first": {"action": "accept"},
        "second": {"action": "accept"},
    }
    assert task_store.claim(task.task_id, lease=LEASE, max_attempts=3) is not None
    with pytest.raises(ValueError, match="issued before"):
        task_store.ask(task.task_id, {"first": CONFIRM})


def test_cancellation_is_cooperative_and_a_finished_task_stays_finished():
    running, waiting, done = new_task(), new_task(), new_task()
    for task in (running, waiting, done):
        task_store.claim(task.task_id, lease=LEASE, max_attempts=3)
    task_store.ask(waiting.task_id, {"confirm": CONFIRM})
    task_store.finish(done.task_id, result={"content": [{"type": "text", "text": "42"}]})

    assert task_store.request_cancel(running.task_id, MALLORY) is False
    for task in (running, waiting, done):
        assert task_store.request_cancel(task.task_id, ADA) is True
    assert status(running) == WORKING  # the attempt sees it when it ends
    assert status(waiting) == CANCELLED  # nothing was running
    assert status(done) == COMPLETED
    assert task_store.finish(running.task_id, result={"content": []}) == CANCELLED
    assert status(running) == CANCELLED


def test_a_failed_attempt_carries_its_json_rpc_error():
    task = new_task()
    task_store.claim(task.task_id, lease=LEASE, max_attempts=3)
    error = {"code": -32603, "message": "the job's protocol error"}
    assert task_store.finish(task.task_id, error=error) == FAILED
    detailed = task_store.view_of(task_store.find(task.task_id, ADA)).detailed()
    assert detailed["error"] == error and "result" not in detailed
    assert detailed["statusMessage"] == "the job's protocol error"


def test_a_dead_workers_lease_runs_out_and_its_attempts_are_bounded():
    task = new_task()
    first = task_store.claim(task.task_id, lease=LEASE, max_attempts=2)
    assert first is not None and first.attempt == 1
    assert task_store.claim(task.task_id, lease=LEASE, max_attempts=2) is None  # held
    assert task_store.heartbeat(task.task_id, 1, LEASE) == task_store.GO_ON
    assert task_store.stale() == []
    # The worker is killed: nothing renews its lease, which runs out.
    McpTask.objects.filter(pk=task.pk).update(lease_until=timezone.now() - LEASE)
    assert task_store.stale() == [task.task_id]
    second = task_store.claim(task.task_id, lease=LEASE, max_attempts=2)
    assert second is not None and second.attempt == 2
    assert task_store.heartbeat(task.task_id, 1, LEASE) == task_store.LOST  # the first's
    task_store.request_cancel(task.task_id, ADA)
    assert task_store.heartbeat(task.task_id, 2, LEASE) == task_store.CANCEL
    McpTask.objects.filter(pk=task.pk).update(cancel_requested=False)
    McpTask.objects.filter(pk=task.pk).update(lease_until=timezone.now() - LEASE)
    assert task_store.claim(task.task_id, lease=LEASE, max_attempts=2) is None
    assert status(task) == FAILED
    assert task_store.finish(task.task_id, result={"content": []}) is None  # lost its lease
    assert task_store.heartbeat(task.task_id, 2, LEASE) == task_store.LOST


def test_a_cancelled_task_is_never_claimed_and_live_tasks_are_counted_per_owner():
    task = new_task()
    other = new_task(MALLORY)
    assert task_store.at_bound(ADA, 1) and task_store.at_bound(MALLORY, 1)
    assert not task_store.at_bound(ADA, 2)
    task_store.request_cancel(task.task_id, ADA)
    assert task_store.claim(task.task_id, lease=LEASE, max_attempts=3) is None
    assert status(task) == CANCELLED
    assert not task_store.at_bound(ADA, 1)
    assert status(other) == WORKING


def test_the_purge_command_deletes_the_expired_tasks_and_says_how_many():
    expired, kept = new_task(ttl_ms=1), new_task(ttl_ms=None)
    McpTask.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - LEASE)
    out = io.StringIO()
    call_command("mcp_tasks", "purge", stdout=out)
    assert out.getvalue() == "purged 1 expired task(s)\n"
    assert list(McpTask.objects.values_list("pk", flat=True)) == [kept.pk]


def test_the_purge_command_names_a_store_it_cannot_reach_and_fails():
    """A real fault: the table is gone (dropped in this test's transaction, rolled back)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {McpTask._meta.db_table}")
    with pytest.raises(CommandError) as refused:
        call_command("mcp_tasks", "purge", stdout=io.StringIO())
    message = str(refused.value)
    assert message.startswith("the task store cannot be reached: ")
    assert message.endswith(("OperationalError", "ProgrammingError"))
