"""A task and the job that runs it. With the sample's Tasks backend (django-tasks-db, its
queue in the same database) both are written in one transaction: one commit, and a job that
cannot be written leaves no task behind. With a queue anywhere else the job is sent only once
the task has committed, so a worker never looks for a task that is not there."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import override_settings
from django_tasks_db.models import DBTaskResult

from beammcp_django.conf import task_settings
from beammcp_django.models import McpTask
from beammcp_django.protocol.task_wire import TaskCall
from beammcp_django.tasks import runner as runner_module
from beammcp_django.tasks.backend import queue_shares_database, tasks_framework
from beammcp_django.tasks.runner import DatabaseTaskRunner, enqueue

pytestmark = pytest.mark.django_db(transaction=True)


def task_call() -> TaskCall:
    return TaskCall(
        tool="seasonal_report",
        arguments={"city": "oslo"},
        owner="key:ada",
        principal=None,
        scopes=None,
        client_capabilities={},
    )


def jobs_for(task_id: str) -> int:
    return sum(row.args_kwargs["args"] == [task_id] for row in DBTaskResult.objects.all())


def test_the_sample_s_queue_shares_the_database_and_a_dummy_queue_does_not():
    assert queue_shares_database(task_settings()["BACKEND"])
    dummy = {"BACKEND": f"{tasks_framework().__name__}.backends.dummy.DummyBackend"}
    with override_settings(TASKS={"default": dummy}):
        assert not queue_shares_database("default")


def test_a_task_and_its_job_are_committed_together():
    view = DatabaseTaskRunner(run_sync=None)._start(task_call())  # type: ignore[arg-type]
    assert McpTask.objects.filter(task_id=view.task_id).exists()
    assert jobs_for(view.task_id) == 1


def test_a_job_that_cannot_be_written_leaves_no_task(monkeypatch):
    from django_tasks_db.backend import DatabaseBackend

    def refused(*_: object) -> None:
        raise RuntimeError("the queue refused the job")

    monkeypatch.setattr(DatabaseBackend, "_task_to_db_task", refused)
    with pytest.raises(RuntimeError, match="refused the job"):
        DatabaseTaskRunner(run_sync=None)._start(task_call())  # type: ignore[arg-type]
    assert not McpTask.objects.exists()
    assert not DBTaskResult.objects.exists()


def test_a_queue_elsewhere_is_sent_the_job_only_once_the_task_commits(monkeypatch):
    monkeypatch.setattr(runner_module, "queue_shares_database", lambda alias: False)
    with transaction.atomic():
        enqueue("task-1")
        assert jobs_for("task-1") == 0  # not while the task's transaction is open
    assert jobs_for("task-1") == 1
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue("task-2")
        raise RuntimeError("the task's transaction rolled back")
    assert jobs_for("task-2") == 0
