"""``docs/skills.md`` executed as written: its folder's shell block, its ``mcp.py`` and
``tests.py`` written where the page names them in a project beside the sample's settings,
``python manage.py test field_notes`` run there, and the verifying script run against the
sample's ``mcp_serve``, printing what the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.http.mcphttp_support import start_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "skills.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]+)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(page: Path = PAGE) -> dict[str, str]:
    """A page's fenced blocks tagged with a name (``sh files``, ``python verify_skills.py``),
    by that tag."""
    found: dict[str, str] = {}
    for match in FENCE.finditer(page.read_text(encoding="utf-8")):
        info = match["info"].strip()
        if " " in info:
            assert info not in found, f"two blocks are tagged {info!r}"
            found[info] = match["body"]
    return found


def reader_env(directory: Path) -> dict[str, str]:
    """The reader's shell: this interpreter as ``python``, the project's settings."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    env["DJANGO_SETTINGS_MODULE"] = "docs_settings"
    env["PYTHONPATH"] = os.pathsep.join([str(directory), str(ROOT)])
    env["DATABASE_URL"] = f"sqlite:///{directory / 'db.sqlite3'}"
    return env


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "set -eo pipefail\n" + script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_page_s_skills_are_declared_gated_and_tested_as_written(tmp_path):
    page = blocks()
    (tmp_path / "field_notes").mkdir()
    (tmp_path / "field_notes" / "__init__.py").write_text("")
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
    (tmp_path / "docs_settings.py").write_text(
        "from sample_project.settings import *  # noqa: F403\n"
        'INSTALLED_APPS = [*INSTALLED_APPS, "field_notes"]  # noqa: F405\n'
    )
    env = reader_env(tmp_path)
    made = bash(page["sh files"], tmp_path, env)
    assert made.returncode == 0, made.stderr
    for path in ("field_notes/mcp.py", "field_notes/tests.py"):
        (tmp_path / path).write_text(page[f"python {path}"])
    run = bash(page["sh test"], tmp_path, env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Ran 3 tests" in run.stderr and "\nOK" in run.stderr, run.stderr[-2000:]
    md = tmp_path / "field_notes/skills/recording-observations/SKILL.md"
    assert md.read_text().startswith("---\nname: recording-observations\n")


def test_the_verifying_script_prints_what_the_page_shows(tmp_path):
    page = blocks()
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
