"""Where the tasks extension's tasks live: the ``McpTask`` table, in the project's database.

Every change of a task's status is one ``UPDATE ... WHERE status IN (...)``: a
compare-and-set that the database decides, so of two workers (or a worker and a
``tasks/cancel``) racing to move one task, exactly one wins and the other learns it lost.
What reads or changes more than the status (an answer to an input request) runs in one
transaction holding the row. A task is always looked up with its owner's key: another
principal's task id is answered exactly as one that does not exist.

A running attempt holds a lease (``lease_until``): a worker that dies (``kill -9``) stops
renewing it, and once it runs out another claim may take the task again, up to the attempts
the caller allows; a task past them fails. Attempts count the runs that did not end as they
should, since the task last waited for input. The store decides nothing else: the runner says
when to claim, finish or ask for input.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, router, transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from beammcp_django import notify
from beammcp_django.models import McpTask, McpTaskOwner
from beammcp_django.protocol.task_wire import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    TERMINAL,
    WORKING,
    TaskView,
    may_move,
)
from beammcp_django.runtime.statements import Insert, Select, Update

logger = logging.getLogger("beammcp_django.tasks")

LIVE = (WORKING, INPUT_REQUIRED)

# The statements of the requests that poll a task and make one, built once a connection
# (``runtime.statements``: the ORM's own building cost more than the queries).
_FIND = Select(
    McpTask,
    lambda task_id, owner, now: (
        McpTask.objects.filter(task_id=task_id)
        .filter(owner=owner)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .order_by()[:1]
    ),
    ("task_id", "owner", "expires_at"),
)
# The owner's ``bound``-th live task, if it has that many: the bound reached.
_AT_BOUND = Select(
    McpTask,
    lambda owner, working, waiting, *, bound: (
        McpTask.objects.filter(owner=owner, status__in=(working, waiting))
        .order_by()
        .values_list("pk")[bound - 1 : bound]
    ),
    ("owner", "status", "status"),
)
_LOCK_OWNER = Update(McpTaskOwner, sets=("locked_at",), where=("owner",))
_INSERT = Insert(McpTask)


def view_of(task: McpTask) -> TaskView:
    """What the client may see of ``task`` (never its arguments, owner or lease)."""
    return TaskView(
        task_id=task.task_id,
        status=task.status,
        created_at=task.created_at,
        updated_at=task.updated_at,
        ttl_ms=task.ttl_ms,
        poll_interval_ms=task.poll_interval_ms,
        status_message=task.status_message,
        input_requests=task.input_requests,
        result=task.result,
        error=task.error,
    )


def create(
    owner: str,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    ttl_ms: int | None,
    poll_interval_ms: int,
    scopes: Iterable[str] | None = None,
    client_capabilities: Mapping[str, Any] | None = None,
    input_responses: Mapping[str, Any] | None = None,
    state: Any = None,
) -> McpTask:
    """A new working task, committed when this returns unless a transaction is open (then
    with it: the extension has a task durably created before ``CreateTaskResult`` is
    sent). ``input_responses`` are answers the request gathered before the task was made:
    their keys count as issued."""
    now = timezone.now()
    gathered = dict(input_responses or {})
    task = McpTask(
        task_id=secrets.token_urlsafe(32),
        owner=owner,
        tool=tool,
        arguments=dict(arguments),
        scopes=None if scopes is None else sorted(scopes),
        client_capabilities=dict(client_capabilities or {}),
        input_responses=gathered,
        issued_keys=list(gathered),
        request_state=state,
        status=WORKING,
        created_at=now,
        updated_at=now,
        ttl_ms=ttl_ms,
        expires_at=None if ttl_ms is None else now + timedelta(milliseconds=ttl_ms),
        poll_interval_ms=poll_interval_ms,
    )
    return _INSERT.run(task)


def create_within(
    owner: str, bound: int, tool: str, arguments: Mapping[str, Any], **made: Any
) -> McpTask | None:
    """``create``, unless ``owner`` already has ``bound`` live tasks: then None. Atomic
    across processes and machines: the count and the insert run in one transaction that
    first writes the owner's ``McpTaskOwner`` row, so a second call of the same owner waits
    at that write (PostgreSQL's row lock, SQLite's write lock) until the first commits, and
    then counts its task. Counting first and inserting after was a race (130 calls at
    concurrency 10 admitted 102 of a bound of 100). Within a transaction already open (the
    runner's, which enqueues the task's run in it) it is part of that one, no savepoint."""
    alias = router.db_for_write(McpTask)
    with transaction.atomic(using=alias, savepoint=False):
        now = timezone.now()
        if not _LOCK_OWNER.run(now, owner):
            try:  # in a savepoint: a racing first call may insert it
                with transaction.atomic(using=alias):
                    McpTaskOwner.objects.create(owner=owner, locked_at=now)
            except IntegrityError:
                _LOCK_OWNER.run(now, owner)
        if at_bound(owner, bound):
            return None
        return create(owner, tool, arguments, **made)


def at_bound(owner: str, bound: int) -> bool:
    """Whether ``owner`` has ``bound`` tasks (or more) not yet terminal: the bound on tasks
    per principal, reached."""
    return bool(_AT_BOUND.rows(owner, WORKING, INPUT_REQUIRED, bound=bound))


def find(task_id: str, owner: str) -> McpTask | None:
    """The task of that id and owner, unless it expired; None for any other id."""
    found = _FIND.rows(task_id, owner, timezone.now())
    return found[0] if found else None


def move(task_id: str, from_statuses: Iterable[str], to: str, **fields: Any) -> bool:
    """Move the task to ``to`` if its status is still one of ``from_statuses``: True when
    this call moved it, False when it was already elsewhere (another mover won)."""
    sources = [status for status in from_statuses if may_move(status, to)]
    if not sources:
        raise ValueError(f"no status of {sorted(from_statuses)} may move to {to!r}")
    updated = McpTask.objects.filter(task_id=task_id, status__in=sources).update(
        status=to, updated_at=timezone.now(), **fields
    )
    if updated != 1:
        return False
    if notify.layer_is_shared():
        transaction.on_commit(lambda: announce(task_id))
    return True


def announce(task_id: str) -> None:
    """Tell the listen streams watching the task where it stands now: its ``DetailedTask``,
    published on the shared channel layer once the move committed. A hint that may be lost
    (a publication that fails is logged and dropped); ``tasks/get`` is the truth."""
    task = McpTask.objects.filter(task_id=task_id).first()
    if task is None:
        return
    event = {"kind": "task", "taskId": task_id, "task": view_of(task).detailed()}
    try:
        notify.publish(event)
    except Exception:
        logger.exception("MCP task %.8s…: its status notification was not published", task_id)


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one attempt of a task: the task as claimed, and the attempt's
    number (1 for the first)."""

    task: McpTask
    attempt: int


def claim(task_id: str, *, lease: timedelta, max_attempts: int) -> Claim | None:
    """Take the working task for one attempt, if no live lease holds it. None when it is
    not working, is held, or has been cancelled meanwhile (then it is moved to cancelled).
    A task whose attempts are spent fails instead: its last worker died, ``max_attempts``
    times."""
    now = timezone.now()
    with transaction.atomic():
        task = (
            McpTask.objects.select_for_update()
            .filter(task_id=task_id, status=WORKING)
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
            .first()
        )
        if task is None:
            return None
        if task.cancel_requested:
            move(task_id, [WORKING], CANCELLED, lease_until=None)
            return None
        if task.attempts >= max_attempts:
            move(
                task_id,
                [WORKING],
                FAILED,
                lease_until=None,
                status_message="the task's worker stopped before it finished",
                error={"code": -32603, "message": "the task's worker stopped before it finished"},
            )
            return None
        task.attempts += 1
        task.lease_until = now + lease
        task.updated_at = now
        task.save(update_fields=["attempts", "lease_until", "updated_at"])
    return Claim(task, task.attempts)


# How many of the fairest waiting tasks one worker tries to claim before it gives up (each
# another worker may have taken first).
_CANDIDATES = 8


def waiting(now: datetime) -> Any:
    """The working tasks no live attempt holds (new, answered, or whose worker died), the
    fairest first: their owner served longest ago (never, first), then the oldest."""
    served = McpTaskOwner.objects.filter(owner=OuterRef("owner")).values("served_at")[:1]
    return (
        McpTask.objects.filter(status=WORKING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        .annotate(owner_served=Subquery(served))
        .order_by(F("owner_served").asc(nulls_first=True), "created_at")
    )


def claim_next(*, lease: timedelta, max_attempts: int) -> Claim | None:
    """Claim the fairest waiting task (``waiting``) and mark its owner served now: what a
    worker runs, whichever task's enqueueing woke it. Each task made runnable enqueues one
    run, so there are never fewer runs than waiting tasks; a run that finds none ends.
    First in, first out let one principal's backlog of long tasks hold every worker while
    another's short one waited behind all of it."""
    for task_id in waiting(timezone.now()).values_list("task_id", flat=True)[:_CANDIDATES]:
        # One transaction: a claim is never committed without its owner marked served, nor
        # lost to a failure of that mark (its lease and an attempt spent for nothing).
        with transaction.atomic():
            claimed = claim(task_id, lease=lease, max_attempts=max_attempts)
            if claimed is not None:
                served = timezone.now()
                McpTaskOwner.objects.filter(owner=claimed.task.owner).update(served_at=served)
        if claimed is not None:
            return claimed
    return None


# What a running attempt learns from its heartbeat (``heartbeat``).
GO_ON = "go_on"
CANCEL = "cancel"  # the owner asked to cancel: the attempt should stop
LOST = "lost"  # the task is no longer working: this attempt's outcome will be dropped


def heartbeat(
    task_id: str, attempt: int, lease: timedelta, status_message: str | None = None
) -> str:
    """Extend a running attempt's lease (and write the status message it reported, if any),
    and say whether it should go on: ``CANCEL`` once the owner asked, ``LOST`` when the task
    is no longer this attempt's (it ended, or the lease ran out and a later attempt took
    it)."""
    held = McpTask.objects.filter(task_id=task_id, status=WORKING, attempts=attempt)
    fields: dict[str, Any] = {"lease_until": timezone.now() + lease}
    if status_message is not None:
        fields.update(status_message=status_message, updated_at=timezone.now())
    if not held.update(**fields):
        return LOST
    return CANCEL if held.filter(cancel_requested=True).exists() else GO_ON


def stale(now: datetime | None = None) -> list[str]:
    """The working tasks no live attempt holds: a lease that ran out (its worker died)."""
    return list(
        McpTask.objects.filter(status=WORKING, lease_until__lte=now or timezone.now())
        .order_by("updated_at")
        .values_list("task_id", flat=True)
    )


def release_stale(task_id: str) -> bool:
    """Clear the lease a dead worker left, so the task's next claim may take it: True for
    the one caller that cleared it (which enqueues the run; others racing it do not)."""
    return (
        McpTask.objects.filter(
            task_id=task_id, status=WORKING, lease_until__lte=timezone.now()
        ).update(lease_until=None)
        == 1
    )


def request_cancel(task_id: str, owner: str) -> bool:
    """Record the owner's wish to cancel (cooperative: a running attempt sees it). A task
    waiting for input has no attempt running and is cancelled at once; a terminal one is
    left as it is. False when no such task is the owner's."""
    with transaction.atomic():
        task = McpTask.objects.select_for_update().filter(task_id=task_id, owner=owner).first()
        if task is None:
            return False
        if task.status in TERMINAL:
            return True
        task.cancel_requested = True
        task.save(update_fields=["cancel_requested"])
        if task.status == INPUT_REQUIRED:
            move(task_id, [INPUT_REQUIRED], CANCELLED, input_requests={})
        return True


def ask(task_id: str, requests: Mapping[str, Any], state: Any = None, message: str = "") -> bool:
    """The running attempt needs input: the task waits in input_required with ``requests``
    outstanding (each key new in the task's life), ``state`` kept for the next run, and the
    attempt's lease released. A task the owner asked to cancel meanwhile is cancelled."""
    with transaction.atomic():
        task = McpTask.objects.select_for_update().filter(task_id=task_id, status=WORKING).first()
        if task is None:
            return False
        if task.cancel_requested:
            return move(task_id, [WORKING], CANCELLED, lease_until=None)
        reused = set(requests) & set(task.issued_keys)
        if reused:
            raise ValueError(f"input request keys issued before in this task: {sorted(reused)}")
        return move(
            task_id,
            [WORKING],
            INPUT_REQUIRED,
            input_requests=dict(requests),
            issued_keys=[*task.issued_keys, *requests],
            request_state=state,
            status_message=message,
            lease_until=None,
            attempts=0,  # this run ended as it should: the next run's attempts count anew
        )


def answer(task_id: str, owner: str, responses: Mapping[str, Any]) -> bool | None:
    """Accept the responses to outstanding requests; every other key (never issued, already
    answered, superseded) is ignored unread. True when the last outstanding request was
    answered and the task is working again (its runner must enqueue it), False when it still
    waits or was not waiting, None when no such task is the owner's."""
    with transaction.atomic():
        task = McpTask.objects.select_for_update().filter(task_id=task_id, owner=owner).first()
        if task is None:
            return None
        if task.status != INPUT_REQUIRED:
            return False
        accepted = {key: responses[key] for key in task.input_requests if key in responses}
        if not accepted:
            return False
        outstanding = {k: v for k, v in task.input_requests.items() if k not in accepted}
        gathered = {**task.input_responses, **accepted}
        if outstanding:
            task.input_requests = outstanding
            task.input_responses = gathered
            task.updated_at = timezone.now()
            task.save(update_fields=["input_requests", "input_responses", "updated_at"])
            return False
        return move(
            task_id,
            [INPUT_REQUIRED],
            WORKING,
            input_requests={},
            input_responses=gathered,
            status_message="",
        )


def finish(
    task_id: str,
    *,
    result: Mapping[str, Any] | None = None,
    error: Mapping[str, Any] | None = None,
    status_message: str | None = None,
) -> str | None:
    """End the running attempt: completed with ``result``, or failed with the JSON-RPC
    ``error``; cancelled instead when the owner asked meanwhile. ``status_message``, the
    run's last progress message when it was not written yet, is the one the task keeps (a
    failure's keeps the error's message). The status it ended in, or None when the task was
    no longer working (this attempt lost its lease)."""
    with transaction.atomic():
        task = McpTask.objects.select_for_update().filter(task_id=task_id, status=WORKING).first()
        if task is None:
            return None
        if task.cancel_requested:
            ending: dict[str, Any] = {"status": CANCELLED}
        elif error is not None:
            ending = {"status": FAILED, "error": dict(error)}
            ending["status_message"] = str(error.get("message", ""))[:500]
        else:
            ending = {"status": COMPLETED, "result": dict(result or {})}
        if status_message is not None and "status_message" not in ending:
            ending["status_message"] = status_message
        status = ending.pop("status")
        move(
            task_id,
            [WORKING],
            status,
            lease_until=None,
            input_responses={},
            request_state=None,
            **ending,
        )
        return status


def purge_expired(now: datetime | None = None) -> int:
    """Delete every task past its TTL, whatever its status: how many."""
    deleted, _ = McpTask.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
