"""A project that has not run ``migrate``: its server says so once, with the command, rather
than on every flush interval, and writes the counts it kept once the table exists."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.connectome.test_store_processes import calls, echo_count
from tests.http.mcphttp_support import manage, server_env, start_server

pytestmark = pytest.mark.slow


def test_a_server_whose_project_never_ran_migrate_says_once_to_run_it_and_keeps_its_counts(
    tmp_path: Path,
):
    env = {**server_env(tmp_path), "BEAMMCP_TEST_FLUSH_SECONDS": "0.2"}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'never-migrated.sqlite3'}"
    server = start_server("mcp_serve", env, tmp_path)
    advice = "run `python manage.py migrate`"
    try:
        calls(server.port, 3)
        deadline = time.monotonic() + 10
        while advice not in server.log_tail():
            assert time.monotonic() < deadline, server.log_tail()
            time.sleep(0.05)
        time.sleep(1.0)  # five more intervals, each of them a failed flush
        manage(env, "migrate", "--noinput", "-v", "0")
        deadline = time.monotonic() + 10
        while echo_count(env) < 3:  # the counts kept in the process, written once it can
            assert time.monotonic() < deadline, server.log_tail()
            time.sleep(0.1)
    finally:
        server.stop()
    log = server.log_path.read_text()
    assert log.count(advice) == 1, log
    assert "the table beammcp_django_observededge does not exist" in log
    # The missing table is never reported as a plain flush failure. A flush that meets the
    # SQLite write lock `migrate` holds while it runs beside the server is one, and is
    # retried: the counts written above show it was.
    failures = [line for line in log.splitlines() if "flush failed" in line]
    assert all("database is locked" in line for line in failures), failures
    # mcp_serve names the unapplied migrations as it starts, as runserver does.
    assert "unapplied migration(s)" in log
