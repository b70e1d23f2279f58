"""The project's database as a part the server shares with other processes: what the
package's own use of it (tasks; the connectome store) meets when it stops answering, named
``outages.DATABASE`` (503 over HTTP, the outage logged once, ``transports.outages``).

Only Django's connection-level errors count: ``OperationalError`` (refused, reset, a server
shutting down, SQLite's lock waited out) and ``InterfaceError`` (a connection closed under
it). A query's own fault (an ``IntegrityError``, a ``ProgrammingError``) is not an outage.
Recovery needs nothing: the broken connection is closed by Django's connection hygiene
around each call (``host_calls``), and the next call connects afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError

from beammcp_django.transports.outages import DATABASE, outages

Value = TypeVar("Value")

DATABASE_DOWN: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)


def reaching_database() -> AbstractContextManager[None]:
    """Around a use of the database: ``PartDown`` naming it when it does not answer."""
    return outages.reaching(DATABASE, DATABASE_DOWN)


def in_database(function: Callable[..., Value], *args: Any) -> Value:
    """``function(*args)``, its database outages named (``reaching_database``): what a
    worker thread runs for the package's own database work."""
    with reaching_database():
        return function(*args)
