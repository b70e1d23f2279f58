"""The catalog browser: every tool, resource, resource template, prompt and skill the endpoint
serves.

It reads the very objects the wire serves (``get_server().catalog``), so what the admin shows
is what ``tools/list`` advertises and ``tools/call`` enforces. Schemas are shown twice: as
indented JSON, exactly as advertised, and as a table of their properties for a reader.
Every entry links to its node in the connectome, and each tool lists the effects its
declared graph can reach and its observed graph did reach (``connectome/core/tool_effects.py``),
shown only to a user who may open the connectome: they are read from its graphs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib.admin import ModelAdmin
from django.contrib.admin.utils import quote, unquote
from django.http import Http404, HttpRequest
from django.template.response import TemplateResponse

from beammcp_django.admin.pages import connectome_url, page_context, page_url
from beammcp_django.admin.view_preview import preview_context
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.canonical import node_id
from beammcp_django.connectome.core.tool_effects import ToolEffect, tool_effects
from beammcp_django.connectome.exports import server_name
from beammcp_django.models import McpCatalog
from beammcp_django.process import get_server
from beammcp_django.protocol.catalog import ResourceTemplateSpec, ToolSpec
from beammcp_django.protocol.header_params import header_parameters
from beammcp_django.protocol.index import skills_of
from beammcp_django.protocol.skills import SkillSpec

TEMPLATES = "admin/beammcp_django"

# What the effect summary shows, said under it on both pages.
EFFECTS_COUNTED = (
    "what the tool's declared graph can reach, and what its observed graph did reach, with "
    "the calls counted on the observed effect edges into each effect from the nodes the tool "
    "reached (a function two tools share counts for both)."
)
# What the property table shows in its own columns; every other keyword is a constraint.
_DESCRIBED = frozenset({"type", "title", "description", "properties", "required", "x-mcp-header"})


@dataclass(frozen=True)
class Entry:
    """One catalog entry: its kind in the URL, the name it is listed by, its spec and its
    connectome node id (templates are ``resource`` nodes named by their URI template; a
    skill, listed by its SKILL.md's URI, has none)."""

    kind: str  # "tool" | "resource" | "template" | "prompt" | "skill"
    name: str
    spec: Any
    node: str

    @property
    def quoted(self) -> str:
        """The name as one URL segment (the admin's own quoting, safe for '/' and ':')."""
        return quote(self.name)


def entries(catalog: Any, server: str) -> list[Entry]:
    """The catalog's entries in the order it lists them: tools, resources, prompts."""
    found = [
        Entry("tool", spec.name, spec, node_id(server, "tool", spec.name)) for spec in catalog.tools
    ]
    for spec in catalog.resources:
        kind = "template" if isinstance(spec, ResourceTemplateSpec) else "resource"
        found.append(Entry(kind, spec.key, spec, node_id(server, "resource", spec.key)))
    found.extend(
        Entry("prompt", spec.name, spec, node_id(server, "prompt", spec.name))
        for spec in catalog.prompts
    )
    # A skill calls no host code, so it has no node in the connectome.
    found.extend(Entry("skill", spec.uri, spec, "") for spec in skills_of(catalog))
    return found


def _plain(item: Any) -> Any:
    """What ``json`` cannot write itself: a mapping that is not a dict (tuples it writes)."""
    if isinstance(item, Mapping):
        return dict(item)
    raise TypeError(f"{type(item).__name__} has no JSON form")


def as_json(value: Any) -> str:
    """Indented JSON of a spec's value."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=_plain)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_plain, separators=(", ", ": "))


def hints(spec: Any) -> dict[str, Any]:
    """A tool's annotation hints as the wire names them; none for other entries."""
    annotations = spec.annotations if isinstance(spec, ToolSpec) else None
    return annotations.to_wire() if annotations else {}


def who_may_use(spec: Any) -> list[str]:
    """What the entry's declaration demands of a caller, in words: what its gates check
    (hidden from whoever fails them) and the scopes using it needs (challenged); empty when
    it demands nothing."""
    access = getattr(spec, "access", None)
    if access is None:
        return []
    shown = list(access.shown) or (["a visibility gate"] if access.gates else [])
    if access.scopes:
        shown.append("scopes: " + " ".join(sorted(access.scopes)))
    return shown


@dataclass(frozen=True)
class Property:
    """One row of a schema's property table."""

    path: str  # dotted from the root; "[]" marks an array's items
    type: str
    required: bool
    title: str
    description: str
    constraints: tuple[tuple[str, str], ...]  # (keyword, its value as compact JSON)
    header: str  # "Mcp-Param-<Name>" when the property is mirrored into a header, else ""


def _type_of(schema: Mapping[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, Sequence):
        return " | ".join(str(item) for item in declared)
    for keyword in ("enum", "const", "anyOf", "oneOf", "allOf", "$ref"):
        if keyword in schema:
            return keyword
    return "any"


def properties(schema: Any, prefix: str = "") -> list[Property]:
    """Every property reached from the root through ``properties`` (and an array's
    ``items``), depth first, in the order the schema lists them."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    required = schema.get("required")
    required_names = set(required) if isinstance(required, Sequence) else set()
    rows: list[Property] = []
    for name, sub in schema["properties"].items():
        path = f"{prefix}{name}"
        if not isinstance(sub, Mapping):  # a boolean schema: true admits anything
            rows.append(Property(path, _compact(sub), name in required_names, "", "", (), ""))
            continue
        items = sub.get("items")
        nested_items = isinstance(items, Mapping) and isinstance(items.get("properties"), Mapping)
        skipped = _DESCRIBED | ({"items"} if nested_items else set())
        header = sub.get("x-mcp-header")
        rows.append(
            Property(
                path=path,
                type=_type_of(sub),
                required=name in required_names,
                title=str(sub.get("title", "")),
                description=str(sub.get("description", "")),
                constraints=tuple(
                    (keyword, _compact(value))
                    for keyword, value in sub.items()
                    if keyword not in skipped
                ),
                header=f"Mcp-Param-{header}" if isinstance(header, str) else "",
            )
        )
        rows.extend(properties(sub, f"{path}."))
        if nested_items:
            rows.extend(properties(items, f"{path}[]."))
    return rows


@dataclass(frozen=True)
class SchemaView:
    """A schema as the page shows it: the advertised JSON and its property table."""

    json: str
    properties: list[Property]

    @classmethod
    def of(cls, schema: Any) -> SchemaView:
        return cls(as_json(schema), properties(schema))


def connectome_link(connectome: str | None, entry: Entry) -> str | None:
    """The connectome page (``connectome``, None where the user may not open it) filtered
    to the edges touching the entry's node."""
    if connectome is None or not entry.node:
        return None
    return f"{connectome}?{urlencode({'node': entry.node})}#edges"


def entry_url(model_admin: ModelAdmin, entry: Entry) -> str:
    return page_url(model_admin.admin_site, McpCatalog, "entry", entry.kind, entry.quoted)


def effect_summaries(tools: list[Entry], connectome: str | None) -> dict[str, list[ToolEffect]]:
    """Each tool's effects by node id; nothing where the user may not open the connectome
    (``connectome`` None), whose graphs they come from."""
    if connectome is None or not tools:
        return {}
    declared, seen = exports.declared().graph, exports.observed()  # flushes this process
    return tool_effects(declared, seen.graph, seen.weights, [entry.node for entry in tools])


def _catalog_entries() -> list[Entry]:
    return entries(get_server().catalog, server_name())


def catalog_view(request: HttpRequest, model_admin: ModelAdmin) -> TemplateResponse:
    """Every entry by kind, each linked to its page and its connectome node."""
    connectome = connectome_url(model_admin.admin_site, request)
    found = _catalog_entries()
    effects = effect_summaries([e for e in found if e.kind == "tool"], connectome)
    rows = [
        {
            "entry": entry,
            "url": entry_url(model_admin, entry),
            "connectome": connectome_link(connectome, entry),
            "hints": hints(entry.spec),
            "access": who_may_use(entry.spec),
            "effects": effects.get(entry.node, []),
        }
        for entry in found
    ]
    by_kind = {
        kind: [row for row in rows if row["entry"].kind == kind]
        for kind in ("tool", "resource", "template", "prompt", "skill")
    }
    context = page_context(
        request,
        model_admin,
        "MCP catalog",
        server=server_name(),
        tools=by_kind["tool"],
        resources=by_kind["resource"],
        templates=by_kind["template"],
        prompts=by_kind["prompt"],
        skills=by_kind["skill"],
        effects_counted=EFFECTS_COUNTED,
    )
    return TemplateResponse(request, f"{TEMPLATES}/catalog.html", context)


def catalog_entry_view(
    request: HttpRequest, model_admin: ModelAdmin, kind: str, quoted: str
) -> TemplateResponse:
    """One entry: its schemas, annotations, header parameters, or its prompt's arguments."""
    name = unquote(quoted)
    entry = next((e for e in _catalog_entries() if e.kind == kind and e.name == name), None)
    if entry is None:
        raise Http404("no catalog entry of that kind and name")
    spec = entry.spec
    connectome = connectome_url(model_admin.admin_site, request)
    extra: dict[str, Any] = {}
    if isinstance(spec, ToolSpec):
        extra = {
            "effects": effect_summaries([entry], connectome).get(entry.node, []),
            "input_schema": SchemaView.of(spec.input_schema),
            "output_schema": SchemaView.of(spec.output_schema)
            if spec.output_schema is not None
            else None,
            "hints": hints(spec),
            "headers": header_parameters(spec.input_schema),
            "required_capabilities": as_json(spec.required_client_capabilities)
            if spec.required_client_capabilities
            else "",
        }
    extra.update(preview_context(request, model_admin, get_server().catalog, spec, who_may_use))
    if isinstance(spec, SkillSpec):
        extra = {
            "frontmatter": as_json(spec.frontmatter),
            "skill_md": spec.files[0].text,
        }
    context = page_context(
        request,
        model_admin,
        f"{entry.kind.capitalize()} {entry.name}",
        entry=entry,
        entry_row={"access": who_may_use(spec)},
        meta=as_json(spec.meta) if getattr(spec, "meta", None) else "",
        connectome=connectome_link(connectome, entry),
        effects_counted=EFFECTS_COUNTED,
        **extra,
    )
    return TemplateResponse(request, f"{TEMPLATES}/catalog_entry.html", context)
