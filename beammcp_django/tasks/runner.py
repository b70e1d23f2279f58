"""The core's ``TaskRunner`` on the ``McpTask`` table and Django's Tasks framework.

A task is made in the request with its first run enqueued on the configured Tasks backend:
in the same transaction when the backend's queue is rows of the same database
(django-tasks-db, ``backend.queue_shares_database``: one commit writes both, or neither),
else once the task's row is committed; either way a worker never looks for a task that is
not there, and ``tasks/get`` finds it as soon as ``CreateTaskResult`` is sent.
A run ends in a terminal status or in ``input_required``, which frees its worker; the
``tasks/update`` that answers the last outstanding request enqueues the next run. A poll
(``tasks/get``) of a working task whose lease ran out (its worker died) enqueues it again,
as ``manage.py mcp_tasks reap`` does for tasks nobody polls; the attempts are bounded
(``TASKS['MAX_ATTEMPTS']``). Every store call runs on the server's worker threads; a
database that does not answer is ``PartDown`` (``runtime.database_outages``), answered 503.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from beammcp_django.conf import task_settings
from beammcp_django.models import McpTask
from beammcp_django.protocol.context import RunSync
from beammcp_django.protocol.errors import LIMIT_REACHED, ProtocolError
from beammcp_django.protocol.task_wire import WORKING, TaskCall, TaskView
from beammcp_django.runtime.database_outages import in_database
from beammcp_django.tasks import store as task_store
from beammcp_django.tasks.backend import queue_shares_database


def enqueue(task_id: str) -> None:
    """Have a worker run the task: within the transaction that changed it when the queue
    is in the same database (committed with it), else once that transaction commits."""
    from beammcp_django.tasks.worker import run_task  # the Task object needs the framework

    alias = task_settings()["BACKEND"]
    job = run_task.using(backend=alias)
    if queue_shares_database(alias):
        job.enqueue(task_id)
    else:
        transaction.on_commit(lambda: job.enqueue(task_id), using=router.db_for_write(McpTask))


class DatabaseTaskRunner:
    """Tasks in the project's database, run by the workers of its Tasks backend."""

    def __init__(self, run_sync: RunSync, enqueue: Callable[[str], None] = enqueue) -> None:
        self._run_sync = run_sync
        self._enqueue = enqueue

    async def start(self, call: TaskCall) -> TaskView:
        return await self._run_sync(in_database, self._start, call)

    async def get(self, task_id: str, owner: str) -> TaskView | None:
        return await self._run_sync(in_database, self._get, task_id, owner)

    async def update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> bool:
        return await self._run_sync(in_database, self._update, task_id, owner, responses)

    async def cancel(self, task_id: str, owner: str) -> bool:
        return await self._run_sync(in_database, task_store.request_cancel, task_id, owner)

    # -- on a worker thread ---------------------------------------------------------------

    def _start(self, call: TaskCall) -> TaskView:
        with transaction.atomic(using=router.db_for_write(McpTask)):
            return self._started(call)

    def _started(self, call: TaskCall) -> TaskView:
        """The task made and its run enqueued, in one transaction (``_start``): one commit
        where the queue shares the database, which makes a task cost a single wait for the
        disk."""
        values = task_settings()
        record = task_store.create_within(
            call.owner,
            values["PER_PRINCIPAL"],
            call.tool,
            call.arguments,
            ttl_ms=values["TTL_SECONDS"] * 1000,
            poll_interval_ms=values["POLL_INTERVAL_MS"],
            scopes=call.scopes,
            client_capabilities=call.client_capabilities,
            input_responses=call.input_responses,
            state=call.state,
        )
        if record is None:
            raise ProtocolError(
                LIMIT_REACHED,
                f"this caller has {values['PER_PRINCIPAL']} tasks working or waiting for "
                "input, the most it may (BEAMMCP['TASKS']['PER_PRINCIPAL'])",
            )
        self._enqueue(record.task_id)
        return task_store.view_of(record)

    def _get(self, task_id: str, owner: str) -> TaskView | None:
        record = task_store.find(task_id, owner)
        if record is None:
            return None
        lease = record.lease_until
        dead = record.status == WORKING and lease is not None and lease <= timezone.now()
        # Its worker died: run it again (the claim decides a retry or a failure).
        if dead and task_store.release_stale(task_id):
            self._enqueue(task_id)
        return task_store.view_of(record)

    def _update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> bool:
        resumed = task_store.answer(task_id, owner, responses)
        if resumed is None:
            return False
        if resumed:
            self._enqueue(task_id)
        return True


def reap(enqueue: Callable[[str], None] = enqueue) -> int:
    """Run again every working task whose lease ran out (its worker died) and that nobody
    polls: what ``manage.py mcp_tasks reap`` does. How many it enqueued."""
    enqueued = 0
    for task_id in task_store.stale():
        with transaction.atomic():
            if task_store.release_stale(task_id):
                enqueue(task_id)
                enqueued += 1
    return enqueued
