"""Checking a host catalog before it serves: every fault the host can make in its declarations.

``audit(catalog)`` returns problems, each naming its rule (one of the names below; the Django
layer's ``checks/ids.py`` table gives each rule its system check id), the entry it concerns, and
the offending key.
It runs once at startup; the request path trusts what passed it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import apps
from .access import Access
from .catalog import (
    ENTRY_KINDS,
    PromptArgument,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolSpec,
)
from .header_params import header_problems
from .schema import schema_problems, unbounded_reasons
from .skills import REPEATED_SKILL, SkillSpec
from .task_wire import TASK_MODES
from .uritemplate import UnsupportedTemplate, UriTemplate

# The rules, by name. The names are stable: check ids are looked up by them.
LIST_ABSENT = "list_absent"
WRONG_ENTRY_TYPE = "wrong_entry_type"
REPEATED_TOOL = "repeated_tool"
REPEATED_RESOURCE = "repeated_resource"
REPEATED_TEMPLATE = "repeated_template"
REPEATED_PROMPT = "repeated_prompt"
REPEATED_ARGUMENT = "repeated_argument"
NO_HANDLER = "no_handler"
BAD_TOOL_NAME = "bad_tool_name"
BAD_SCHEMA = "bad_schema"
NON_OBJECT_ROOT = "non_object_root"
UNSUPPORTED_TEMPLATE = "unsupported_template"
NOT_AN_ABSOLUTE_URI = "not_an_absolute_uri"
BAD_COMPLETER = "bad_completer"
BAD_HEADER_ANNOTATION = "bad_header_annotation"
UNBOUNDED_SCHEMA = "unbounded_schema"
BAD_ACCESS = "bad_access"
BAD_TASK_MODE = "bad_task_mode"

# The spec's tool-name rule (server/tools.mdx §Tool Names): 1-128 of [A-Za-z0-9_.-].
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_ABSOLUTE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
# An OAuth scope name (RFC 6749 §3.3 scope-token): no space, quote or backslash, so that
# a challenge header can carry it as it is.
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")


@dataclass(frozen=True)
class Problem:
    rule: str
    subject: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


_LISTS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("tools", (ToolSpec,)),
    ("resources", (ResourceSpec, ResourceTemplateSpec)),
    ("prompts", (PromptSpec,)),
)
_HANDLERS = {kind.list: kind.handler for kind in ENTRY_KINDS}


def audit(catalog: Any) -> list[Problem]:
    problems: list[Problem] = []
    lists: dict[str, Sequence[Any]] = {}
    for name, kinds in _LISTS:
        entries = getattr(catalog, name, None)
        if (
            entries is None
            or isinstance(entries, (str, bytes))
            or not isinstance(entries, Sequence)
        ):
            problems.append(
                Problem(
                    LIST_ABSENT,
                    "catalog",
                    f"has no '{name}' list (an empty list is fine; an absent one is malformed)",
                    "Give the catalog a tuple or list, even an empty one.",
                )
            )
            continue
        lists[name] = entries
        for position, entry in enumerate(entries):
            if not isinstance(entry, kinds):
                expected = " or ".join(kind.__name__ for kind in kinds)
                problems.append(
                    Problem(
                        WRONG_ENTRY_TYPE,
                        f"catalog.{name}[{position}]",
                        f"is a {type(entry).__name__}, not a {expected}",
                    )
                )
        if any(isinstance(entry, kinds) for entry in entries) and not callable(
            getattr(catalog, _HANDLERS[name], None)
        ):
            problems.append(
                Problem(
                    NO_HANDLER,
                    "catalog",
                    f"lists {name} but has no callable '{_HANDLERS[name]}' to serve them",
                )
            )
    complete = getattr(catalog, "complete", None)
    if complete is not None and not callable(complete):
        problems.append(Problem(BAD_COMPLETER, "catalog", "'complete' is set but not callable"))
    problems.extend(_tool_problems([e for e in lists.get("tools", ()) if isinstance(e, ToolSpec)]))
    problems.extend(_resource_problems(lists.get("resources", ())))
    problems.extend(
        _prompt_problems([e for e in lists.get("prompts", ()) if isinstance(e, PromptSpec)])
    )
    problems.extend(_view_problems(lists.get("tools", ()), lists.get("resources", ())))
    skills = _skills(catalog, problems)
    problems.extend(_skill_problems(skills, lists.get("resources", ())))
    for entries in (*lists.values(), skills):
        for entry in entries:
            problems.extend(_access_problems(entry))
    return problems


def _view_problems(tools: Sequence[Any], resources: Sequence[Any]) -> Iterator[Problem]:
    """MCP Apps (``apps.py``): every ``ui://`` resource a view of the page's type and
    ``_meta.ui``, declared at a fixed URI; every tool's link to one naming a declared view."""
    views: set[str] = set()
    for spec in resources:
        if isinstance(spec, ResourceTemplateSpec) and str(spec.uri_template).startswith(
            apps.SCHEME
        ):
            yield Problem(
                apps.BAD_VIEW,
                f"resource template '{spec.uri_template}'",
                "is a ui:// template: this package serves each view at one fixed URI, which "
                "a host can list, review and cache before a tool names it",
            )
        elif isinstance(spec, ResourceSpec) and str(spec.uri).startswith(apps.SCHEME):
            views.add(spec.uri)  # a faulty view is reported once, not in each tool naming it
            for message in apps.view_problems(spec.uri, spec.mime_type, spec.meta):
                yield Problem(apps.BAD_VIEW, f"resource '{spec.uri}'", message)
    for tool in tools:
        if isinstance(tool, ToolSpec):
            for message in apps.tool_view_problems(tool.meta, views):
                yield Problem(apps.BAD_TOOL_VIEW, f"tool '{tool.name}'", message)


def _skills(catalog: Any, problems: list[Problem]) -> list[SkillSpec]:
    """The catalog's skills (an optional list: a catalog without one serves none), each
    entry that is not a ``SkillSpec`` reported."""
    entries = getattr(catalog, "skills", ())
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
        problems.append(Problem(LIST_ABSENT, "catalog", "has a 'skills' that is not a list"))
        return []
    for position, entry in enumerate(entries):
        if not isinstance(entry, SkillSpec):
            problems.append(
                Problem(
                    WRONG_ENTRY_TYPE,
                    f"catalog.skills[{position}]",
                    f"is a {type(entry).__name__}, not a SkillSpec",
                )
            )
    return [entry for entry in entries if isinstance(entry, SkillSpec)]


def _skill_problems(skills: list[SkillSpec], resources: Sequence[Any]) -> Iterator[Problem]:
    """Two skills at one URI, or a skill's file at the URI of a resource the catalog lists:
    one URI, one thing served."""
    for uri in _repeats(skill.uri for skill in skills):
        yield Problem(REPEATED_SKILL, f"skill '{uri}'", "is declared more than once")
    # One skill a file or folder URI: a skill inside another's folder would split a URI
    # between two manifests (a read answered by one, listed by the other).
    owners: dict[str, str] = {}
    for skill in skills:
        for uri in [*(file.uri for file in skill.files), *skill.directories]:
            other = owners.setdefault(uri, skill.uri)
            if other != skill.uri:
                yield Problem(
                    REPEATED_SKILL,
                    f"skill '{skill.uri}'",
                    f"serves {uri}, which the skill '{other}' serves too (one skill inside "
                    "another's folder)",
                )
                break
    declared = {spec.uri for spec in resources if isinstance(spec, ResourceSpec)}
    for skill in skills:
        for file in skill.files:
            if file.uri in declared:
                yield Problem(
                    REPEATED_SKILL,
                    f"skill '{skill.uri}'",
                    f"has the file {file.uri}, which is also a resource the catalog declares",
                )


def _access_problems(entry: Any) -> Iterator[Problem]:
    access = getattr(entry, "access", None)
    if access is None:
        return
    subject = f"{type(entry).__name__} '{getattr(entry, 'key', '?')}'"
    if not isinstance(access, Access):
        yield Problem(
            BAD_ACCESS, subject, f"key 'access' is a {type(access).__name__}, not an Access"
        )
        return
    if not all(callable(gate) for gate in access.gates):
        yield Problem(BAD_ACCESS, subject, "key 'access' has a gate that is not callable")
    if not isinstance(access.scopes, frozenset):
        yield Problem(BAD_ACCESS, subject, "key 'access' scopes are not a frozenset of names")
        return
    for scope in sorted(access.scopes, key=str):
        if not isinstance(scope, str) or not SCOPE_TOKEN.fullmatch(scope):
            yield Problem(
                BAD_ACCESS,
                subject,
                f"declares the scope {str(scope)[:64]!r}, which is not an OAuth scope name "
                "(RFC 6749 §3.3: visible ASCII but for space, quote and backslash)",
            )


def _repeats(keys: Iterator[str]) -> list[str]:
    seen: set[str] = set()
    repeated: list[str] = []
    for key in keys:
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    return repeated


def _tool_problems(tools: list[ToolSpec]) -> Iterator[Problem]:
    for name in _repeats(tool.name for tool in tools):
        yield Problem(REPEATED_TOOL, f"tool '{name}'", "is declared more than once (key 'name')")
    for tool in tools:
        subject = f"tool '{tool.name}'"
        if not isinstance(tool.name, str) or not TOOL_NAME.fullmatch(tool.name):
            yield Problem(
                BAD_TOOL_NAME,
                subject,
                "key 'name' breaks the spec's rule: 1-128 characters of A-Z a-z 0-9 _ . -",
            )
        for problem in schema_problems(tool.input_schema):
            yield Problem(BAD_SCHEMA, subject, f"key 'inputSchema' {problem}")
        for reason in unbounded_reasons(tool.input_schema):
            yield Problem(
                UNBOUNDED_SCHEMA,
                subject,
                f"key 'inputSchema' cannot be validated in bounded time: {reason}",
                "Write the rule without look-around or back-references (a negative "
                "look-ahead is often a 'not' with a 'pattern'), so that it runs in linear "
                "time.",
            )
        if isinstance(tool.input_schema, dict) and tool.input_schema.get("type") != "object":
            yield Problem(
                NON_OBJECT_ROOT,
                subject,
                'key \'inputSchema\' must have "type": "object" at its root',
                'For a tool with no arguments use {"type": "object", '
                '"additionalProperties": false}.',
            )
        if tool.output_schema is not None:
            for problem in schema_problems(tool.output_schema):
                yield Problem(BAD_SCHEMA, subject, f"key 'outputSchema' {problem}")
        for problem in header_problems(tool.input_schema):
            yield Problem(BAD_HEADER_ANNOTATION, subject, f"key 'inputSchema': {problem}")
        if tool.task not in TASK_MODES:
            yield Problem(
                BAD_TASK_MODE,
                subject,
                f"key 'task' is {str(tool.task)[:32]!r}, not one of {', '.join(TASK_MODES)}",
            )


def _resource_problems(entries: Sequence[Any]) -> Iterator[Problem]:
    statics = [e for e in entries if isinstance(e, ResourceSpec)]
    templates = [e for e in entries if isinstance(e, ResourceTemplateSpec)]
    for uri in _repeats(resource.uri for resource in statics):
        yield Problem(
            REPEATED_RESOURCE, f"resource '{uri}'", "is declared more than once (key 'uri')"
        )
    for template in _repeats(spec.uri_template for spec in templates):
        yield Problem(
            REPEATED_TEMPLATE,
            f"resource template '{template}'",
            "is declared more than once (key 'uri_template')",
        )
    for resource in statics:
        if not isinstance(resource.uri, str) or not _ABSOLUTE_URI.fullmatch(resource.uri):
            yield Problem(
                NOT_AN_ABSOLUTE_URI,
                f"resource '{resource.name}'",
                "key 'uri' is not an absolute URI (scheme:rest, no spaces)",
            )
    for spec in templates:
        if not isinstance(spec.uri_template, str):
            yield Problem(
                WRONG_ENTRY_TYPE,
                f"resource template '{spec.name}'",
                f"key 'uri_template' is a {type(spec.uri_template).__name__}, not a string",
            )
            continue
        try:
            UriTemplate(spec.uri_template)
        except UnsupportedTemplate as error:
            yield Problem(
                UNSUPPORTED_TEMPLATE,
                f"resource template '{spec.uri_template}'",
                f"key 'uri_template' {error}",
            )


def _prompt_problems(prompts: list[PromptSpec]) -> Iterator[Problem]:
    for name in _repeats(prompt.name for prompt in prompts):
        yield Problem(
            REPEATED_PROMPT, f"prompt '{name}'", "is declared more than once (key 'name')"
        )
    for prompt in prompts:
        subject = f"prompt '{prompt.name}'"
        if isinstance(prompt.arguments, (str, bytes)) or not isinstance(prompt.arguments, Sequence):
            yield Problem(
                WRONG_ENTRY_TYPE,
                subject,
                f"key 'arguments' is a {type(prompt.arguments).__name__}, not a sequence",
            )
            continue
        arguments = list(prompt.arguments)
        for position, argument in enumerate(arguments):
            if not isinstance(argument, PromptArgument):
                yield Problem(
                    WRONG_ENTRY_TYPE,
                    subject,
                    f"key 'arguments[{position}]' is a {type(argument).__name__}, "
                    "not a PromptArgument",
                )
        names = (a.name for a in arguments if isinstance(a, PromptArgument))
        for name in _repeats(names):
            yield Problem(REPEATED_ARGUMENT, subject, f"declares the argument '{name}' twice")
