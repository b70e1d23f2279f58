"""``docs/handles.md`` executed as written: its ``mcp.py`` and ``tests.py`` written where the
page names them in a project beside the sample's settings, then ``manage.py check`` and
``python manage.py test field_notes`` run there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.skills.test_docs import bash, blocks, reader_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "handles.md"


def test_the_page_s_handles_are_declared_checked_and_tested_as_written(tmp_path):
    page = blocks(PAGE)
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
    (tmp_path / "docs_settings.py").write_text(
        "from sample_project.settings import *  # noqa: F403\n"
        'INSTALLED_APPS = [*INSTALLED_APPS, "field_notes"]  # noqa: F405\n'
    )
    (tmp_path / "field_notes").mkdir()
    (tmp_path / "field_notes" / "__init__.py").write_text("")
    for path in ("field_notes/mcp.py", "field_notes/tests.py"):
        (tmp_path / path).write_text(page[f"python {path}"])
    env = reader_env(tmp_path)
    checked = bash("python manage.py check", tmp_path, env)
    assert checked.returncode == 0, checked.stderr
    run = bash(page["sh test"], tmp_path, env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Ran 3 tests" in run.stderr and "\nOK" in run.stderr, run.stderr[-2000:]
