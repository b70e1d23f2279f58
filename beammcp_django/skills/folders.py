"""Skills found in installed apps' ``skills/`` folders: ``<app>/skills/<name>/SKILL.md`` and
the files beside it, in ``INSTALLED_APPS`` order, the first app holding a name winning (as
Django's app directories template loader does; the later ones are reported, not served).

A folder is read once, when the site's skills are assembled (at startup), and only what
stays inside it is read: a symbolic link to a place outside the skill's folder, to a
directory or to a name the skill does not serve is refused by name, as is a skill whose
folder (or its app's ``skills/``) is itself a link, and one past the extension's limits
(counted from the files' sizes before any is read). Names starting with ``.`` and
``__pycache__`` folders are not part of a skill; an app's ``skills`` that is a Python package
(it has ``__init__.py``) is code, not skills, and is passed over.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.apps import apps

from beammcp_django.protocol.skills import (
    MAX_BYTES,
    MAX_FILES,
    SKILL_LIMITS,
    SKILL_PATH,
    SkillProblem,
)

FOLDER = "skills"


@dataclass(frozen=True)
class FoundFolder:
    """A skill's folder in an app, and the apps whose folder of the same name it hides."""

    name: str
    path: Path
    app_label: str
    hides: tuple[str, ...] = field(default=())

    @property
    def origin(self) -> str:
        return f"app '{self.app_label}', {FOLDER}/{self.name}/"


def app_folders() -> list[FoundFolder]:
    """Every app's skill folders, one a name: the first app in ``INSTALLED_APPS`` that
    holds it, with the later ones it hides."""
    found: dict[str, FoundFolder] = {}
    for config in apps.get_app_configs():
        root = Path(config.path) / FOLDER
        if not root.is_dir() or (root / "__init__.py").exists():
            continue
        for entry in sorted(root.iterdir(), key=lambda path: path.name):
            if not _kept(entry.name) or not entry.is_dir():
                continue
            first = found.get(entry.name)
            if first is None:
                found[entry.name] = FoundFolder(entry.name, entry, config.label)
            else:
                found[entry.name] = replace(first, hides=(*first.hides, config.label))
    return list(found.values())


def find(name: str) -> FoundFolder | None:
    """The folder the skill ``name`` is served from, if an app holds one."""
    return next((folder for folder in app_folders() if folder.name == name), None)


def read_folder(folder: Path) -> dict[str, bytes]:
    """The files of the skill at ``folder``, by their ``/``-separated path inside it."""
    if folder.is_symlink() or folder.parent.is_symlink():
        raise SkillProblem(
            SKILL_PATH,
            f"is served from {folder.name}/, a symbolic link: a skill's folder is its app's "
            "own (copy the skill in)",
        )
    base = folder.resolve()
    paths: dict[str, Path] = {}
    total = 0
    for directory, subdirectories, names in os.walk(base):
        here = Path(directory)
        subdirectories[:] = sorted(n for n in subdirectories if _kept(n))
        for name in subdirectories:
            if (here / name).is_symlink():
                raise SkillProblem(SKILL_PATH, _link_message(base, here / name, "a directory"))
        for name in sorted(n for n in names if _kept(n)):
            path = here / name
            relative = path.relative_to(base).as_posix()
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(base):
                    raise SkillProblem(SKILL_PATH, _link_message(base, path, "outside"))
                if not all(_kept(part) for part in target.relative_to(base).parts):
                    raise SkillProblem(SKILL_PATH, _link_message(base, path, "unserved"))
            if not path.is_file():
                raise SkillProblem(SKILL_PATH, f"has '{relative}', which is not a regular file")
            paths[relative] = path
            total += path.stat().st_size
            if len(paths) > MAX_FILES or total > MAX_BYTES:
                raise SkillProblem(
                    SKILL_LIMITS,
                    f"holds more than the extension's {MAX_FILES} files or {MAX_BYTES} bytes "
                    "(16 MiB) a skill (no host is obliged to load it)",
                )
    return {relative: path.read_bytes() for relative, path in paths.items()}


def _kept(name: str) -> bool:
    return not name.startswith(".") and name != "__pycache__"


def _link_message(base: Path, link: Path, what: str) -> str:
    relative = link.relative_to(base).as_posix()
    if what == "outside":
        return (
            f"has '{relative}', a symbolic link to a place outside the skill's folder: a "
            "skill serves only what its folder holds"
        )
    if what == "unserved":
        return (
            f"has '{relative}', a symbolic link to a file the skill does not serve (a name "
            "starting with '.', or in __pycache__)"
        )
    return (
        f"has '{relative}', a symbolic link to a directory: a skill's folders are its own "
        "(copy the files in)"
    )
