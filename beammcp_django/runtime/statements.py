"""Statements the package runs on every request of a kind, built by the ORM once for each
database connection and then sent as they are, with each call's values.

Why: Django builds a query's SQL anew on every call, and on the tasks' hot paths building
costs far more than the query itself: reading one task by its id and owner took 506 µs
through a queryset against 31 µs on the cursor, a row count 222 µs (SQLite, 2026-12-07,
2,000 calls in one process). A poll (``tasks/get``) is one such query, making a task three.

What stays the ORM's: the SQL (its quoting, placeholders, its backend's dialect), each
value prepared as the field prepares it (``get_db_prep_value``, ``get_db_prep_save``: a
datetime for SQLite, JSON), each column converted back as the queryset converts it (the
compiler's converters: SQLite's datetimes, ``JSONField``), rows made into instances by
``Model.from_db``, and the connection's cursor, so the query is observed, logged under
``DEBUG`` and wrapped (``execute_wrapper``) as any other. A statement is built from the
values of its first call and checked then: the parameters the ORM placed must be those
values, prepared, in the order the statement names their fields. A Django that placed them
otherwise fails there, loudly, rather than sending a value to the wrong column.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from django.db import connections, models, router
from django.db.models.query import ModelIterable
from django.db.models.sql import InsertQuery, UpdateQuery

M = TypeVar("M", bound=models.Model)


class StatementBuildError(RuntimeError):
    """The ORM placed a statement's parameters otherwise than it declares."""


class _Built:
    """One statement as one connection sends it."""

    def __init__(self, sql: str, compiler: Any = None, converters: Any = None) -> None:
        self.sql = sql
        self.compiler = compiler
        self.converters = converters
        self.attnames: list[str] = []


# Where a connection keeps the statements built for it: on the connection object itself (a
# thread's own), so they go with it. A table keyed weakly by connection would keep each one
# alive through its own entry (a built select holds its compiler, which holds the connection).
_BUILT_ON_CONNECTION = "_beammcp_statements"


class _Statement(Generic[M]):
    """What the three kinds share: the model, the fields of the parameters, and the built
    statements each connection keeps, by statement and shape."""

    def __init__(self, model: type[M], fields: Sequence[str]) -> None:
        self.model = model
        self.fields = [model._meta.get_field(name) for name in fields]

    def _parameters(self, values: Sequence[Any], connection: Any) -> list[Any]:
        return [
            field.get_db_prep_value(value, connection, prepared=False)
            for field, value in zip(self.fields, values, strict=True)
        ]

    def _held(self, connection: Any, shape: Hashable) -> _Built | None:
        kept: dict[tuple[Any, Hashable], _Built] | None = connection.__dict__.get(
            _BUILT_ON_CONNECTION
        )
        return None if kept is None else kept.get((self, shape))

    def _keep(self, connection: Any, shape: Hashable, built: _Built) -> _Built:
        kept = connection.__dict__.setdefault(_BUILT_ON_CONNECTION, {})
        kept[self, shape] = built
        return built

    def _check(self, placed: Sequence[Any], expected: list[Any], sql: str) -> None:
        if len(placed) != len(expected) or not all(map(_same, placed, expected)):
            raise StatementBuildError(
                f"the ORM placed the parameters of {sql[:120]!r} otherwise than the statement "
                f"declares ({', '.join(field.name for field in self.fields)})"
            )


def _same(placed: Any, expected: Any) -> bool:
    """Whether the ORM placed ``expected`` where it placed ``placed``: equal values, or two
    wrappers of one type that define no equality (a driver's adapter, psycopg's ``Jsonb``)."""
    return placed == expected or (
        type(placed) is type(expected) and type(placed).__eq__ is object.__eq__
    )


class Select(_Statement[M]):
    """``build(*values, **shape)``: the queryset (of the model's rows, or a ``values_list``)
    whose filters take ``values``, in the order of ``fields``; ``shape`` holds what is
    written into the SQL itself (a slice's bounds), one statement built for each."""

    def __init__(
        self, model: type[M], build: Callable[..., models.QuerySet[M]], fields: Sequence[str]
    ) -> None:
        super().__init__(model, fields)
        self.build = build

    def rows(self, *values: Any, **shape: Any) -> list[Any]:
        """The rows: the model's instances, or a ``values_list``'s tuples."""
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        key = tuple(sorted(shape.items()))
        built = self._held(connection, key) or self._make(connection, key, values, shape)
        with connection.cursor() as cursor:
            cursor.execute(built.sql, self._parameters(values, connection))
            found = cursor.fetchall()
        compiler = built.compiler
        if built.converters:
            found = list(compiler.apply_converters(found, built.converters))
        if not built.attnames:
            return [tuple(row) for row in found]
        return [self.model.from_db(alias, built.attnames, row) for row in found]

    def _make(
        self, connection: Any, key: Hashable, values: Sequence[Any], shape: dict[str, Any]
    ) -> _Built:
        queryset = self.build(*values, **shape)
        compiler = queryset.query.get_compiler(connection=connection)
        sql, placed = compiler.as_sql()
        self._check(placed, self._parameters(values, connection), sql)
        selected = [column for column, _, _ in compiler.select[: compiler.col_count]]
        built = _Built(sql, compiler, compiler.get_converters(selected))
        if queryset._iterable_class is ModelIterable:
            built.attnames = [column.target.attname for column in selected]
            if built.attnames != [field.attname for field in self.model._meta.concrete_fields]:
                raise StatementBuildError(f"{sql[:120]!r} does not select every column")
        return self._keep(connection, key, built)


class Update(_Statement[M]):
    """``UPDATE`` of the rows ``where`` names: ``sets`` (field names) to the first values,
    the filter's fields (``where``, field names) taking the rest."""

    def __init__(self, model: type[M], sets: Sequence[str], where: Sequence[str]) -> None:
        super().__init__(model, [*sets, *where])
        self.sets = list(sets)
        self.where = list(where)

    def run(self, *values: Any) -> int:
        """How many rows it changed."""
        connection = connections[router.db_for_write(self.model)]
        built = self._held(connection, None) or self._make(connection, values)
        with connection.cursor() as cursor:
            cursor.execute(built.sql, self._parameters(values, connection))
            return cursor.rowcount

    def _make(self, connection: Any, values: Sequence[Any]) -> _Built:
        count = len(self.sets)
        query = UpdateQuery(self.model)
        query.add_q(models.Q(**dict(zip(self.where, values[count:], strict=True))))
        query.add_update_values(dict(zip(self.sets, values[:count], strict=True)))
        sql, placed = query.get_compiler(connection=connection).as_sql()
        self._check(placed, self._parameters(values, connection), sql)
        return self._keep(connection, None, _Built(sql))


class Insert(_Statement[M]):
    """``INSERT`` of one instance with every concrete column given (a primary key the model
    does not generate): what ``Model.objects.create`` sends for it, returning nothing."""

    def __init__(self, model: type[M]) -> None:
        names = [field.name for field in model._meta.concrete_fields]
        super().__init__(model, names)
        if any(field.db_returning for field in self.fields):
            raise StatementBuildError(f"{model.__name__} has a column the database makes")

    def run(self, instance: M) -> M:
        connection = connections[router.db_for_write(self.model)]
        built = self._held(connection, None) or self._make(connection, instance)
        with connection.cursor() as cursor:
            cursor.execute(built.sql, self._saved(instance, connection))
        instance._state.adding = False
        instance._state.db = connection.alias
        return instance

    def _saved(self, instance: M, connection: Any) -> list[Any]:
        return [
            field.get_db_prep_save(field.pre_save(instance, True), connection)
            for field in self.fields
        ]

    def _make(self, connection: Any, instance: M) -> _Built:
        query = InsertQuery(self.model)
        query.insert_values(self.fields, [instance])
        [(sql, placed)] = query.get_compiler(connection=connection).as_sql()
        self._check(placed, self._saved(instance, connection), sql)
        return self._keep(connection, None, _Built(sql))
