"""``docs/handles.md`` executed as written: its ``mcp.py`` and ``tests.py`` written where the
page names them in a project beside the sample's settings, then ``manage.py check`` and
``python manage.py test field_notes`` run there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_pages import bash, blocks, project_beside_sample, run_app_tests, write_app_files

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "handles.md"


def test_the_page_s_handles_are_declared_checked_and_tested_as_written(tmp_path):
    page = blocks(PAGE)
    env = project_beside_sample(tmp_path, "field_notes")
    written = write_app_files(page, tmp_path, "field_notes")
    assert written == ["field_notes/mcp.py", "field_notes/tests.py"]
    checked = bash("python manage.py check", tmp_path, env)
    assert checked.returncode == 0, checked.stderr
    run_app_tests(page, tmp_path, env, 3)
