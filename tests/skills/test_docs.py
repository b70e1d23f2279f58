"""``docs/skills.md`` executed as written: its folder's shell block, its ``mcp.py`` and
``tests.py`` written where the page names them in a project beside the sample's settings,
``python manage.py test field_notes`` run there, and the verifying script run against the
sample's ``mcp_serve``, printing what the page shows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.docs_pages import bash, blocks, project_beside_sample, reader_env, run_app_tests
from tests.http.mcphttp_support import start_server

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "skills.md"


def test_the_page_s_skills_are_declared_gated_and_tested_as_written(tmp_path):
    page = blocks(PAGE)
    env = project_beside_sample(tmp_path, "field_notes")
    made = bash(page["sh files"], tmp_path, env)
    assert made.returncode == 0, made.stderr
    for path in ("field_notes/mcp.py", "field_notes/tests.py"):
        (tmp_path / path).write_text(page[f"python {path}"])
    run_app_tests(page, tmp_path, env, 3)
    md = tmp_path / "field_notes/skills/recording-observations/SKILL.md"
    assert md.read_text().startswith("---\nname: recording-observations\n")


def test_the_verifying_script_prints_what_the_page_shows(tmp_path):
    page = blocks(PAGE)
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="sample_project.settings")
    env["MCPHTTP_RECORD_DIR"] = str(tmp_path)  # read by ServerProcess; nothing writes it
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    server = start_server("mcp_serve", env, tmp_path)
    try:
        (tmp_path / "verify_skills.py").write_text(page["python verify_skills.py"])
        reader = reader_env(tmp_path)
        reader["MCP_URL"] = f"http://127.0.0.1:{server.port}/mcp"
        verified = bash(page["sh verify"], tmp_path, reader)
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout == page["text output"]
    finally:
        server.stop()
