"""The tasks extension's wire vocabulary in the core (``protocol/task_wire.py``): the state
diagram, the per-request capability, how a task id and a ``tasks/update`` are read, and the
shapes ``tools/call`` and ``tasks/get`` answer (the extension's schema, and what the official
suite's tasks scenarios hold them to: conformance/tasks-scenarios.md)."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta, timezone
from itertools import product

import pytest

from beammcp_django.protocol.errors import INVALID_PARAMS, MISSING_CLIENT_CAPABILITY, ProtocolError
from beammcp_django.protocol.task_wire import (
    CANCELLED,
    COMPLETED,
    EXTENSION,
    FAILED,
    INPUT_REQUIRED,
    STATUSES,
    TERMINAL,
    WORKING,
    TaskView,
    declares_tasks,
    input_responses_param,
    may_move,
    missing_tasks_capability,
    task_id_param,
)

ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
CREATED = datetime(2026, 12, 2, 10, 30, tzinfo=UTC)


def view(status: str, **extra) -> TaskView:
    return TaskView(
        task_id=secrets.token_urlsafe(32),
        status=status,
        created_at=CREATED,
        updated_at=CREATED + timedelta(seconds=5),
        ttl_ms=3_600_000,
        poll_interval_ms=500,
        **extra,
    )


def test_a_status_moves_only_along_the_extensions_diagram():
    allowed = {(a, b) for a, b in product(STATUSES, repeat=2) if may_move(a, b)}
    assert allowed == {
        (WORKING, INPUT_REQUIRED),
        (INPUT_REQUIRED, WORKING),
        *((WORKING, end) for end in TERMINAL),
        *((INPUT_REQUIRED, end) for end in TERMINAL),
    }
    assert not any(may_move(end, other) for end in TERMINAL for other in STATUSES)
    assert not may_move("paused", WORKING) and not may_move(WORKING, "paused")


@pytest.mark.parametrize(
    ("capabilities", "declared"),
    [
        ({"extensions": {EXTENSION: {}}}, True),
        ({"elicitation": {}, "extensions": {EXTENSION: {"future": 1}}}, True),
        ({}, False),
        ({"extensions": {}}, False),
        ({"extensions": {EXTENSION: True}}, False),
        ({"extensions": [EXTENSION]}, False),
        ({"tasks": {}}, False),  # the 2025-11-25 capability is not the extension
    ],
)
def test_the_extension_is_declared_per_request_by_its_capability(capabilities, declared):
    assert declares_tasks(capabilities) is declared


def test_the_missing_capability_error_names_the_extension_as_the_schema_wants():
    refusal = missing_tasks_capability("tasks/get")
    assert refusal.code == MISSING_CLIENT_CAPABILITY
    assert refusal.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    assert EXTENSION in refusal.message


def test_a_task_id_is_read_or_refused_by_name_without_echoing_it():
    minted = secrets.token_urlsafe(32)
    assert task_id_param({"taskId": minted}) == minted
    for params, why in (
        ({}, "must be a string"),
        ({"taskId": 7}, "must be a string"),
        ({"taskId": "short"}, "not a task id this server issued"),
        ({"taskId": "a" * 129}, "not a task id this server issued"),
        ({"taskId": "<script>alert(1)</script>-padding"}, "not a task id this server issued"),
    ):
        with pytest.raises(ProtocolError) as refused:
            task_id_param(params)
        assert refused.value.code == INVALID_PARAMS
        assert why in refused.value.message
        assert "script" not in refused.value.message


def test_input_responses_are_an_object_whose_values_are_left_unread():
    unread = {"unknown-key": {"ignored": True}, "k1": "not even an ElicitResult"}
    assert input_responses_param({"inputResponses": unread}) == unread
    for params in ({}, {"inputResponses": []}, {"inputResponses": {"k" * 129: {}}}):
        with pytest.raises(ProtocolError) as refused:
            input_responses_param(params)
        assert refused.value.code == INVALID_PARAMS


def test_a_created_task_is_the_task_alone_with_an_empty_content():
    created = view(WORKING, status_message="queued").created()
    assert set(created) == {
        "resultType",
        "taskId",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "pollIntervalMs",
        "content",
    }
    assert created["resultType"] == "task" and created["content"] == []
    assert ISO_8601.fullmatch(created["createdAt"]) and ISO_8601.fullmatch(created["lastUpdatedAt"])
    assert created["createdAt"] == "2026-12-02T10:30:00.000Z"


@pytest.mark.parametrize(
    ("status", "payload", "key"),
    [
        (
            INPUT_REQUIRED,
            {"input_requests": {"confirm": {"method": "elicitation/create"}}},
            "inputRequests",
        ),
        (COMPLETED, {"result": {"content": [], "isError": True}}, "result"),
        (FAILED, {"error": {"code": -32603, "message": "the job failed"}}, "error"),
    ],
)
def test_a_detailed_task_carries_what_its_status_carries_and_nothing_else(status, payload, key):
    everything = {
        "input_requests": {"stale": {"method": "elicitation/create"}},
        "result": {"content": []},
        "error": {"code": -32603, "message": "stale"},
    }
    detailed = view(status, **{**everything, **payload}).detailed()
    carried = {"inputRequests", "result", "error"} & set(detailed)
    assert carried == {key}
    assert detailed[key] == next(iter(payload.values()))
    for quiet in (WORKING, CANCELLED):
        assert not {"inputRequests", "result", "error"} & set(view(quiet, **everything).detailed())


def test_timestamps_are_written_in_utc_and_naive_ones_are_a_bug():
    two_hours_east = timezone(timedelta(hours=2))
    local = TaskView("x" * 16, WORKING, CREATED.astimezone(two_hours_east), CREATED, None, 500)
    assert local.detailed()["createdAt"] == "2026-12-02T10:30:00.000Z"
    assert local.detailed()["ttlMs"] is None
    with pytest.raises(ValueError):
        TaskView("x" * 16, WORKING, datetime(2026, 12, 2), CREATED, None, 500).detailed()
