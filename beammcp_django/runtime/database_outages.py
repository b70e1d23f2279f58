"""The project's database as a part the server shares with other processes: what the
package's own use of it (tasks; the connectome store) meets when it stops answering, named
``outages.DATABASE`` (503 over HTTP, the outage logged once, ``transports.outages``).

Only the connection's errors count (``is_outage``): ``InterfaceError`` (a connection closed
under it), and an ``OperationalError`` that is one: PostgreSQL's connection-exception and
operator-intervention classes (SQLSTATE 08, 57P: refused, reset, shutting down), a driver's
failure to connect at all (no SQLSTATE), SQLite's lock waited out or file not opened. A
query's own fault is not an outage: a deadlock, a serialization failure, a statement
timeout, SQLite's missing table (all ``OperationalError`` too), an ``IntegrityError``.
Recovery needs nothing: the broken connection is closed by Django's connection hygiene
around each call (``host_threads``), and the next call connects afresh.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError

from beammcp_django.transports.outages import DATABASE, outages

Value = TypeVar("Value")

DATABASE_DOWN: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)


# SQLite's own words for a database it could not reach in time.
_SQLITE_DOWN = ("database is locked", "unable to open database", "disk I/O error")


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` (one of ``DATABASE_DOWN``) says the database did not answer, rather
    than that the query failed (see the module's docstring)."""
    if isinstance(error, InterfaceError):
        return True
    cause = error.__cause__
    state = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if isinstance(state, str):
        return state.startswith(("08", "57P"))
    if isinstance(cause, sqlite3.Error):
        return str(cause).startswith(_SQLITE_DOWN)
    return True  # refused or reset before any SQLSTATE: the server is not there


def reaching_database() -> AbstractContextManager[None]:
    """Around a use of the database: ``PartDown`` naming it when it does not answer."""
    return outages.reaching(DATABASE, DATABASE_DOWN, is_outage)


def in_database(function: Callable[..., Value], *args: Any) -> Value:
    """``function(*args)``, its database outages named (``reaching_database``): what a
    worker thread runs for the package's own database work."""
    with reaching_database():
        return function(*args)
