"""Skills found in installed apps' ``skills/`` folders (``beammcp_django/skills``): real
folders written by the test, found in ``INSTALLED_APPS`` order with the first app winning,
read only inside themselves (a symbolic link out, or a skill past the limits, refused by
name at startup: by ``manage.py check`` and by ``mcp_serve`` before it serves), their
digests those of the bytes on disk, and a ``Skill`` class gating or replacing a folder."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.test import override_settings

from beammcp_django.mcp import Site, Skill
from beammcp_django.protocol.skills import MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]


def skill_md(name: str, description: str = "A skill of the folder tests.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


@pytest.fixture
def apps_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` for the apps a test writes."""
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("skillapp_")]:
            del sys.modules[name]


def app(apps_dir: Path, label: str) -> Path:
    write(apps_dir / label / "__init__.py", "")
    return apps_dir / label / "skills"


def installed(*labels: str) -> override_settings:
    return override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, *labels])


def test_a_folder_is_served_with_the_digests_of_its_bytes_on_disk(apps_dir):
    skills = app(apps_dir, "skillapp_one")
    written = {
        "SKILL.md": skill_md("field-guide").encode(),
        "references/birds.md": "# Birds\r\n\u00e9\n".encode(),
        "assets/map.bin": bytes(range(256)),
    }
    for path, content in written.items():
        write(skills / "field-guide" / path, content)
    write(skills / "field-guide" / ".DS_Store", b"junk")
    write(skills / "field-guide" / "__pycache__" / "x.pyc", b"junk")
    with installed("skillapp_one"):
        site = Site(app_skills=True)
        (skill,) = [s for s in site.skills if s.name == "field-guide"]
    assert skill.origin == "app 'skillapp_one', skills/field-guide/"
    assert {file.path: (file.digest, file.size) for file in skill.files} == {
        path: ("sha256:" + hashlib.sha256(content).hexdigest(), len(content))
        for path, content in written.items()
    }
    assert site.skill_problems() == ()


def test_the_first_app_in_installed_apps_wins_and_the_hidden_folder_is_warned(apps_dir):
    write(app(apps_dir, "skillapp_first") / "shared" / "SKILL.md", skill_md("shared", "First."))
    write(app(apps_dir, "skillapp_second") / "shared" / "SKILL.md", skill_md("shared", "Second."))
    write(
        apps_dir / "skillapp_first" / "catalog.py",
        "from beammcp_django.mcp import Site\nsite = Site(app_skills=True)\n",
    )
    with installed("skillapp_first", "skillapp_second"):
        site = Site(app_skills=True)
        (shared,) = [s for s in site.skills if s.name == "shared"]
        assert shared.description == "First."
        with override_settings(BEAMMCP={"CATALOG": "skillapp_first.catalog.site"}):
            messages = [m for m in run_checks(tags=["beammcp"]) if m.id == "beammcp.W011"]
    (warning,) = messages
    assert "served from app 'skillapp_first', skills/shared/" in warning.msg
    assert (
        "app 'skillapp_second' is not served (the first app in INSTALLED_APPS wins)" in warning.msg
    )


def test_a_python_package_named_skills_is_code_not_skills(apps_dir):
    skills = app(apps_dir, "skillapp_code")
    write(skills / "__init__.py", "")
    write(skills / "helpers" / "__init__.py", "")
    with installed("skillapp_code"):
        site = Site(app_skills=True)
        assert not [s for s in site.skills if s.origin.startswith("app 'skillapp_code'")]
        assert site.skill_problems() == ()


def problems_of(apps_dir: Path, label: str) -> list[str]:
    with installed(label):
        site = Site(app_skills=True)
        return [f"{p.rule}: {p.subject}: {p.message}" for p in site.skill_problems()]


def test_a_symbolic_link_out_of_the_folder_is_refused_by_name(apps_dir):
    folder = app(apps_dir, "skillapp_link") / "linked"
    write(folder / "SKILL.md", skill_md("linked"))
    secret = write(apps_dir / "secret.txt", "SECRET_KEY = 'x'\n")
    (folder / "settings.txt").symlink_to(secret)
    (problem,) = problems_of(apps_dir, "skillapp_link")
    assert problem == (
        "skill_path: skill folder app 'skillapp_link', skills/linked/: has 'settings.txt', a "
        "symbolic link to a place outside the skill's folder: a skill serves only what its "
        "folder holds"
    )


def test_a_link_to_a_directory_is_refused_and_a_link_inside_is_served(apps_dir):
    folder = app(apps_dir, "skillapp_dirlink") / "looped"
    write(folder / "SKILL.md", skill_md("looped"))
    write(folder / "real" / "a.md", "a\n")
    (folder / "again").symlink_to(folder / "real", target_is_directory=True)
    (problem,) = problems_of(apps_dir, "skillapp_dirlink")
    assert "has 'again', a symbolic link to a directory" in problem
    (folder / "again").unlink()
    (folder / "alias.md").symlink_to(folder / "real" / "a.md")
    with installed("skillapp_dirlink"):
        (skill,) = [s for s in Site(app_skills=True).skills if s.name == "looped"]
    assert [f.path for f in skill.files] == ["SKILL.md", "alias.md", "real/a.md"]


def test_a_skill_past_the_limits_is_refused_before_its_files_are_read(apps_dir):
    folder = app(apps_dir, "skillapp_heavy") / "heavy"
    write(folder / "SKILL.md", skill_md("heavy"))
    with (folder / "huge.bin").open("wb") as sparse:  # 16 MiB + 1 of nothing: never read
        sparse.truncate(MAX_BYTES + 1)
    (problem,) = problems_of(apps_dir, "skillapp_heavy")
    assert problem.startswith("skill_limits: skill folder app 'skillapp_heavy', skills/heavy/")
    assert "more than the extension's 512 files or 16777216 bytes" in problem


def test_a_folder_named_against_its_frontmatter_is_refused(apps_dir):
    write(app(apps_dir, "skillapp_misnamed") / "folder-name" / "SKILL.md", skill_md("other"))
    (problem,) = problems_of(apps_dir, "skillapp_misnamed")
    assert problem.startswith("skill_name:") and "names it 'other'" in problem


def test_a_class_gates_the_folder_of_its_name_and_another_gives_files_from_code(apps_dir):
    write(app(apps_dir, "skillapp_gated") / "staff-guide" / "SKILL.md", skill_md("staff-guide"))
    site = Site(app_skills=True)

    @site.register
    class StaffGuide(Skill):
        name = "staff-guide"
        permissions = ("demo.view_observation",)

    @site.register
    class FromCode(Skill):
        name = "from-code"
        prefix = "generated"

        def files(self):
            return {"SKILL.md": skill_md("from-code"), "data.json": '{"a": 1}'}

    with installed("skillapp_gated"):
        by_name = {skill.name: skill for skill in site.skills}
        assert site.skill_problems() == ()
    assert by_name["staff-guide"].access.shown == ("permissions: demo.view_observation",)
    assert by_name["staff-guide"].origin.startswith("app 'skillapp_gated', skills/staff-guide/")
    assert by_name["from-code"].uri == "skill://generated/from-code/SKILL.md"
    assert by_name["from-code"].access is None


def test_refresh_reassembles_a_code_given_skill_with_new_digests():
    content = {"SKILL.md": skill_md("changing"), "notes.md": "one\n"}
    site = Site()

    @site.register
    class Changing(Skill):
        name = "changing"

        def files(self):
            return dict(content)

    before = site.skills
    assert site.skills is before  # kept, not rebuilt per read
    content["notes.md"] = "two\n"
    assert site.skills is before
    site.refresh_skills()
    (after,) = site.skills
    assert after.files[1].digest == "sha256:" + hashlib.sha256(b"two\n").hexdigest()


def test_mcp_serve_refuses_to_start_naming_the_link_out(tmp_path):
    """At startup, as a host meets it: the sample with one more app whose skill links out."""
    folder = tmp_path / "skillapp_startup" / "skills" / "leaky"
    write(tmp_path / "skillapp_startup" / "__init__.py", "")
    write(folder / "SKILL.md", skill_md("leaky"))
    (folder / "passwd").symlink_to("/etc/passwd")
    write(
        tmp_path / "startup_settings.py",
        textwrap.dedent(
            """
            from sample_project.settings import *  # noqa: F403
            INSTALLED_APPS = [*INSTALLED_APPS, "skillapp_startup"]  # noqa: F405
            """
        ),
    )
    run = subprocess.run(
        [sys.executable, "-m", "django", "mcp_serve", "--port", "0"],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "startup_settings",
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    assert "beammcp.E029" in run.stderr
    assert "has 'passwd', a symbolic link to a place outside the skill's folder" in run.stderr


def test_a_class_with_a_prefix_serves_its_folder_once_behind_its_gate(apps_dir):
    write(app(apps_dir, "skillapp_prefixed") / "refunds" / "SKILL.md", skill_md("refunds"))
    site = Site(app_skills=True)

    @site.register
    class Refunds(Skill):
        name = "refunds"
        prefix = "acme/billing"
        permissions = ("demo.view_observation",)

    with installed("skillapp_prefixed"):
        served = [s for s in site.skills if s.name == "refunds"]
    assert [(s.uri, s.access is not None) for s in served] == [
        ("skill://acme/billing/refunds/SKILL.md", True)
    ]


def test_a_folder_that_is_a_link_and_a_link_to_an_unserved_name_are_refused(apps_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "linked-folder"
    write(elsewhere / "SKILL.md", skill_md("linked-folder"))
    skills = app(apps_dir, "skillapp_linkedfolder")
    skills.mkdir(parents=True)
    (skills / "linked-folder").symlink_to(elsewhere, target_is_directory=True)
    (problem,) = problems_of(apps_dir, "skillapp_linkedfolder")
    assert "is served from linked-folder/, a symbolic link" in problem
    folder = app(apps_dir, "skillapp_dotlink") / "dotted"
    write(folder / "SKILL.md", skill_md("dotted"))
    write(folder / ".env", "SECRET=1\n")
    (folder / "env.txt").symlink_to(folder / ".env")
    (problem,) = problems_of(apps_dir, "skillapp_dotlink")
    assert "has 'env.txt', a symbolic link to a file the skill does not serve" in problem


def test_a_files_method_that_raises_is_reported_and_the_other_skills_served():
    site = Site()

    @site.register
    class Broken(Skill):
        name = "broken"

        def files(self):
            raise ConnectionError("the skills table is unreachable\nsecond line")

    @site.register
    class Fine(Skill):
        name = "fine"

        def files(self):
            return {"SKILL.md": skill_md("fine")}

    assert [skill.name for skill in site.skills] == ["fine"]
    (problem,) = site.skill_problems()
    assert problem.rule == "skill_path"
    assert problem.message == "could not be read: ConnectionError: the skills table is unreachable"
