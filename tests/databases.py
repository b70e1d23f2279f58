"""The database a test run uses, and fresh ones for the server processes its tests start.

A run uses the database ``DATABASE_URL`` names, as the sample settings do: unset, SQLite;
``tests/run.sh`` runs the ``orm``-marked tests a second time with it naming PostgreSQL.
Server processes need an empty database of their own (a test counts the rows its server
wrote): a SQLite file in the test's directory, or on PostgreSQL a new database on the same
server, dropped when the run ends. ``rows`` reads one back the same way on either.

``postgres_url`` is the server ``tests/run.sh`` started (``BEAMMCP_TEST_POSTGRES_URL``), for
the tests that need PostgreSQL whatever the run's database is: without it they skip, and in
CI (``CI=true``) they fail, since CI must not pass with PostgreSQL missing.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_SCHEMES = ("postgres", "postgresql", "pgsql")
# The databases this process created, dropped at the end of the run (tests/conftest.py).
_created: list[str] = []


def run_database_url() -> str | None:
    """The run's ``DATABASE_URL`` (None: the sample's SQLite default)."""
    return os.environ.get("DATABASE_URL") or None


def is_postgres(url: str | None) -> bool:
    return url is not None and urlsplit(url).scheme in POSTGRES_SCHEMES


def postgres_url() -> str:
    """The PostgreSQL ``tests/run.sh`` started; skips without one, fails in CI."""
    url = os.environ.get("BEAMMCP_TEST_POSTGRES_URL")
    if url:
        return url
    reason = "needs PostgreSQL: tests/run.sh starts one and sets BEAMMCP_TEST_POSTGRES_URL"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run it", pytrace=False)
    pytest.skip(reason)


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def create_postgres_database(
    url: str, template: str | None = None, *, dropped_at_the_end: bool = True
) -> str:
    """A new database on the server ``url`` names (its role needs CREATEDB), empty or a copy
    of the database ``template`` names; its URL. This process drops it when the run ends,
    unless told another will (``dropped_at_the_end=False``)."""
    import psycopg
    from psycopg import sql

    name = f"beammcp_server_{uuid.uuid4().hex[:16]}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        source = urlsplit(template).path.lstrip("/")
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(source))
    with psycopg.connect(url, autocommit=True) as database:
        database.execute(statement)
    created = with_database(url, name)
    if dropped_at_the_end:
        _created.append(created)
    return created


def fresh_database_url(directory: Path, *, dropped_at_the_end: bool = True) -> str:
    """An empty database for a group of server processes, on the run's kind of database."""
    url = run_database_url()
    if is_postgres(url):
        assert url is not None
        return create_postgres_database(url, dropped_at_the_end=dropped_at_the_end)
    return f"sqlite:///{directory / 'db.sqlite3'}"


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    """Every row ``query`` returns from the database ``url`` names (SQLite or PostgreSQL)."""
    if is_postgres(url):
        import psycopg

        with psycopg.connect(url) as database:
            return [tuple(row) for row in database.execute(query).fetchall()]
    import sqlite3

    with sqlite3.connect(url.removeprefix("sqlite:///")) as database:
        return database.execute(query).fetchall()


def sessions_opened(url: str) -> int:
    """How many sessions PostgreSQL has opened for the database ``url`` names, asked from
    the server's ``postgres`` database (so the asking is not counted). PostgreSQL counts a
    session when it starts; a server's figure is complete once its backends have ended."""
    name = urlsplit(url).path.lstrip("/")
    ((count,),) = rows(
        with_database(url, "postgres"),
        f"SELECT sessions FROM pg_stat_database WHERE datname = '{name}'",
    )
    return int(count)


def connected_sessions(url: str) -> int:
    """How many sessions are connected to the database ``url`` names right now."""
    name = urlsplit(url).path.lstrip("/")
    ((count,),) = rows(
        with_database(url, "postgres"),
        f"SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{name}'",
    )
    return int(count)


def wait_for_no_sessions(url: str, timeout: float = 10.0) -> None:
    """Until no session is connected to the database ``url`` names (its clients ended);
    fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (connected := connected_sessions(url)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not connected, f"{connected} session(s) still on {url} after {timeout} s"


def drop_created_databases() -> None:
    """Drop every database this process created."""
    while _created:
        drop_postgres_database(_created.pop())


def drop_postgres_database(url: str) -> None:
    """Drop the database ``url`` names, if it exists (FORCE: a killed server may hold it),
    from its server's ``postgres`` database."""
    import psycopg
    from psycopg import sql

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(with_database(url, "postgres"), autocommit=True) as database:
        database.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


DEPLOYMENT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "deployment.md"
SETTING_MARK = "<!-- the production DATABASES setting: executed by tests and bench/orm.py -->"


COMMANDS_MARK = "<!-- the production commands: executed by tests -->"


def _marked_block(mark: str, fence: str) -> str:
    text = DEPLOYMENT_PAGE.read_text(encoding="utf-8")
    _, marked, after = text.partition(mark)
    assert marked, f"{DEPLOYMENT_PAGE.name} lost the block marked {mark}"
    _, opened, block = after.partition(fence + "\n")
    assert opened, f"{DEPLOYMENT_PAGE.name}: no {fence} block after {mark}"
    return block.partition("\n```")[0] + "\n"


def documented_setting() -> str:
    """The Python block after ``SETTING_MARK`` on the deployment page, as written there: a
    ``DATABASES = ...`` for a settings module that has django-environ's ``env``."""
    return _marked_block(SETTING_MARK, "```python")


def documented_commands() -> list[list[str]]:
    """The shell commands after ``COMMANDS_MARK`` on the deployment page, split as a shell
    would split them."""
    return [shlex.split(line) for line in _marked_block(COMMANDS_MARK, "```").splitlines()]
