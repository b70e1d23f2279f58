"""A skill of the skills extension (``io.modelcontextprotocol/skills``, SEP-2640), built once
from its files: its ``SKILL.md`` frontmatter parsed and held to the page's rules, every path
made a ``skill://`` URI, every file's SHA-256 digest and size computed, and the forms it takes
on the wire (its ``skills/list`` entry, its ``SKILL.md`` in ``resources/list``, each file's
``resources/read`` contents, each directory's children) built then, so that no request
parses, hashes or encodes a skill again.

Where the files come from (an app's ``skills/`` folder, a host's code) is the Django layer's
concern (``beammcp_django/skills``): the core is handed names and bytes, and a skill that
breaks a rule is refused here, by name, with the rule the system checks give an id.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .access import Access
from .frontmatter import FrontmatterProblem, parse_frontmatter, printable

EXTENSION = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
DIRECTORY_MIME_TYPE = "inode/directory"
# The page's per-skill limits (§Limits): what every conforming host accepts.
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
# The Agent Skills specification's bound on a description.
MAX_DESCRIPTION = 1024

# The rules, by name (``checks/ids.py`` gives each its id).
SKILL_FRONTMATTER = "skill_frontmatter"
SKILL_NAME = "skill_name"
SKILL_LIMITS = "skill_limits"
SKILL_PATH = "skill_path"
REPEATED_SKILL = "repeated_skill"

# The Agent Skills naming rule: 1 to 64 of lowercase letters, digits and hyphens, neither
# starting nor ending with a hyphen, no two hyphens together.
SKILL_NAME_RULE = re.compile(r"(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?")
# A path segment written in a URI as it is (RFC 3986's unreserved characters), so that a
# client resolving a relative reference reaches the same URI the manifest lists.
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]{1,255}")
# The first segment of a prefix is the URI's authority: a lowercase reg-name.
_AUTHORITY = re.compile(r"[a-z0-9._~-]{1,255}")

# The MIME type of a file, by its extension: a fixed table, so that a skill is served alike
# on every machine (``mimetypes`` reads the system's own files). Anything else is text/plain
# when it is UTF-8 and application/octet-stream when not.
_MIME_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".js": "text/javascript",
    ".ts": "text/plain",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".csv": "text/csv",
    ".html": "text/html",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}


class SkillProblem(Exception):
    """A skill that breaks one of the page's rules: the rule's name and what is wrong."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True, eq=False)
class SkillFile:
    """One file of a skill, with what the wire says of it computed once."""

    path: str
    uri: str
    size: int
    digest: str
    mime_type: str
    # The ``resources/read`` contents item: ``text`` when the bytes are UTF-8, ``blob``
    # (base64) when not; either way the bytes the digest covers.
    contents: Mapping[str, Any] = field(repr=False)

    @property
    def text(self) -> str | None:
        return self.contents.get("text")


@dataclass(frozen=True, eq=False)
class SkillSpec:
    """A skill as served: its ``SKILL.md`` URI, its frontmatter as the author wrote it, its
    files, and who may use it (the gates and scopes of any entry, ``access.py``)."""

    uri: str
    root: str
    frontmatter: Mapping[str, Any]
    files: tuple[SkillFile, ...]
    # Each directory of the skill (its root included) and the wire forms of its direct
    # children, files and directories, in URI order: ``resources/directory/read``.
    directories: Mapping[str, tuple[Mapping[str, Any], ...]] = field(repr=False)
    access: Access | None = None
    # Where it came from, for people (the admin, a check's message); never on the wire.
    origin: str = ""

    @property
    def key(self) -> str:
        return self.uri

    @property
    def name(self) -> str:
        return self.frontmatter["name"]

    @property
    def description(self) -> str:
        return self.frontmatter["description"]

    @property
    def size(self) -> int:
        return sum(file.size for file in self.files)

    def to_wire(self) -> dict[str, Any]:
        """The ``Skill`` entry of ``skills/list`` and ``skills/get``: a complete manifest,
        ``SKILL.md`` first."""
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [
                {"uri": file.uri, "digest": file.digest, "size": file.size} for file in self.files
            ],
        }

    def resource_wire(self) -> dict[str, Any]:
        """Its ``SKILL.md`` as ``resources/list`` lists it: named and described from the
        frontmatter, as the page's §Resource Metadata asks."""
        skill_md = self.files[0]
        return {
            "uri": self.uri,
            "name": self.name,
            "description": self.description,
            "mimeType": skill_md.mime_type,
            "size": skill_md.size,
        }


def skill_root(name: str, prefix: str = "") -> str:
    """``skill://<prefix>/<name>``: the skill's root directory, with no trailing slash."""
    return SCHEME + (f"{prefix}/" if prefix else "") + name


def build_skill(
    name: str,
    files: Mapping[str, bytes],
    *,
    prefix: str = "",
    access: Access | None = None,
    origin: str = "",
) -> SkillSpec:
    """The skill ``name`` (the last segment of its path: its folder's name) made of
    ``files`` (relative ``/``-separated path to raw bytes, ``SKILL.md`` among them), under
    the organisational ``prefix`` (``""`` or ``a/b``); ``SkillProblem`` when a rule is
    broken."""
    if not SKILL_NAME_RULE.fullmatch(name):
        raise SkillProblem(
            SKILL_NAME,
            f"the name '{printable(name)}' breaks the Agent Skills rule: 1 to 64 of lowercase "
            "letters, digits and hyphens, not starting or ending with a hyphen, no '--'",
        )
    _check_prefix(prefix)
    _check_limits(files)
    for path in files:
        _check_path(path)
    _check_files_and_directories(files)
    if SKILL_FILE not in files:
        raise SkillProblem(SKILL_FRONTMATTER, f"has no {SKILL_FILE} at its root")
    try:
        frontmatter = parse_frontmatter(files[SKILL_FILE], MAX_DESCRIPTION)
    except FrontmatterProblem as problem:
        raise SkillProblem(SKILL_FRONTMATTER, f"its {SKILL_FILE}{problem}") from None
    if frontmatter["name"] != name:
        raise SkillProblem(
            SKILL_NAME,
            f"its {SKILL_FILE} names it '{printable(frontmatter['name'])}', but its folder (the "
            f"last segment of its URI) is '{name}': the page requires the two to be equal",
        )
    root = skill_root(name, prefix)
    ordered = [SKILL_FILE, *sorted(path for path in files if path != SKILL_FILE)]
    built = tuple(_file(root, path, files[path]) for path in ordered)
    return SkillSpec(
        uri=f"{root}/{SKILL_FILE}",
        root=root,
        frontmatter=frontmatter,
        files=built,
        directories=_directories(root, built),
        access=access,
        origin=origin,
    )


def _check_prefix(prefix: str) -> None:
    if not prefix:
        return
    segments = prefix.split("/")
    if not _AUTHORITY.fullmatch(segments[0]) or not all(
        _SEGMENT.fullmatch(segment) and segment not in (".", "..") for segment in segments
    ):
        raise SkillProblem(
            SKILL_NAME,
            f"the prefix '{printable(prefix)}' is not '/'-separated URI segments (letters, "
            "digits, '.', '_', '~', '-'; the first lowercase, as a URI's authority is)",
        )


def _check_limits(files: Mapping[str, bytes]) -> None:
    if len(files) > MAX_FILES:
        raise SkillProblem(
            SKILL_LIMITS,
            f"has {len(files)} files, past the extension's {MAX_FILES} a skill (no host is "
            "obliged to load it)",
        )
    total = sum(len(content) for content in files.values())
    if total > MAX_BYTES:
        raise SkillProblem(
            SKILL_LIMITS,
            f"has {total} bytes of files, past the extension's {MAX_BYTES} (16 MiB) a skill "
            "(no host is obliged to load it)",
        )


def _check_path(path: str) -> None:
    """A file's path: relative, ``/``-separated, every segment a URI segment as written, none
    of them ``.`` or ``..`` (a path never leaves the skill's folder)."""
    segments = path.split("/") if isinstance(path, str) else [""]
    if not all(_SEGMENT.fullmatch(segment) for segment in segments):
        raise SkillProblem(
            SKILL_PATH,
            f"has a file '{printable(str(path))}' whose path is not relative '/'-separated "
            "segments of letters, digits, '.', '_', '~' and '-' (rename it: a URI carries "
            "those as they are)",
        )
    if any(segment in (".", "..") for segment in segments):
        raise SkillProblem(
            SKILL_PATH,
            f"has a file '{printable(path)}' whose path has a '.' or '..' segment, which would "
            "leave or repeat the skill's folder",
        )


def _check_files_and_directories(files: Mapping[str, bytes]) -> None:
    directories = {path.rsplit("/", 1)[0] for path in files if "/" in path}
    for directory in list(directories):
        while "/" in directory:
            directory = directory.rsplit("/", 1)[0]
            directories.add(directory)
    clash = sorted(directories.intersection(files))
    if clash:
        raise SkillProblem(
            SKILL_PATH, f"has '{printable(clash[0])}' both as a file and as a directory"
        )


def _file(root: str, path: str, content: bytes) -> SkillFile:
    uri = f"{root}/{path}"
    extension = "." + path.rsplit(".", 1)[1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    try:
        text: str | None = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    mime_type = _MIME_TYPES.get(extension) or (
        "text/plain" if text is not None else "application/octet-stream"
    )
    contents: dict[str, Any] = {"uri": uri, "mimeType": mime_type}
    if text is not None:
        contents["text"] = text
    else:
        contents["blob"] = base64.b64encode(content).decode("ascii")
    return SkillFile(
        path=path,
        uri=uri,
        size=len(content),
        digest="sha256:" + hashlib.sha256(content).hexdigest(),
        mime_type=mime_type,
        contents=contents,
    )


def _directories(
    root: str, files: tuple[SkillFile, ...]
) -> dict[str, tuple[Mapping[str, Any], ...]]:
    children: dict[str, dict[str, Mapping[str, Any]]] = {root: {}}
    for file in files:
        parent = root
        *folders, basename = file.path.split("/")
        for folder in folders:
            here = f"{parent}/{folder}"
            if here not in children:
                children[here] = {}
                children[parent][here] = {
                    "uri": here,
                    "name": folder,
                    "mimeType": DIRECTORY_MIME_TYPE,
                }
            parent = here
        children[parent][file.uri] = {
            "uri": file.uri,
            "name": basename,
            "mimeType": file.mime_type,
            "size": file.size,
        }
    return {
        directory: tuple(listed[uri] for uri in sorted(listed))
        for directory, listed in children.items()
    }
