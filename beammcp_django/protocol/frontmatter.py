"""The YAML frontmatter that opens a ``SKILL.md``, read as the JSON object a skill's entry
serves: exactly what the author wrote, or a refusal saying why it cannot be.

A client holds the entry's ``frontmatter`` to what its own YAML parser reads from the file
(the skills extension's §Frontmatter Verification), so the frontmatter is read with YAML's
safe loader (no tag makes a Python object) and refused wherever two parsers could read it
differently: a key written twice (the last would silently win), and a plain scalar that YAML
1.1 (PyYAML) and YAML 1.2 (most other parsers) read as different values (``yes``, ``010``,
``1:30``, ``1e3``), which its author quotes instead. Dates stay the strings they are written
as (JSON has no date). Anchors and aliases are refused (a few bytes would expand into a huge
object), as is nesting past ``MAX_DEPTH``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import yaml

MAX_DEPTH = 64
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# YAML 1.2's core schema, where a plain scalar is no string (1.2.2 §10.3.2).
_CORE_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
# Integers YAML 1.1 reads alike (no leading 0, no "_", no sexagesimal), and 1.2's floats.
_AGREED_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)|0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN"
)
_CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_CORE_NULL = re.compile(r"~|null|Null|NULL|")
_REFERENCES = (yaml.AnchorToken, yaml.AliasToken)


class FrontmatterProblem(Exception):
    """Why a frontmatter is refused, as the rest of a sentence about its file."""


class _Ambiguous(yaml.YAMLError):
    """A scalar or key two YAML parsers would read differently."""


class _Loader(yaml.SafeLoader):
    """The safe loader, held to what YAML 1.1 and 1.2 read alike."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[str] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise _Ambiguous(
                        f"'s frontmatter has the key '{printable(key.value)}' twice "
                        f"(line {key.start_mark.line + 2}): parsers disagree on which wins"
                    )
                seen.add(key.value)
        return super().construct_mapping(node, deep=deep)

    def agreed(self, node: yaml.ScalarNode, agreed_by: re.Pattern[str]) -> None:
        """Refuse a plain scalar that YAML 1.2 reads otherwise than as ``node``'s tag."""
        if node.style is None and not agreed_by.fullmatch(node.value):
            raise _Ambiguous(
                f"'s frontmatter has the plain value '{printable(node.value)}' (line "
                f"{node.start_mark.line + 2}), which YAML 1.1 and YAML 1.2 read as different "
                "values: quote it"
            )

    def construct_bool(self, node: yaml.ScalarNode) -> Any:
        self.agreed(node, _CORE_BOOL)
        return self.construct_yaml_bool(node)

    def construct_int(self, node: yaml.ScalarNode) -> Any:
        self.agreed(node, _AGREED_INT)
        return self.construct_yaml_int(node)

    def construct_float(self, node: yaml.ScalarNode) -> Any:
        self.agreed(node, _CORE_FLOAT)
        return self.construct_yaml_float(node)

    def construct_str(self, node: yaml.ScalarNode) -> Any:
        if node.style is None and (
            _CORE_BOOL.fullmatch(node.value)
            or _CORE_INT.fullmatch(node.value)
            or _CORE_FLOAT.fullmatch(node.value)
            or _CORE_NULL.fullmatch(node.value)
        ):
            raise _Ambiguous(
                f"'s frontmatter has the plain value '{printable(node.value)}' (line "
                f"{node.start_mark.line + 2}), which YAML 1.1 reads as text and YAML 1.2 "
                "does not: quote it"
            )
        return self.construct_yaml_str(node)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rule) for tag, rule in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_constructor("tag:yaml.org,2002:bool", _Loader.construct_bool)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_float)
_Loader.add_constructor("tag:yaml.org,2002:str", _Loader.construct_str)


def parse_frontmatter(content: bytes, max_description: int) -> dict[str, Any]:
    """The frontmatter opening ``content`` as a JSON object, ``name`` and ``description``
    non-empty strings among its fields; ``FrontmatterProblem`` saying why not."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise FrontmatterProblem(" is not UTF-8") from None
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[0].rstrip("\r") != "---":
        raise FrontmatterProblem(" does not begin with YAML frontmatter (a first line '---')")
    end = next((n for n, line in enumerate(lines[1:], 1) if line.rstrip("\r") == "---"), None)
    if end is None:
        raise FrontmatterProblem("'s frontmatter has no closing '---' line")
    loaded = _loaded("\n".join(lines[1:end]))
    if not isinstance(loaded, dict):
        raise FrontmatterProblem("'s frontmatter is not a mapping of fields")
    unfit = next(_not_json(loaded, "frontmatter", 0), None)
    if unfit is not None:
        raise FrontmatterProblem(f"'s {unfit}")
    for required in ("name", "description"):
        if not isinstance(loaded.get(required), str) or not loaded[required].strip():
            raise FrontmatterProblem(
                f"'s frontmatter has no '{required}' (a non-empty string), which the Agent "
                "Skills specification requires"
            )
    if len(loaded["description"]) > max_description:
        raise FrontmatterProblem(
            f"'s description is {len(loaded['description'])} characters, past the Agent "
            f"Skills specification's {max_description}"
        )
    return loaded


def _loaded(source: str) -> Any:
    try:
        if any(isinstance(token, _REFERENCES) for token in yaml.scan(source)):
            raise FrontmatterProblem(
                "'s frontmatter uses YAML anchors or aliases, which it may not"
            )
        return yaml.load(source, Loader=_Loader)  # a SafeLoader: no objects
    except _Ambiguous as ambiguous:
        raise FrontmatterProblem(str(ambiguous)) from None
    except RecursionError:
        raise FrontmatterProblem(f"'s frontmatter nests past {MAX_DEPTH} levels") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise FrontmatterProblem(f"'s frontmatter is not valid YAML{where}") from None


def _not_json(value: Any, where: str, depth: int) -> Iterator[str]:
    """Why ``value`` would not come back from JSON as it is, if it would not."""
    if depth > MAX_DEPTH:
        yield f"frontmatter nests past {MAX_DEPTH} levels"
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield f"{where} has the key {printable(str(key))!r}, which is not a string"
                return
            yield from _not_json(item, f"{where}.{printable(key)}", depth + 1)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _not_json(item, f"{where}[{position}]", depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        yield f"{where} is {value}, which JSON cannot carry"
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        yield f"{where} is a YAML {type(value).__name__}, which JSON cannot carry"


def printable(value: str) -> str:
    """A name, key or value as a message shows it: printable, at most 80 characters."""
    printable = "".join(c if c.isprintable() else "?" for c in value)
    return printable if len(printable) <= 80 else printable[:77] + "..."
