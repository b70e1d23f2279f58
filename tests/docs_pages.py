"""What the tests that execute a docs page as written share: the page's tagged blocks, a
project beside the sample's settings holding the page's app, and the reader's shell."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(?P<info>[^\n`]+)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(page: Path) -> dict[str, str]:
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


def project_beside_sample(directory: Path, app: str) -> dict[str, str]:
    """``directory`` made a project: ``manage.py``, settings that are the sample's plus the
    page's app, the app's empty package; the reader's shell in it."""
    shutil.copy(ROOT / "manage.py", directory / "manage.py")
    (directory / "docs_settings.py").write_text(
        "from sample_project.settings import *  # noqa: F403\n"
        f'INSTALLED_APPS = [*INSTALLED_APPS, "{app}"]  # noqa: F405\n'
    )
    (directory / app).mkdir()
    (directory / app / "__init__.py").write_text("")
    return reader_env(directory)


def write_app_files(page: dict[str, str], directory: Path, app: str) -> list[str]:
    """Every block tagged with a path in ``app`` written there: the paths, sorted."""
    written = []
    for info, body in page.items():
        path = info.split(" ", 1)[1]
        if path.startswith(f"{app}/"):
            target = directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body)
            written.append(path)
    return sorted(written)


def run_app_tests(page: dict[str, str], directory: Path, env: dict[str, str], count: int) -> None:
    """The page's ``sh test`` block, which must run ``count`` tests, all passing."""
    run = bash(page["sh test"], directory, env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert f"Ran {count} tests" in run.stderr and "\nOK" in run.stderr, run.stderr[-2000:]
