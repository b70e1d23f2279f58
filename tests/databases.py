"""The database a test run uses, and fresh ones for the server processes its tests start.

A run uses the database ``DATABASE_URL`` names, as the sample settings do: unset, SQLite;
``tests/run.sh`` runs the ``orm``-marked tests a second time with it naming PostgreSQL.
Server processes need an empty database of their own (a test counts the rows its server
wrote): a SQLite file in the test's directory, or on PostgreSQL a new database on the same
server, dropped when the run ends. ``rows`` reads one back the same way on either.

Migrating costs a Django process and every migration, 2 to 4 s; most server groups need the
same schema. ``migrated_database_url`` runs ``manage.py migrate`` once per settings module
(and its switches) in a process, into a template, and gives each group a copy of it.

``postgres_url`` is the server ``tests/run.sh`` started (``BEAMMCP_TEST_POSTGRES_URL``), for
the tests that need PostgreSQL whatever the run's database is: without it they skip, and in
CI (``CI=true``) they fail, since CI must not pass with PostgreSQL missing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.support import manage

POSTGRES_SCHEMES = ("postgres", "postgresql", "pgsql")
# The databases this process created, dropped at the end of the run (tests/conftest.py).
_created: list[tuple[str, str]] = []
# Migrated templates by what the migration depends on (settings_key), and the folder of the
# SQLite ones, removed at the end of the run with the databases.
_templates: dict[tuple[tuple[str, str], ...], str] = {}
_template_dir: list[Path] = []
# The environment variables the suite's settings modules read (``DJANGO_SETTINGS_MODULE``
# among them): what decides which apps, hence which migrations, a process has.
SETTINGS_VARIABLES = ("DJANGO_", "BEAMMCP_", "OBSERVE_", "CONFORMANCE_")


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


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def create_postgres_database(url: str, template: str | None = None) -> str:
    """A new database on the server ``url`` names (its role needs CREATEDB), empty or a copy
    of the database ``template`` names; its URL."""
    import psycopg
    from psycopg import sql

    name = f"beammcp_server_{uuid.uuid4().hex[:16]}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        source = urlsplit(template).path.lstrip("/")
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(source))
    with psycopg.connect(url, autocommit=True) as database:
        database.execute(statement)
    _created.append((url, name))
    return _with_database(url, name)


def fresh_database_url(directory: Path) -> str:
    """An empty database for a group of server processes, on the run's kind of database."""
    url = run_database_url()
    if is_postgres(url):
        assert url is not None
        return create_postgres_database(url)
    return f"sqlite:///{directory / 'db.sqlite3'}"


def settings_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """What a migration under ``env`` depends on: its settings module and switches."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(SETTINGS_VARIABLES)))


def migrated_database_url(directory: Path, env: Mapping[str, str]) -> str:
    """A database holding every migration of the settings ``env`` names, for a group of
    server processes, on the run's kind of database: a copy of a template that
    ``manage.py migrate`` made once in this process (SQLite's backup into ``directory``, or
    PostgreSQL's ``CREATE DATABASE ... TEMPLATE``)."""
    key = settings_key(env)
    if key not in _templates:
        if not _template_dir:
            _template_dir.append(Path(tempfile.mkdtemp(prefix="beammcp-migrated-")))
        folder = _template_dir[0] / str(len(_templates))
        folder.mkdir()
        template = fresh_database_url(folder)
        manage({**env, "DATABASE_URL": template}, "migrate", "--noinput", "-v", "0")
        if is_postgres(template):
            wait_for_no_sessions(template)  # a template may have no session when copied
        _templates[key] = template
    template = _templates[key]
    if is_postgres(template):
        return create_postgres_database(template, template=template)
    target = directory / "db.sqlite3"
    source, copy = sqlite3.connect(template.removeprefix("sqlite:///")), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    return f"sqlite:///{target}"


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
        _with_database(url, "postgres"),
        f"SELECT sessions FROM pg_stat_database WHERE datname = '{name}'",
    )
    return int(count)


def connected_sessions(url: str) -> int:
    """How many sessions are connected to the database ``url`` names right now."""
    name = urlsplit(url).path.lstrip("/")
    ((count,),) = rows(
        _with_database(url, "postgres"),
        f"SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{name}'",
    )
    return int(count)


def wait_for_no_sessions(url: str, timeout: float = 10.0) -> None:
    """Until no session is connected to the database ``url`` names (its servers stopped),
    at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while connected_sessions(url) and time.monotonic() < deadline:
        time.sleep(0.1)


def drop_created_databases() -> None:
    """Drop every database this process created (FORCE: a killed server may hold one), and
    the SQLite templates."""
    import psycopg
    from psycopg import sql

    _templates.clear()
    while _template_dir:
        shutil.rmtree(_template_dir.pop(), ignore_errors=True)

    while _created:
        url, name = _created.pop()
        with psycopg.connect(url, autocommit=True) as database:
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
