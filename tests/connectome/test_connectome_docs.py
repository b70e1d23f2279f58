"""The commands docs/connectome.md tells a user to type about effects, run as written on the
sample project (a fresh database, a process of their own), with the output it shows."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from tests.support import REPO_ROOT, manage

PAGE = (REPO_ROOT / "docs" / "connectome.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = PAGE.index(f"\n## {title}\n")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start:end]


def console_blocks(text: str) -> list[str]:
    return re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL)


def commands(text: str) -> list[list[str]]:
    """Each ``$ python manage.py ...`` line of the section's console blocks, as arguments."""
    return [
        shlex.split(line.removeprefix("$ python manage.py "))
        for block in console_blocks(text)
        for line in block.splitlines()
        if line.startswith("$ python manage.py ")
    ]


@pytest.fixture(scope="module")
def sample_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("docs")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "sample_project.settings",
        "DATABASE_URL": f"sqlite:///{Path(directory) / 'db.sqlite3'}",
    }
    manage(env, "migrate", "--noinput", "-v", "0")
    return env


def test_the_reach_commands_run_as_written_and_answer_yes(sample_env):
    typed = commands(section("Reach"))
    assert [arguments[:2] for arguments in typed] == [
        ["mcp_connectome", "reach"],
        ["mcp_connectome", "reach"],
    ]
    for arguments in typed:
        record = json.loads(manage(sample_env, *arguments).stdout)
        assert record["answer"] is True, (arguments, record)
        assert record["question"] == arguments[2]


def test_the_check_shown_for_the_mis_annotated_tool_is_what_check_prints(sample_env):
    (block,) = [b for b in console_blocks(section("Effects")) if "manage.py check" in b]
    shown = [line for line in block.splitlines()[1:] if line.strip()]
    printed = manage(sample_env, "check").stderr.decode()
    for line in shown:
        assert line in printed, line
