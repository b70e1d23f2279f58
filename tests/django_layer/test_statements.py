"""Statements built by the ORM once a connection (``runtime/statements.py``), on the test
database (SQLite, and PostgreSQL on the run that sets ``DATABASE_URL``): their rows are the
queryset's, value for value; their writes read back through the ORM as its own would; they
are built once and sent through the connection's cursor (seen by ``execute_wrapper`` and
``DEBUG``'s log); a declaration whose parameters the ORM places otherwise is refused when
first built."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from beammcp_django.models import McpTask, McpTaskOwner
from beammcp_django.runtime.statements import Insert, Select, StatementBuildError, Update

pytestmark = pytest.mark.django_db


def a_task(task_id: str, owner: str = "ada", **fields: Any) -> McpTask:
    now = timezone.now()
    made = {
        "task_id": task_id,
        "owner": owner,
        "tool": "slow_compute",
        "arguments": {"seconds": 1, "nested": [1, "two", None]},
        "status": "working",
        "created_at": now,
        "updated_at": now,
        "expires_at": now + timedelta(minutes=5),
        "ttl_ms": 300_000,
        "poll_interval_ms": 500,
        **fields,
    }
    return McpTask(**made)


def every_value(task: McpTask) -> dict[str, Any]:
    return {field.attname: getattr(task, field.attname) for field in McpTask._meta.concrete_fields}


def test_an_insert_reads_back_through_the_orm_as_the_orms_own_row_does():
    made = every_value(a_task("", scopes=None, result={"content": []}))
    ours = Insert(McpTask).run(McpTask(**{**made, "task_id": "ours"}))
    McpTask.objects.create(**{**made, "task_id": "orms"})
    read_ours, read_orms = McpTask.objects.get(pk="ours"), McpTask.objects.get(pk="orms")
    assert {**every_value(read_ours), "task_id": ""} == {**every_value(read_orms), "task_id": ""}
    assert read_ours.arguments == {"seconds": 1, "nested": [1, "two", None]}
    # A None in a nullable JSON field is SQL's NULL, as the ORM writes it, not JSON's null.
    assert McpTask.objects.filter(pk="ours", scopes__isnull=True, error__isnull=True).exists()
    assert not ours._state.adding and ours._state.db == "default"


def test_a_select_answers_the_querysets_rows_value_for_value_and_is_built_once():
    for number in range(3):
        McpTask.objects.create(**every_value(a_task(f"t{number}", error={"code": number})))
    McpTask.objects.create(**every_value(a_task("gone", expires_at=timezone.now())))
    built: list[tuple[str, str]] = []

    def build(task_id: str, owner: str, now: Any) -> Any:
        built.append((task_id, owner))
        return (
            McpTask.objects.filter(task_id=task_id)
            .filter(owner=owner)
            .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
            .order_by()[:1]
        )

    find = Select(McpTask, build, ("task_id", "owner", "expires_at"))
    for number in range(3):
        [found] = find.rows(f"t{number}", "ada", timezone.now())
        assert every_value(found) == every_value(McpTask.objects.get(pk=f"t{number}"))
        assert found._state.adding is False and found._state.db == "default"
    assert find.rows("t1", "mallory", timezone.now()) == []
    assert find.rows("gone", "ada", timezone.now()) == []  # expired
    assert built == [("t0", "ada")]  # built by the first call, sent as built after


def test_a_values_list_select_answers_tuples_and_each_shape_is_built_apart():
    for number in range(4):
        McpTask.objects.create(**every_value(a_task(f"t{number}")))

    def nth(owner: str, *, at: int) -> Any:
        return McpTask.objects.filter(owner=owner).order_by("pk").values_list("pk")[at : at + 1]

    select = Select(McpTask, nth, ("owner",))
    assert select.rows("ada", at=0) == [("t0",)]
    assert select.rows("ada", at=3) == [("t3",)]
    assert select.rows("ada", at=4) == []


def test_an_update_changes_the_rows_it_names_and_says_how_many():
    earlier = timezone.now() - timedelta(hours=1)
    for owner in ("ada", "mallory"):
        McpTaskOwner.objects.create(owner=owner, locked_at=earlier)
    lock = Update(McpTaskOwner, sets=("locked_at",), where=("owner",))
    now = timezone.now()
    assert lock.run(now, "ada") == 1
    assert lock.run(now, "nobody") == 0
    assert McpTaskOwner.objects.get(pk="ada").locked_at == now
    assert McpTaskOwner.objects.get(pk="mallory").locked_at == earlier


def test_statements_go_through_the_connections_cursor_and_its_wrappers():
    seen: list[str] = []

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        return execute(sql, params, many, context)

    select = Select(McpTask, lambda owner: McpTask.objects.filter(owner=owner), ("owner",))
    with connection.execute_wrapper(wrapper), CaptureQueriesContext(connection) as logged:
        Insert(McpTask).run(a_task("seen"))
        assert [task.pk for task in select.rows("ada")] == ["seen"]
    assert len(seen) == 2 and seen[0].startswith("INSERT") and seen[1].startswith("SELECT")
    assert len(logged.captured_queries) == 2


def test_a_declaration_the_orm_places_otherwise_is_refused_when_first_built():
    # filter(a=..., b=...) places its parameters in the order of the names, not as written.
    mixed = Select(
        McpTask,
        lambda task_id, owner: McpTask.objects.filter(task_id=task_id, owner=owner),
        ("task_id", "owner"),
    )
    with pytest.raises(StatementBuildError, match="otherwise than the statement declares"):
        mixed.rows("t0", "ada")
    partial = Select(
        McpTask, lambda owner: McpTask.objects.filter(owner=owner).only("pk"), ("owner",)
    )
    with pytest.raises(StatementBuildError, match="every column"):
        partial.rows("ada")
