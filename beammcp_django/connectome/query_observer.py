"""The observed graph's database hook: every query a host call runs, as effects on models.

One ``QueryObserver`` is installed as an execute wrapper (Django's documented instrumentation
hook) on every connection this process opens: on each as ``connection_created`` announces
it, and on the connections already open when observing starts. A statement outside a host
call passes through after one context-variable read. Inside one, its text is classified
(``statements.classify``, cached per text and alias) into reads, writes and deletes per
table, each table mapped to its model (``app_label.Model``; a table no model owns, and a
statement the reading does not know, is the alias's raw ``sql``), and counted for the call
(``effect_observer``). The statement is run unchanged; its parameters are never looked at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

from beammcp_django.connectome.core.effect_observer import EffectObserver
from beammcp_django.connectome.core.effects import (
    MODEL_DELETE,
    MODEL_READ,
    MODEL_WRITE,
    SQL,
    Effect,
)
from beammcp_django.connectome.core.statements import DELETE, READ, WRITE, classify
from beammcp_django.protocol.calling import host_call

_EFFECT_OF = {READ: MODEL_READ, WRITE: MODEL_WRITE, DELETE: MODEL_DELETE}
# Statement texts remembered with their effects; the ORM's texts repeat, an IN list of each
# length is a text of its own, so the cache is bounded and then classifies afresh.
_STATEMENT_CACHE_LIMIT = 4096


def model_tables() -> dict[str, str]:
    """Every installed model's table (many-to-many tables included) and its label; a proxy
    shares its concrete model's table and is not its owner."""
    return {
        model._meta.db_table: model._meta.label
        for model in apps.get_models(include_auto_created=True)
        if not model._meta.proxy
    }


class QueryObserver:
    """An execute wrapper counting each host call's statements as effects."""

    def __init__(self, observer: EffectObserver) -> None:
        self.observer = observer
        self._statements: dict[tuple[str, str], tuple[Effect, ...]] = {}
        self._tables: dict[str, str] | None = None

    def __call__(
        self,
        execute: Callable[..., Any],
        sql: str,
        params: Any,
        many: bool,
        context: dict[str, Any],
    ) -> Any:
        call = host_call.get()
        if call is not None:
            # Two frames up: Django's wrapper chain called this one.
            self.observer.count(call, (sql, context["connection"].alias), self._effects, 2)
        return execute(sql, params, many, context)

    def _effects(self, statement: tuple[str, str]) -> tuple[Effect, ...]:
        """A statement's effects on its alias, remembered per text and alias."""
        found = self._statements.get(statement)
        if found is None:
            found = self._classify(*statement)
        return found

    def _classify(self, sql: str, alias: str) -> tuple[Effect, ...]:
        tables = self._tables
        if tables is None:
            tables = self._tables = model_tables()
        effects: dict[Effect, None] = {}
        for action, table in classify(sql if isinstance(sql, str) else str(sql)):
            model = tables.get(table) if table is not None else None
            effect = Effect(_EFFECT_OF[action], model) if model else Effect(SQL, alias)
            effects[effect] = None
        found = tuple(effects)
        if len(self._statements) < _STATEMENT_CACHE_LIMIT:
            self._statements[(sql, alias)] = found
        return found

    # -- installing ---------------------------------------------------------------------------

    def install(self, connection: BaseDatabaseWrapper) -> None:
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.insert(0, self)

    def _created(self, sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
        self.install(connection)

    def start(self) -> None:
        """Wrap every connection from now on, and those this thread has open."""
        connection_created.connect(self._created, weak=False, dispatch_uid=id(self))
        for connection in connections.all(initialized_only=True):
            self.install(connection)

    def stop(self) -> None:
        connection_created.disconnect(dispatch_uid=id(self))
