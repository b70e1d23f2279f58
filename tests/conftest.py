"""The test process serves MCP in-process too (``servers.get_server()``); its observed
counts are flushed by the tests that need them, on demand. No flush thread: pytest-django
allows database access only from the test's own thread.

Every test that opens the test database (``django_db``) is an ORM test, marked ``orm``
here, so ``tests/run.sh`` runs it a second time on PostgreSQL (tests/databases.py); a test
whose server processes write marks itself.
"""

from __future__ import annotations

import sys

import pytest

from tests import databases


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("django"):
        return  # -p no:django: the sans-IO tests, no settings at all
    from django.conf import settings

    settings.BEAMMCP = {**getattr(settings, "BEAMMCP", {}), "CONNECTOME_FLUSH_SECONDS": None}


def pytest_report_header(config: pytest.Config) -> str:
    url = databases.run_database_url()
    return f"database: {'PostgreSQL' if databases.is_postgres(url) else 'SQLite'} (DATABASE_URL)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("django_db") is not None:
            item.add_marker(pytest.mark.orm)


@pytest.fixture(autouse=True)
def _no_tidy_outside_database_tests(request: pytest.FixtureRequest) -> None:
    """pytest-django refuses every database access outside a database test, even the look at
    an open connection that the tidy after an async host call makes (async_orm.py); and the
    SQLite test database lives in memory, whose connection Django never closes. So a test
    without the database starts with no tidy due."""
    tracker = sys.modules.get("beammcp_django.async_orm")  # not imported: nothing is due
    if tracker is not None and request.node.get_closest_marker("django_db") is None:
        tracker.sync_thread_connections.due = False


def pytest_sessionfinish(session: pytest.Session) -> None:
    databases.drop_created_databases()


def pytest_unconfigure(config: pytest.Config) -> None:
    """A flusher started under overridden settings must not flush at exit either."""
    if config.pluginmanager.has_plugin("django"):
        from beammcp_django.connectome.exports import flusher_slot

        flusher_slot.forget()
