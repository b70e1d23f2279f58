"""The catalog compiled for serving: its entries sorted and keyed for paging, their wire
forms built once, their schemas compiled, and resource URIs matched against templates.

Rebuilt only when the catalog hands out new list objects, reusing each entry whose spec
object is unchanged (``Server.index``). Public: the HTTP transport reads a tool's header
parameters from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from .apps import app_only, drawn_by, is_view
from .catalog import PromptSpec, ResourceMatch, ResourceSpec, ResourceTemplateSpec, ToolSpec
from .header_params import HeaderParameter, header_parameters
from .legacy_tools import legacy_tool, output_schema_fits
from .schema import CompiledSchema
from .skills import SkillFile, SkillSpec
from .uritemplate import UriTemplate


@dataclass(frozen=True)
class ToolEntry:
    spec: ToolSpec
    arguments: CompiledSchema
    output: CompiledSchema | None
    header_params: tuple[HeaderParameter, ...] = ()
    # 2025-11-25 can carry this tool's structured results (legacy_tools.py).
    legacy_structured: bool = True
    # The view the tool is drawn by, when the model may call it: its content must carry the
    # answer (apps.drawn_by).
    view: str | None = None


@dataclass(frozen=True)
class PromptEntry:
    spec: PromptSpec
    arguments: CompiledSchema


def prompt_arguments_schema(spec: PromptSpec) -> dict[str, Any]:
    """The JSON Schema a prompt's declared arguments imply: named strings, no others."""
    return {
        "type": "object",
        "properties": {argument.name: {"type": "string"} for argument in spec.arguments},
        "required": [argument.name for argument in spec.arguments if argument.required],
        "additionalProperties": False,
    }


def skills_of(catalog: Any) -> Any:
    """The catalog's skills: its optional ``skills`` list, empty when it has none."""
    return getattr(catalog, "skills", ())


class ToolListing(NamedTuple):
    """One tools/list's entries, in key order: keys, wire forms (2026-07-28, 2025-11-25) and
    access rules."""

    keys: list[str]
    wire: list[Any]
    wire_legacy: list[Any]
    access: list[Any]


class CatalogIndex:
    """The catalog sorted, keyed and compiled; rebuilt only when a list object changes."""

    def __init__(self, catalog: Any, previous: CatalogIndex | None, legacy: bool) -> None:
        self.sources = (catalog.tools, catalog.resources, catalog.prompts, skills_of(catalog))
        reuse = previous.compiled if previous is not None else {}
        self.compiled: dict[int, Any] = {}

        tools = sorted(catalog.tools, key=lambda spec: spec.key)
        self.tools: list[ToolSpec] = tools
        self.tool_keys = [spec.key for spec in tools]
        self.tool_wire = [spec.to_wire() for spec in tools]
        # Shaped for 2025-11-25 only on a server that speaks it.
        self.tool_wire_legacy = (
            [legacy_tool(wire) for wire in self.tool_wire] if legacy else self.tool_wire
        )
        self.tool_entries = {spec.name: self._tool_entry(spec, reuse) for spec in tools}
        self.tool_access = [spec.access for spec in tools]
        # The tools/list of a client that did not declare MCP Apps: every tool but the
        # app-only ones, which such a host would hand its model; None when there are none.
        for_models = [index for index, spec in enumerate(tools) if not app_only(spec.meta)]
        self.tools_for_models: ToolListing | None = (
            ToolListing(
                [self.tool_keys[index] for index in for_models],
                [self.tool_wire[index] for index in for_models],
                [self.tool_wire_legacy[index] for index in for_models],
                [self.tool_access[index] for index in for_models],
            )
            if len(for_models) < len(tools)
            else None
        )

        # The skills extension's skills (``skills.py``), by their SKILL.md's URI.
        skills = sorted(skills_of(catalog), key=lambda spec: spec.key)
        self.skill_keys = [spec.key for spec in skills]
        self.skill_wire = [spec.to_wire() for spec in skills]
        self.skill_access = [spec.access for spec in skills]
        self.skills = {spec.key: spec for spec in skills}
        # Every file and every directory of every skill, with the skill that serves it.
        self.skill_files: dict[str, tuple[SkillSpec, SkillFile]] = {
            file.uri: (spec, file) for spec in skills for file in spec.files
        }
        self.skill_directories: dict[str, tuple[SkillSpec, list[str], list[Any]]] = {
            uri: (spec, [child["uri"] for child in children], list(children))
            for spec in skills
            for uri, children in spec.directories.items()
        }

        statics = sorted(
            (spec for spec in catalog.resources if isinstance(spec, ResourceSpec)),
            key=lambda spec: spec.key,
        )
        self.resources = {spec.key: spec for spec in statics}
        # The MCP Apps extension is served when a view is (``apps.py``).
        self.serves_views = any(is_view(spec.uri, spec.mime_type) for spec in statics)
        # resources/list lists each skill's SKILL.md beside the host's resources (its other
        # files are in the skill's entry, and read by URI).
        listed = sorted(
            [(spec.key, spec.to_wire(), spec.access) for spec in statics]
            + [(spec.key, spec.resource_wire(), spec.access) for spec in skills],
            key=lambda row: row[0],
        )
        self.resource_keys = [key for key, _, _ in listed]
        self.resource_wire = [wire for _, wire, _ in listed]
        self.resource_access = [access for _, _, access in listed]
        templates = sorted(
            (spec for spec in catalog.resources if isinstance(spec, ResourceTemplateSpec)),
            key=lambda spec: spec.key,
        )
        self.template_keys = [spec.key for spec in templates]
        self.template_wire = [spec.to_wire() for spec in templates]
        self.templates = [(spec, UriTemplate(spec.uri_template)) for spec in templates]
        self.template_access = [spec.access for spec in templates]
        self.template_by_key = {spec.key: spec for spec in templates}
        # Everything a resources/read may be served by: its gates, asked together.
        self.read_access = [*self.resource_access, *self.template_access, *self.skill_access]

        prompts = sorted(catalog.prompts, key=lambda spec: spec.key)
        self.prompt_keys = [spec.key for spec in prompts]
        self.prompt_wire = [spec.to_wire() for spec in prompts]
        self.prompt_entries = {spec.name: self._prompt_entry(spec, reuse) for spec in prompts}
        self.prompt_access = [spec.access for spec in prompts]
        # Whether any entry may be hidden from some caller: only then do lists depend on who
        # asks, and cost a check per request.
        self.gated = any(
            access is not None and access.hides
            for access in (
                *self.tool_access,
                *self.resource_access,
                *self.template_access,
                *self.prompt_access,
                *self.skill_access,
            )
        )

    def _reused(self, spec: Any, reuse: dict[int, Any], build: Callable[[], Any]) -> Any:
        """The compiled entry of ``spec`` from the previous index when it is the same spec
        object (ids are reused after an object dies, so identity is checked), else a new one."""
        entry = reuse.get(id(spec))
        if entry is None or entry.spec is not spec:
            entry = build()
        self.compiled[id(spec)] = entry
        return entry

    def _tool_entry(self, spec: ToolSpec, reuse: dict[int, Any]) -> ToolEntry:
        def build() -> ToolEntry:
            output = CompiledSchema(spec.output_schema) if spec.output_schema is not None else None
            return ToolEntry(
                spec,
                CompiledSchema(spec.input_schema),
                output,
                header_parameters(spec.input_schema),
                output_schema_fits(spec.output_schema),
                drawn_by(spec.meta),
            )

        return self._reused(spec, reuse, build)

    def _prompt_entry(self, spec: PromptSpec, reuse: dict[int, Any]) -> PromptEntry:
        return self._reused(
            spec, reuse, lambda: PromptEntry(spec, CompiledSchema(prompt_arguments_schema(spec)))
        )

    def header_params(self, tool: str) -> tuple[HeaderParameter, ...]:
        entry = self.tool_entries.get(tool)
        return entry.header_params if entry is not None else ()

    def match(self, uri: str) -> ResourceMatch | None:
        return next(self.matches(uri), None)

    def matches(self, uri: str) -> Iterator[ResourceMatch]:
        """What serves ``uri``, best first: the resource of that URI, then each template that
        matches it, in key order (a caller's gates may hide the first)."""
        spec = self.resources.get(uri)
        if spec is not None:
            yield ResourceMatch(uri=uri, spec=spec)
        for template_spec, template in self.templates:
            variables = template.match(uri)
            if variables is not None:
                yield ResourceMatch(uri=uri, spec=template_spec, variables=variables)
