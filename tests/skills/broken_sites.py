"""Sites whose skills break one rule each, for ``manage.py check`` (``BEAMMCP["CATALOG"]``
names one): each is held to its id by ``tests/django_layer/test_check_ids.py``."""

from __future__ import annotations

from beammcp_django.mcp import Site, Skill

SKILL_MD = "---\nname: {name}\ndescription: A skill of the checks' tests.\n---\n\nBody.\n"


def skill_md(name: str) -> str:
    return SKILL_MD.format(name=name)


NO_FRONTMATTER = Site()


@NO_FRONTMATTER.register
class WithoutFrontmatter(Skill):
    name = "without-frontmatter"

    def files(self):
        return {"SKILL.md": "# A heading, and no frontmatter\n"}


NAME_NOT_FOLDER = Site()


@NAME_NOT_FOLDER.register
class NamedOtherwise(Skill):
    name = "one-name"

    def files(self):
        return {"SKILL.md": skill_md("another-name")}


TOO_MANY_FILES = Site()


@TOO_MANY_FILES.register
class ManyFiles(Skill):
    name = "many-files"

    def files(self):
        return {"SKILL.md": skill_md("many-files")} | {f"n/{n}.md": "x" for n in range(512)}


LEAVING_PATH = Site()


@LEAVING_PATH.register
class Leaving(Skill):
    name = "leaving"

    def files(self):
        return {"SKILL.md": skill_md("leaving"), "../settings.py": "SECRET_KEY = 'x'\n"}


TWICE = Site()


class First(Skill):
    name = "twice"

    def files(self):
        return {"SKILL.md": skill_md("twice")}


class Second(First):
    pass


TWICE.register(First, Second)

# The sample's folder skill reading-the-forecast, replaced by a class giving its files.
SHADOWING = Site(app_skills=True)


@SHADOWING.register
class ReplacesAFolder(Skill):
    name = "reading-the-forecast"

    def files(self):
        return {"SKILL.md": skill_md("reading-the-forecast")}
