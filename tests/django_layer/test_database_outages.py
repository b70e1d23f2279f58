"""Which database errors are an outage of the database (``database_outages.is_outage``):
the connection's, answered 503 naming the database; not the query's own, which stay what
they are. ``tests/http/test_part_outages.py`` stops a real PostgreSQL."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import IntegrityError, InterfaceError, OperationalError

from beammcp_django.runtime.database_outages import is_outage


class DriverError(Exception):
    """A driver's error carrying a SQLSTATE, as psycopg's do (``sqlstate``)."""

    def __init__(self, sqlstate: str | None) -> None:
        super().__init__("from the driver")
        self.sqlstate = sqlstate


def raised_by_django(error: Exception, cause: BaseException | None) -> Exception:
    error.__cause__ = cause  # Django re-raises the driver's error so: `raise ... from it`
    return error


@pytest.mark.parametrize(
    ("cause", "outage"),
    [
        (DriverError("08006"), True),  # connection failure
        (DriverError("57P01"), True),  # admin shutdown: the server is going down
        (DriverError(None), True),  # refused before any SQLSTATE
        (DriverError("40P01"), False),  # deadlock detected: the query's
        (DriverError("40001"), False),  # serialization failure: the query's
        (DriverError("57014"), False),  # statement timeout: the query's
        (sqlite3.OperationalError("database is locked"), True),
        (sqlite3.OperationalError("unable to open database file"), True),
        (sqlite3.OperationalError("no such table: beammcp_django_mcptask"), False),
        (None, True),
    ],
)
def test_an_operational_error_is_an_outage_only_when_the_connection_failed(cause, outage):
    assert is_outage(raised_by_django(OperationalError("x"), cause)) is outage


def test_a_closed_connection_is_an_outage_and_a_constraint_never_is():
    assert is_outage(InterfaceError("connection already closed")) is True
    constraint = raised_by_django(IntegrityError("duplicate key"), DriverError("23505"))
    assert is_outage(constraint) is False
