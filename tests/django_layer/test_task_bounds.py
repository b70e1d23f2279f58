"""The bounds of ``BEAMMCP['TASKS']`` as the Django runner and the worker enforce them, on
the test database: tasks one principal may have live, input requests one round may ask, the
bytes of a result, and the rule that an input key is issued once in a task's life. Each
refusal names the setting that bounds it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings

from beammcp_django.models import McpTask
from beammcp_django.protocol.errors import LIMIT_REACHED, ProtocolError
from beammcp_django.protocol.task_wire import FAILED, INPUT_REQUIRED, TaskCall, TaskOutcome
from beammcp_django.tasks import store as task_store
from beammcp_django.tasks.runner import DatabaseTaskRunner
from beammcp_django.tasks.worker import settle

pytestmark = pytest.mark.django_db

ELICIT = {"method": "elicitation/create", "params": {"message": "Sure?"}}


def bounded(**tasks: Any) -> Any:
    return override_settings(BEAMMCP={"TASKS": tasks})


def task_call(owner: str) -> TaskCall:
    return TaskCall(
        tool="seasonal_report",
        arguments={"city": "oslo"},
        owner=owner,
        principal=None,
        scopes=None,
        client_capabilities={},
    )


def running_task() -> str:
    """A task claimed by a worker, its attempt running."""
    task = task_store.create("key:ada", "seasonal_report", {}, ttl_ms=60_000, poll_interval_ms=500)
    assert task_store.claim(task.task_id, lease=timedelta(seconds=30), max_attempts=1)
    return task.task_id


def ended(task_id: str) -> McpTask:
    return McpTask.objects.get(pk=task_id)


def test_a_principal_at_its_live_task_limit_is_refused_by_name_and_others_are_not():
    enqueued: list[str] = []
    runner = DatabaseTaskRunner(run_sync=None, enqueue=enqueued.append)  # type: ignore[arg-type]
    with bounded(PER_PRINCIPAL=2):
        first = runner._start(task_call("key:ada"))
        runner._start(task_call("key:ada"))
        with pytest.raises(ProtocolError) as refused:
            runner._start(task_call("key:ada"))
        assert refused.value.code == LIMIT_REACHED
        assert "BEAMMCP['TASKS']['PER_PRINCIPAL']" in refused.value.message
        runner._start(task_call("key:grace"))  # another principal's count is its own
        # A task that ended no longer counts.
        assert task_store.claim(first.task_id, lease=timedelta(seconds=30), max_attempts=1)
        task_store.finish(first.task_id, result={"content": []})
        runner._start(task_call("key:ada"))
    assert len(enqueued) == 4
    assert McpTask.objects.filter(owner="key:ada").count() == 3


def test_a_result_over_max_result_bytes_fails_the_task_naming_the_bound():
    task_id = running_task()
    big = {"content": [{"type": "text", "text": "x" * 2000}]}
    with bounded(MAX_RESULT_BYTES=1000):
        assert settle(task_id, TaskOutcome(result=big)) == FAILED
    task = ended(task_id)
    assert task.result is None
    assert "MAX_RESULT_BYTES" in task.error["message"] and "x" * 10 not in str(task.error)


def test_more_input_requests_than_max_input_requests_fail_the_task_naming_the_bound():
    task_id = running_task()
    asked = {f"q{n}": ELICIT for n in range(3)}
    with bounded(MAX_INPUT_REQUESTS=2):
        assert settle(task_id, TaskOutcome(input_requests=asked)) == FAILED
    assert "MAX_INPUT_REQUESTS" in ended(task_id).error["message"]


def test_an_input_key_asked_a_second_time_in_a_task_fails_it():
    task_id = running_task()
    assert settle(task_id, TaskOutcome(input_requests={"sure": ELICIT})) == INPUT_REQUIRED
    assert task_store.answer(task_id, "key:ada", {"sure": {"action": "accept"}}) is True
    assert task_store.claim(task_id, lease=timedelta(seconds=30), max_attempts=1)
    assert settle(task_id, TaskOutcome(input_requests={"sure": ELICIT})) == FAILED
    assert ended(task_id).error["message"] == "the task reused an input key"
