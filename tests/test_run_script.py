"""The README's second command in its narrower form, run as written: one leg, one folder.

``bash tests/run.sh`` itself is what CI runs (``.ci/run``); the form the README shows for one
leg and one folder runs here, in a process of its own with none of this run's pytest
settings, and must run that leg alone (its table names no other) on that folder alone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

# What this run set for itself and its workers, which the command must not inherit.
OURS = ("BEAMMCP_TEST_", "PYTEST_", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
KEPT = ("BEAMMCP_TEST_POSTGRES_URL",)  # the machine's PostgreSQL, started once


def readme_command(introduced_by: str) -> str:
    """The command of the ``sh`` block after the README's words ``introduced_by``."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    after = readme.split(introduced_by, 1)[1]
    return re.search(r"```sh\n(.+?)\n```", after, re.S).group(1).strip()


def collected(folder: str) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", folder],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"(\d+) tests? collected", done.stdout).group(1))


def test_one_leg_and_one_folder_run_as_the_readme_says():
    command = readme_command("one leg and one\nfolder:")
    leg, folder = re.fullmatch(r"LEGS=(\S+) bash tests/run\.sh (\S+)", command).groups()
    env = {k: v for k, v in os.environ.items() if not k.startswith(OURS) or k in KEPT}
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    table = done.stdout.split("== steps, wall time", 1)[1]
    legs = set(re.findall(r"^  (py\d+-django\d+): ", table, re.M))
    assert legs == {leg}, table
    assert f"[{collected(folder)} items]" in done.stdout, output[-5000:]
