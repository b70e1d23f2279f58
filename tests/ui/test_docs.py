"""``docs/apps.md`` executed as written: its ``mcp.py``, template, style and ``tests.py``
written where the page names them in a project beside the sample's settings, then
``manage.py check`` and ``python manage.py test forecast_views`` run there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_pages import bash, blocks, project_beside_sample, run_app_tests, write_app_files

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "apps.md"


def test_the_page_s_view_is_declared_checked_and_tested_as_written(tmp_path):
    page = blocks(PAGE)
    env = project_beside_sample(tmp_path, "forecast_views")
    assert write_app_files(page, tmp_path, "forecast_views") == [
        "forecast_views/mcp.py",
        "forecast_views/static/forecast_views/city_card.css",
        "forecast_views/templates/forecast_views/city_card.html",
        "forecast_views/tests.py",
    ]
    checked = bash("python manage.py check", tmp_path, env)
    assert checked.returncode == 0, checked.stderr
    run_app_tests(page, tmp_path, env, 3)
