"""The site's skills, assembled from the ``Skill`` classes a host registers and the skill
folders of its installed apps (``folders.py``): each built once by the core
(``protocol.skills.build_skill``: frontmatter, names, paths, limits, digests), a skill that
breaks a rule left out and reported with the rule's name, and the folders a class or an
earlier app hides reported too (served: the class, or the first app)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.protocol.audit import Problem
from beammcp_django.protocol.skills import SKILL_PATH, SkillProblem, SkillSpec, build_skill
from beammcp_django.skills import folders

SKILL_SHADOWED = "skill_shadowed"


@dataclass(frozen=True)
class Assembled:
    """The skills served, the problems that kept others out, and what is hidden (warned)."""

    skills: tuple[SkillSpec, ...] = ()
    problems: tuple[Problem, ...] = ()
    hidden: tuple[Problem, ...] = field(default=())


def assemble(declared: Iterable[Any], *, app_folders: bool) -> Assembled:
    """``declared``: the registered ``Skill`` instances, in registration order; with
    ``app_folders``, the apps' skill folders no class claims are served too."""
    skills: list[SkillSpec] = []
    problems: list[Problem] = []
    hidden: list[Problem] = []
    found = {folder.name: folder for folder in folders.app_folders()} if app_folders else {}
    claimed: set[str] = set()
    for instance in declared:
        cls = type(instance)
        subject = f"skill class {cls.__module__}.{cls.__qualname__}"
        try:
            files = _as_bytes(instance.files())
            skills.append(
                build_skill(
                    cls.name,
                    files,
                    prefix=cls.prefix,
                    access=instance.access(),
                    origin=_origin(cls, found.get(cls.name)),
                )
            )
        except Exception as raised:
            problems.append(_problem(subject, raised))
        # A class serving the folder of its name claims it (whatever its prefix: the folder
        # is served once, as the class says); one giving its files at the folder's own URI
        # hides it.
        if not _replaces_folder(cls) or not cls.prefix:
            claimed.add(cls.name)
            folder = found.get(cls.name)
            if folder is not None and _replaces_folder(cls):
                hidden.append(
                    Problem(
                        SKILL_SHADOWED,
                        subject,
                        f"gives the skill '{cls.name}' its files from code, so the folder "
                        f"{folder.origin} is not served",
                        "Remove the folder, or let the class serve it (do not override files).",
                    )
                )
    for name, folder in found.items():
        if folder.hides:
            hidden.append(
                Problem(
                    SKILL_SHADOWED,
                    f"skill '{name}'",
                    f"is served from {folder.origin}; the folder of the same name in "
                    + ", ".join(f"app '{label}'" for label in folder.hides)
                    + " is not served (the first app in INSTALLED_APPS wins)",
                    "Rename one of the folders, or silence this check if the override is meant.",
                )
            )
        if name in claimed:
            continue
        try:
            skills.append(build_skill(name, folders.read_folder(folder.path), origin=folder.origin))
        except Exception as raised:
            problems.append(_problem(f"skill folder {folder.origin}", raised))
    return Assembled(tuple(skills), tuple(problems), tuple(hidden))


def _problem(subject: str, raised: Exception) -> Problem:
    """What kept a skill out: the rule it broke, or what went wrong reading it (an OS error,
    a host's ``files()`` that raised), which leaves the others served."""
    if isinstance(raised, SkillProblem):
        return Problem(raised.rule, subject, raised.message)
    cause = str(raised).splitlines()[0][:200] if str(raised) else ""
    return Problem(
        SKILL_PATH,
        subject,
        f"could not be read: {type(raised).__name__}" + (f": {cause}" if cause else ""),
    )


def _as_bytes(files: Any) -> dict[str, bytes]:
    """What ``files()`` returned, each content as bytes (a ``str`` is UTF-8)."""
    if not isinstance(files, Mapping):
        raise SkillProblem(
            SKILL_PATH, f"files() returned a {type(files).__name__}, not a mapping of paths"
        )
    converted: dict[str, bytes] = {}
    for path, content in files.items():
        if isinstance(content, str):
            content = content.encode("utf-8")
        if not isinstance(content, bytes) or not isinstance(path, str):
            raise SkillProblem(
                SKILL_PATH, "files() must map each path (a str) to its content (bytes or str)"
            )
        converted[path] = content
    return converted


def _replaces_folder(cls: type) -> bool:
    """Whether the class gives its files from code (``Skill.files`` reads the folder)."""
    return not getattr(cls.files, "reads_app_folder", False)


def _origin(cls: type, folder: folders.FoundFolder | None) -> str:
    if folder is not None and not _replaces_folder(cls):
        return f"{folder.origin} (class {cls.__module__}.{cls.__qualname__})"
    return f"class {cls.__module__}.{cls.__qualname__}"
