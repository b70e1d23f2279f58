"""Migrated databases for the server processes tests start, at the cost of one migration per
settings a run.

``manage.py migrate`` costs a Django process and every migration, 2 to 4 s of CPU, and most
server groups need the same schema: the first group of a run to need the schema of a
settings module (and its switches) has it migrated into a template, as a user would, and
every group gets a copy (SQLite's backup, or PostgreSQL's ``CREATE DATABASE ... TEMPLATE``).

The templates live in a folder of the run's. Under pytest-xdist the controller makes it and
names it in ``SHARED_FOLDER`` for its workers (``share_templates``), each template is made by
the first worker to need it, under a lock, and the controller removes them all when every
worker has ended (``remove_templates``); a run without workers does all three itself.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tests.databases import (
    create_postgres_database,
    drop_postgres_database,
    fresh_database_url,
    is_postgres,
    wait_for_no_sessions,
    with_database,
)
from tests.support import manage

SHARED_FOLDER = "BEAMMCP_TEST_TEMPLATES"
# The environment variables the suite's settings modules read (``DJANGO_SETTINGS_MODULE``
# among them): what decides which apps, hence which migrations, a process has.
SETTINGS_VARIABLES = ("DJANGO_", "BEAMMCP_", "OBSERVE_", "CONFORMANCE_")
# The folder this process made (it removes it), and the templates it has looked up.
_own: list[Path] = []
_known: dict[str, str] = {}


def share_templates() -> None:
    """Make the run's template folder and name it to the processes started from now on."""
    _own.append(Path(tempfile.mkdtemp(prefix="beammcp-migrated-")))
    os.environ[SHARED_FOLDER] = str(_own[0])


def remove_templates() -> None:
    """Drop the templates of the folder this process made, and the folder."""
    while _own:
        folder = _own.pop()
        for record in folder.glob("*/url"):
            url = record.read_text()
            if is_postgres(url):
                drop_postgres_database(url)
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(SHARED_FOLDER) == str(folder):
            del os.environ[SHARED_FOLDER]
    _known.clear()


def migrated_database_url(directory: Path, env: Mapping[str, str]) -> str:
    """A database holding every migration of the settings ``env`` names, for a group of
    server processes, on the run's kind of database: a copy of the run's template for those
    settings (the SQLite file in ``directory``)."""
    template = _template(env)
    if is_postgres(template):
        # Asked from the server's own database: the template may have no session as it is copied.
        return create_postgres_database(with_database(template, "postgres"), template=template)
    target = directory / "db.sqlite3"
    source, copy = sqlite3.connect(template.removeprefix("sqlite:///")), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    return f"sqlite:///{target}"


def _template(env: Mapping[str, str]) -> str:
    """The URL of the run's template for the settings ``env`` names: made by the first
    process to ask, under the folder's lock; its URL recorded there for the others."""
    settings = sorted((k, v) for k, v in env.items() if k.startswith(SETTINGS_VARIABLES))
    key = hashlib.sha256(repr(settings).encode()).hexdigest()[:16]
    if key in _known:
        return _known[key]
    if SHARED_FOLDER not in os.environ:
        share_templates()
    folder = Path(os.environ[SHARED_FOLDER]) / key
    folder.mkdir(exist_ok=True)
    record = folder / "url"
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            url = fresh_database_url(folder, dropped_at_the_end=False)
            manage({**env, "DATABASE_URL": url}, "migrate", "--noinput", "-v", "0")
            if is_postgres(url):
                wait_for_no_sessions(url)  # a template may have no session when copied
            record.write_text(url)
    _known[key] = record.read_text()
    return _known[key]
