"""``docs/apps.md`` executed as written: its ``mcp.py``, template, style and ``tests.py``
written where the page names them in a project beside the sample's settings, then
``manage.py check`` and ``python manage.py test forecast_views`` run there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.skills.test_docs import bash, blocks, reader_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "apps.md"


def test_the_page_s_view_is_declared_checked_and_tested_as_written(tmp_path):
    page = blocks(PAGE)
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
    (tmp_path / "docs_settings.py").write_text(
        "from sample_project.settings import *  # noqa: F403\n"
        'INSTALLED_APPS = [*INSTALLED_APPS, "forecast_views"]  # noqa: F405\n'
    )
    (tmp_path / "forecast_views").mkdir()
    (tmp_path / "forecast_views" / "__init__.py").write_text("")
    written = [
        info.split(" ", 1) for info in page if info.split(" ", 1)[1].startswith("forecast_views/")
    ]
    assert sorted(path for _, path in written) == [
        "forecast_views/mcp.py",
        "forecast_views/static/forecast_views/city_card.css",
        "forecast_views/templates/forecast_views/city_card.html",
        "forecast_views/tests.py",
    ]
    for language, path in written:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page[f"{language} {path}"])
    env = reader_env(tmp_path)
    checked = bash("python manage.py check", tmp_path, env)
    assert checked.returncode == 0, checked.stderr
    run = bash(page["sh test"], tmp_path, env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Ran 3 tests" in run.stderr and "\nOK" in run.stderr, run.stderr[-2000:]
