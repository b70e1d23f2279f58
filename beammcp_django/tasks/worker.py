"""One run of an MCP task, as a task of Django's Tasks framework: what a worker process
(django-tasks-db's ``db_worker``, an RQ worker) executes, never the serving process.

A run claims the task (``task_store.claim``: a lease, an attempt counted), calls the host's
tool through the core (``Server.run_task``) on a server of its own, with no call deadline (a
task exists to outlive one), and records what the call came to: a terminal status, or
``input_required`` with the tool's input requests, which ends the run and frees the worker.
While the tool runs, a heartbeat thread renews the lease, writes the latest progress message
as the task's ``statusMessage``, and sets ``context.cancelled`` once the owner asked to
cancel. With ``TASKS['WORKER_CONCURRENCY']`` above 1, one job runs a shift of that many runs
at once (``tasks.shift``), each claimed as a slot frees. Imported only where tasks are
served: the ``run_task`` object is made with the configured backend.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Coroutine
from datetime import timedelta
from functools import lru_cache
from typing import Any

from django.apps import apps
from django.db import connections

from beammcp_django.conf import forget_on_change, task_settings
from beammcp_django.protocol.context import CancelFlag
from beammcp_django.protocol.errors import INTERNAL_ERROR
from beammcp_django.protocol.principal import KeyedPrincipal
from beammcp_django.protocol.server import Server
from beammcp_django.protocol.task_wire import INPUT_REQUIRED, TaskCall, TaskOutcome
from beammcp_django.tasks import store as task_store
from beammcp_django.tasks.backend import tasks_framework
from beammcp_django.tasks.shift import Shift
from beammcp_django.transports.threads import DEFAULT_THREADS

logger = logging.getLogger("beammcp_django.tasks")


framework: Any = tasks_framework()


@framework.task(backend=task_settings()["BACKEND"])
def run_task(task_id: str) -> None:
    """What the backend's workers run, one job per task made runnable (``task_id``): one run
    of the fairest task waiting (``run_once``), which may be another principal's; with
    ``TASKS['WORKER_CONCURRENCY']`` above 1, a shift of that many runs at once."""
    concurrency = task_settings()["WORKER_CONCURRENCY"]
    if concurrency == 1:
        run_once()
    else:
        Shift(concurrency, claim_fairest, run_claimed, on_exit=connections.close_all).run()


def run_once() -> str | None:
    """Run the fairest waiting task once: the status it was left in, or None when this run
    moved nothing (no task waiting, or its lease was lost)."""
    claim = claim_fairest()
    return None if claim is None else run_claimed(claim)


def claim_fairest() -> task_store.Claim | None:
    """The fairest waiting task, claimed for one attempt (``task_store.claim_next``)."""
    values = task_settings()
    lease = timedelta(seconds=values["LEASE_SECONDS"])
    return task_store.claim_next(lease=lease, max_attempts=values["MAX_ATTEMPTS"])


def run_claimed(claim: task_store.Claim) -> str | None:
    """Run one claimed attempt: the status it left its task in, or None when its lease was
    lost meanwhile (its outcome dropped)."""
    record = claim.task
    task_id = record.task_id
    found, principal = owner_principal(record.owner)
    if not found:
        return task_store.finish(task_id, error=_internal("the task's owner no longer exists"))
    call = TaskCall(
        tool=record.tool,
        arguments=record.arguments,
        owner=record.owner,
        principal=principal,
        scopes=None if record.scopes is None else frozenset(record.scopes),
        client_capabilities=record.client_capabilities,
        input_responses=record.input_responses,
        state=record.request_state,
    )
    lease = timedelta(seconds=task_settings()["LEASE_SECONDS"])
    heartbeat = Heartbeat(task_id, claim.attempt, lease)
    heartbeat.start()
    try:
        outcome = task_loop.run(
            task_server().run_task(
                call, cancelled=heartbeat.cancel, emit=heartbeat.progress, progress_token=task_id
            )
        )
    finally:
        unwritten = heartbeat.stop()
    if heartbeat.lost:
        logger.warning("MCP task %.8s…: its lease ran out while it ran; outcome dropped", task_id)
        return None
    return settle(task_id, outcome, unwritten)


def settle(task_id: str, outcome: TaskOutcome, last_message: str | None = None) -> str | None:
    """Record what a run came to, within the bounds of ``BEAMMCP['TASKS']``; the run's last
    progress message, when the heartbeat had not written it yet, with a result."""
    values = task_settings()
    if outcome.input_requests is not None:
        if len(outcome.input_requests) > values["MAX_INPUT_REQUESTS"]:
            return task_store.finish(
                task_id,
                error=_internal(
                    f"the task asked {len(outcome.input_requests)} inputs at once, more than "
                    f"BEAMMCP['TASKS']['MAX_INPUT_REQUESTS'] ({values['MAX_INPUT_REQUESTS']})"
                ),
            )
        try:
            asked = task_store.ask(task_id, outcome.input_requests, outcome.state)
        except ValueError as reused:  # a key issued before: the tool broke the extension's rule
            logger.error("MCP task %.8s…: %s", task_id, reused)
            return task_store.finish(task_id, error=_internal("the task reused an input key"))
        return INPUT_REQUIRED if asked else None
    result = outcome.result
    if result is not None:
        size = len(json.dumps(result, separators=(",", ":")).encode())
        if size > values["MAX_RESULT_BYTES"]:
            return task_store.finish(
                task_id,
                error=_internal(
                    f"the task's result is {size} bytes, more than "
                    f"BEAMMCP['TASKS']['MAX_RESULT_BYTES'] ({values['MAX_RESULT_BYTES']})"
                ),
            )
    return task_store.finish(
        task_id, result=result, error=outcome.error, status_message=last_message
    )


def owner_principal(owner: str) -> tuple[bool, Any]:
    """(whether the owner still exists, the principal the tool sees): a Django model
    instance reloaded by its key (``protocol/principal.py``), no principal for "", and a
    ``KeyedPrincipal`` for any other key (the caller's handles are its own there too)."""
    if not owner:
        return True, None
    kind, _, rest = owner.partition(":")
    if kind != "model":
        return True, KeyedPrincipal(owner)
    label, _, pk = rest.rpartition(":")
    try:
        model = apps.get_model(label)
    except (LookupError, ValueError):
        return False, None
    instance = model._default_manager.filter(pk=pk).first()
    return instance is not None, instance


def _internal(message: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": message}


class Heartbeat:
    """A running attempt's lease kept, its progress written, its cancellation seen: a
    thread beating every third of the lease (at most each second) while the tool runs."""

    def __init__(self, task_id: str, attempt: int, lease: timedelta) -> None:
        self.task_id = task_id
        self.attempt = attempt
        self.lease = lease
        self.cancel = CancelFlag()
        self.lost = False
        self._message: str | None = None
        self._stopped = threading.Event()
        # A daemon: a worker forced to stop (its second SIGTERM) is not held by a beating run.
        self._thread = threading.Thread(
            target=self._beat, name="beammcp-task-heartbeat", daemon=True
        )
        self._every = min(1.0, lease.total_seconds() / 3)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> str | None:
        """Stop beating; the last progress message reported and not yet written (it beats
        at most once a second: a run's last message usually comes after its last beat)."""
        self._stopped.set()
        self._thread.join()
        return self._message

    def progress(self, notification: dict[str, Any]) -> None:
        """``context.progress`` inside the task: its message becomes the statusMessage."""
        message = notification.get("params", {}).get("message")
        if isinstance(message, str):
            self._message = message[:500]

    def _beat(self) -> None:
        try:
            while not self._stopped.wait(self._every):
                message, self._message = self._message, None
                said = task_store.heartbeat(self.task_id, self.attempt, self.lease, message)
                if said == task_store.CANCEL:
                    self.cancel.set()
                elif said == task_store.LOST:
                    self.lost = True
                    self.cancel.set()
                    return
        except Exception:
            logger.exception("MCP task %.8s…: the heartbeat failed", self.task_id)
        finally:
            connections.close_all()  # this thread's own


class TaskLoop:
    """The event loop a worker process runs its tasks' calls on: one, in a thread of its own,
    made at the first run (and again in a child forked after it, as RQ forks per job)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(
                    target=self._loop.run_forever, name="beammcp-task-loop", daemon=True
                ).start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def _forget(self) -> None:
        self._loop = None
        self._lock = threading.Lock()


task_loop = TaskLoop()


@lru_cache(maxsize=1)
def task_server() -> Server:
    """The server a worker calls tools through: the HTTP server's catalog and options, with
    no call deadline, and a thread for each sync tool a shift runs at once."""
    from beammcp_django.runtime.host_threads import threads_for_host
    from beammcp_django.servers.factory import make_server

    slots = max(task_settings()["WORKER_CONCURRENCY"], DEFAULT_THREADS)
    return make_server(stdio=False, deadline=False, run_sync=threads_for_host(slots))


forget_on_change(task_server.cache_clear)
