"""The test process serves MCP in-process too (``servers.get_server()``); its observed
counts are flushed by the tests that need them, on demand. No flush thread: pytest-django
allows database access only from the test's own thread.

Every test that opens the test database (``django_db``) is an ORM test, marked ``orm``
here, so ``tests/run.sh`` runs it a second time on PostgreSQL (tests/databases.py); a test
whose server processes write marks itself.

``BEAMMCP_TEST_LEG`` is the leg's part (tests/run.sh): ``full`` (the default) runs every
test; ``versions``, a later leg's, deselects the ``one_leg`` tests, whose outcome does not
depend on the interpreter or Django release, and runs Hypothesis's smaller profile. Under
pytest-xdist (``-n``) a module's tests stay on one worker, so its module-scoped servers start
once (``ModuleScheduling``; registered only where pytest-xdist is, so ``-p no:xdist`` runs).
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings as hypothesis_settings

from tests import databases, migrated

LEG = os.environ.get("BEAMMCP_TEST_LEG", "full")
LEGS = ("full", "versions")
if LEG not in LEGS:
    raise pytest.UsageError(f"BEAMMCP_TEST_LEG is one of {LEGS}, not {LEG!r}")
# A test asks for ``support.examples(n)``: n on the full leg (100 is Hypothesis's own default
# count), a fifth of it on the later legs, which prove the same properties on another
# interpreter rather than search further.
hypothesis_settings.register_profile("full", max_examples=100)
hypothesis_settings.register_profile("versions", max_examples=20)
hypothesis_settings.load_profile(LEG)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.has_plugin("xdist"):
        config.pluginmanager.register(ModuleScheduling(), "beammcp-module-scheduling")
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        migrated.share_templates()  # pytest-xdist's controller: its workers share them
    if not config.pluginmanager.has_plugin("django"):
        return  # -p no:django: the sans-IO tests, no settings at all
    from django.conf import settings

    settings.BEAMMCP = {**getattr(settings, "BEAMMCP", {}), "CONNECTOME_FLUSH_SECONDS": None}
    # A user made with a password costs 0.8 s of PBKDF2 (2026-12-06, this machine); the
    # tests' users sign in with force_login, so their hashes need no strength (Django's
    # own advice for test settings).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Modules whose tests share nothing but their own processes, each test long: every test may
# run on any worker, so that they end together rather than one after the other.
SPREAD_MODULES = ("tests/conformance/test_official_suite.py",)
# The longest modules, longest first: handed out before the rest, so that no worker starts
# one when the others are nearly done and ends the run alone with it. Measured as the sum of
# each module's test durations (`bash tests/run.sh`, its pytest --durations list, full leg,
# 2026-12-06); a module missing here costs a slower run, never a wrong one.
FIRST_MODULES = (
    "tests/conformance/test_official_suite.py",
    "tests/admin/test_admin_browser.py",
    "tests/tasks/test_sample_tasks.py",
    "tests/quickstart/test_quickstart.py",
    "tests/deployment/test_deployment_database.py",
    "tests/stdio/test_stdio_process.py",
    "tests/interop/test_sdk_oauth.py",
    "tests/stdio/test_stdio_principal.py",
    "tests/protocol/test_properties_wire.py",
    "tests/test_readme_first_command.py",
    "tests/stdio/test_stdio_wire_rules.py",
    "tests/deployment/test_nginx_deployment.py",
)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class ModuleScheduling:
    """pytest-xdist's scheduler by scope, a scope being a module (its classes included), so a
    module-scoped server starts once; but a test of ``SPREAD_MODULES`` is a scope of its own.
    Scopes are handed out in collection order, ``FIRST_MODULES`` moved to the front. A plugin
    of its own rather than a hook of this file: pytest refuses a hook it has no spec for, and
    without pytest-xdist there is none."""

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object:
        from xdist.scheduler import LoadScopeScheduling

        def first(nodeid: str) -> int:
            module = module_of(nodeid)
            return FIRST_MODULES.index(module) if module in FIRST_MODULES else len(FIRST_MODULES)

        class Scheduling(LoadScopeScheduling):
            def __init__(self, config: pytest.Config, log: object) -> None:
                super().__init__(config, log)
                config.option.loadscopereorder = False  # xdist's order, by size, undoes ours

            def _assign_work_unit(self, node: object) -> None:
                # The scopes reordered in place; a worker's collection must keep its own
                # order, since the tests are sent to it as indexes into that collection.
                for scope in sorted(self.workqueue, key=first):
                    self.workqueue.move_to_end(scope)
                super()._assign_work_unit(node)

            def _split_scope(self, nodeid: str) -> str:
                module = module_of(nodeid)
                return nodeid if module in SPREAD_MODULES else module

        return Scheduling(config, log)


def pytest_report_header(config: pytest.Config) -> str:
    url = databases.run_database_url()
    return f"database: {'PostgreSQL' if databases.is_postgres(url) else 'SQLite'} (DATABASE_URL)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("django_db") is not None:
            item.add_marker(pytest.mark.orm)
    lonely = [
        item.nodeid
        for item in items
        if item.get_closest_marker("alone") and not item.get_closest_marker("one_leg")
    ]
    if lonely:  # tests/run.sh runs the `alone` pass on the full leg only
        raise pytest.UsageError(f"a test marked `alone` is `one_leg` too: {lonely}")
    if LEG != "full":
        elsewhere = [item for item in items if item.get_closest_marker("one_leg") is not None]
        if elsewhere:
            config.hook.pytest_deselected(items=elsewhere)
            items[:] = [item for item in items if item.get_closest_marker("one_leg") is None]


@pytest.fixture(autouse=True)
def _no_tidy_outside_database_tests(request: pytest.FixtureRequest) -> None:
    """pytest-django refuses every database access outside a database test, even the look at
    an open connection that the tidy after an async host call makes (async_orm.py); and the
    SQLite test database lives in memory, whose connection Django never closes. So a test
    without the database starts with no tidy due."""
    tracker = sys.modules.get("beammcp_django.runtime.async_orm")  # not imported: nothing is due
    if tracker is not None and request.node.get_closest_marker("django_db") is None:
        tracker.sync_thread_connections.due = False


def pytest_sessionfinish(session: pytest.Session) -> None:
    databases.drop_created_databases()
    migrated.remove_templates()  # the folder's maker's: the controller, or the only process


def pytest_unconfigure(config: pytest.Config) -> None:
    """A flusher started under overridden settings must not flush at exit either."""
    if config.pluginmanager.has_plugin("django"):
        from beammcp_django.connectome.exports import flusher_slot

        flusher_slot.forget()
