"""The connectome page and its downloads.

The page flushes this process's counts, then shows the annotation audit's findings; a reach
form answering the four reach questions exactly as ``manage.py mcp_connectome reach`` does
(``exports.reach_answer``), its witness path drawn and listed; the declared graph, the
observed graph (merged over every process) and their diff, each drawn by ``dot`` at full
detail within the cap and aggregated above it (``connectome/core/aggregate.py``), and a chosen
node's neighbourhood at full detail; every edge of either graph in a table filtered on the
server (GET forms, no JavaScript); the store's rows per edge and per process; the
completeness bound; and the three canonical exports with their digests. The downloads serve
``exports.export(name).data`` unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.response import TemplateResponse

from beammcp_django.admin.pages import page_context, page_url
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.aggregate import ENTRY_TAGS, View, fitted, neighbourhood
from beammcp_django.connectome.core.annotations import Finding, records
from beammcp_django.connectome.core.canonical import ALGORITHMS, Graph, Uncanonical
from beammcp_django.connectome.core.declared import Declared
from beammcp_django.connectome.core.diff import CLASSES, diff
from beammcp_django.connectome.core.drawing import (
    STROKES,
    DrawingFailed,
    DrawnEdge,
    declared_edges,
    diff_edges,
    draw,
    node_tag,
    observed_edges,
)
from beammcp_django.connectome.core.effects import effect_of
from beammcp_django.connectome.core.questions import (
    GATED,
    GRAPH_NAMES,
    QUESTIONS,
    BadQuestion,
    merged,
)
from beammcp_django.models import Connectome, ObservedEdge

EdgeLabel = tuple[str, str, str]
# The legend: the diff's classes from the expected to the suspicious, then the observed
# graph's own stroke.
LEGEND = (
    "declared_and_observed",
    "declared_never_observed",
    "observed_but_undeclared",
    "changed_sign",
    "observed",
)
# How each level of aggregation groups the graph, in the note above its drawing.
AGGREGATED = {
    "modules": "functions grouped by module, effects by effect and app",
    "packages": "functions grouped by top package, effects by effect",
    "entries": "functions grouped by top package, effects by effect, entries by kind",
    "lightest omitted": "functions grouped by top package, effects by effect, entries by kind",
}


class EdgeFilter(forms.Form):
    """The edge table's filter: a class, a kind, text in either endpoint, or one node."""

    edge_class = forms.ChoiceField(
        label="Class", required=False, choices=[("", "any"), *((c, c) for c in CLASSES)]
    )
    kind = forms.ChoiceField(label="Kind", required=False, choices=[("", "any")])
    q = forms.CharField(label="From or to contains", required=False, max_length=500)
    node = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    def __init__(self, data: Any, kinds: Iterable[str]) -> None:
        super().__init__(data)
        self.fields["kind"].choices = [("", "any"), *((k, k) for k in sorted(set(kinds)))]

    def predicate(self) -> Any:
        """A test on (class, from, to, kind); everything passes when the form is invalid."""
        wanted = self.cleaned_data if self.is_valid() else {}
        edge_class, kind = wanted.get("edge_class"), wanted.get("kind")
        text, node = (wanted.get("q") or "").casefold(), wanted.get("node")

        def passes(found_class: str, source: str, target: str, found_kind: str) -> bool:
            return (
                (not edge_class or found_class == edge_class)
                and (not kind or found_kind == kind)
                and (not text or text in source.casefold() or text in target.casefold())
                and (not node or node in (source, target))
            )

        return passes


@dataclass(frozen=True)
class EdgeRow:
    edge_class: str
    source: str
    target: str
    kind: str
    count: int | None
    signs: str  # "declared -> observed" for a changed sign, else ""


@dataclass
class Attributed:
    """One edge of the merged store: its total and each process's own row."""

    label: EdgeLabel
    edge_class: str
    rows: list[ObservedEdge] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(row.count for row in self.rows)

    @property
    def first_seen(self) -> datetime:
        return min(row.first_seen for row in self.rows)

    @property
    def last_seen(self) -> datetime:
        return max(row.last_seen for row in self.rows)


@dataclass(frozen=True)
class Drawing:
    name: str
    title: str
    edges: int
    svg: str = ""
    note: str = ""


def _algorithm(request: HttpRequest) -> str:
    return request.GET.get("algorithm") if request.GET.get("algorithm") in ALGORITHMS else "sha256"


def _require_view(request: HttpRequest, model_admin: ModelAdmin) -> None:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied


def _view_note(view: View, edges: int, cap: int) -> str:
    """What an aggregated or trimmed view shows, said above its drawing; "" at full detail."""
    if view.level == "full":
        return ""
    if view.level == "neighbourhood":
        shown = f"{len(view.edges)} edge{'s' if len(view.edges) != 1 else ''} at full detail"
    else:
        shown = (
            f"Aggregated to fit the drawing cap of {cap}: {edges} edges drawn as "
            f"{len(view.edges)}, {AGGREGATED[view.level]} (a dashed node stands for several; "
            "an edge's tooltip says how many it stands for). Choose a node in the edge table "
            "to draw its neighbourhood at full detail"
        )
    if view.omitted:
        shown += f"; the {view.omitted} lightest edges left out to fit the cap of {cap}"
    return shown + "."


def _drawing(
    name: str,
    title: str,
    edges: Sequence[DrawnEdge],
    view: View,
    cap: int,
    kinds: Mapping[str, str],
    focus: str | None,
) -> Drawing:
    """One drawing of ``view`` (``edges`` is what it shows, aggregated or in part)."""
    if not view.edges:
        return Drawing(name, title, len(edges), note="No edges.")
    note = _view_note(view, len(edges), cap)
    try:
        svg = draw(name, view.edges, kinds, focus, view.members)
    except DrawingFailed as error:
        return Drawing(name, title, len(edges), note=f"Not drawn: {error}.")
    return Drawing(name, title, len(edges), svg=svg, note=note)


def _graph_drawing(
    name: str,
    title: str,
    edges: Sequence[DrawnEdge],
    cap: int,
    kinds: Mapping[str, str],
    focus: str | None,
) -> Drawing:
    """A whole graph: at full detail within the cap, aggregated to fit above it."""
    return _drawing(name, title, edges, fitted(edges, cap), cap, kinds, focus)


def _neighbourhood_drawing(
    edges: Sequence[DrawnEdge], focus: str, cap: int, kinds: Mapping[str, str]
) -> Drawing:
    """The chosen node's in- and out-edges of either graph, at full detail, by diff class."""
    view = neighbourhood(edges, focus, cap)
    return _drawing("neighbourhood", "Neighbourhood", view.edges, view, cap, kinds, focus)


@dataclass(frozen=True)
class FindingRow:
    """One finding of the annotation audit as the page lists it."""

    finding: Finding
    annotation: str  # "readOnlyHint: true"
    nodes: tuple[str, ...]  # the witness path's nodes, tool to effect


def _finding_rows(audit: Iterable[Finding]) -> list[FindingRow]:
    return [
        FindingRow(
            finding,
            f"{finding.hint}: {str(finding.value).lower()}",
            (finding.path[0].source, *(edge.target for edge in finding.path)),
        )
        for finding in audit
    ]


class ReachForm(forms.Form):
    """One reach question (``questions.ask``): node ids whole or without the server's name,
    as ``manage.py mcp_connectome reach`` takes them."""

    graph = forms.ChoiceField(choices=[(name, name) for name in GRAPH_NAMES], initial="declared")
    question = forms.ChoiceField(choices=[(name, name) for name in QUESTIONS])
    entry = forms.CharField(
        max_length=2000,
        widget=forms.TextInput(attrs={"list": "reach-entries", "size": 50}),
        error_messages={"required": "Name the entry: a tool, resource, prompt or function node."},
    )
    effect = forms.CharField(
        max_length=2000,
        widget=forms.TextInput(attrs={"list": "reach-effects", "size": 50}),
        error_messages={"required": "Name the effect: the node the entry may reach."},
    )
    gate = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={"size": 50}),
        help_text=f"Only for {' and '.join(sorted(GATED))}: any node.",
    )
    prefix = "reach"

    @classmethod
    def of(cls, query: Mapping[str, Any]) -> ReachForm:
        """Bound when the query asks a question (the page's other forms leave it unbound)."""
        asked = f"{cls.prefix}-question" in query
        return cls(query if asked else None)


@dataclass(frozen=True)
class ReachAnswer:
    """The answer record, as the command prints it, in words, listed and drawn."""

    record: Mapping[str, Any]
    printed: str  # exactly the command's output
    verdict: str
    drawing: Drawing | None


def _verdict(record: Mapping[str, Any]) -> str:
    """The answer in words."""
    entry, effect, gate = (
        exports.as_typed(record[key] or "") for key in ("entry", "effect", "gate")
    )
    yes, question = record["answer"], record["question"]
    if question == "reaches":
        return f"{entry} reaches {effect}." if yes else f"{entry} cannot reach {effect}."
    if question == "avoiding":
        if yes:
            return f"{entry} reaches {effect} without crossing {gate}: the bypass below."
        return f"{entry} cannot reach {effect} without crossing {gate}."
    if question == "dominates":
        if yes:
            return f"{gate} guards every path from {entry} to {effect}."
        if record["path"]:
            return f"{gate} does not guard every path: the bypass below avoids it."
        return f"{entry} cannot reach {effect}, so {gate} guards nothing."
    if yes:
        return f"Every path from {entry} to {effect} crosses the nodes listed, in order."
    return f"{entry} cannot reach {effect}."


def _path_edges(record: Mapping[str, Any]) -> list[DrawnEdge]:
    return [
        DrawnEdge(
            hop["from"],
            hop["to"],
            hop["kind"],
            hop["provenance"] if hop["provenance"] in STROKES else "declared",
        )
        for hop in record["path"]
    ]


def _reach_answer(
    form: ReachForm, graphs: Mapping[str, Graph], cap: int, kinds: Mapping[str, str]
) -> ReachAnswer | None:
    """The answer to a valid form over the page's own ``graphs`` (by name, as read for the
    rest of the page), or None with the refusal added to the form's errors."""
    if not form.is_bound or not form.is_valid():
        return None
    asked = form.cleaned_data
    name = asked["graph"]
    graph = graphs[name] if name in graphs else merged(graphs["declared"], graphs["observed"])
    try:
        record = exports.reach_answer(
            name, asked["question"], asked["entry"], asked["effect"], asked["gate"], graph
        )
    except BadQuestion as refusal:
        form.add_error(None, str(refusal))
        return None
    path = _path_edges(record)
    drawing = None
    if path:
        drawing = _graph_drawing("reach", "Witness path", path, cap, kinds, record["gate"])
    printed = json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False)
    return ReachAnswer(record, printed, _verdict(record), drawing)


def _choices(graphs: Iterable[Graph]) -> dict[str, list[str]]:
    """The reach form's suggestions, ids without the server's name: every entry node and
    every effect node of either graph (any other node is typed)."""
    ids = sorted({node.id for graph in graphs for node in graph.nodes})
    return {
        "entries": [exports.as_typed(i) for i in ids if node_tag(i) in ENTRY_TAGS],
        "effects": [exports.as_typed(i) for i in ids if effect_of(i) is not None],
    }


def _edge_rows(record: Mapping[str, Any], counts: Mapping[EdgeLabel, int]) -> list[EdgeRow]:
    rows = []
    for edge_class, items in record["classes"].items():
        for item in items:
            label = (item["from"], item["to"], item["kind"])
            signs = ""
            if edge_class == "changed_sign":
                signs = f"{item['declared_sign']} \N{RIGHTWARDS ARROW} {item['observed_sign']}"
            rows.append(EdgeRow(edge_class, *label, counts.get(label), signs))
    return rows


def _attribution(classes: Mapping[EdgeLabel, str]) -> list[Attributed]:
    edges: dict[EdgeLabel, Attributed] = {}
    for row in exports.attribution():
        label = (row.source, row.target, row.kind)
        if label not in edges:
            edges[label] = Attributed(label, classes.get(label, "observed_but_undeclared"))
        edges[label].rows.append(row)
    return list(edges.values())


def _download(model_admin: ModelAdmin, name: str, algorithm: str) -> dict[str, Any]:
    """One export's row: its digest and link, or why the store cannot be written canonically
    (two ids equal after NFC, say): the page still shows everything else."""
    try:
        export = exports.export(name, algorithm)
    except Uncanonical as refusal:
        return {"name": name, "refusal": str(refusal)}
    query = urlencode({"algorithm": algorithm})
    return {
        "name": name,
        "export": export,
        "url": f"{page_url(model_admin.admin_site, Connectome, 'export', name)}?{query}",
    }


def connectome_view(request: HttpRequest, model_admin: ModelAdmin) -> TemplateResponse:
    """The whole page; needs the view permission on observed edges."""
    _require_view(request, model_admin)
    algorithm = _algorithm(request)
    declared = exports.declared()
    seen = exports.observed()  # flushes this process's counts first
    audit = exports.annotation_findings(declared.graph, seen.graph)
    record = diff(declared.graph, seen.graph, seen.window, findings=records(audit))
    counts = {(e.source, e.target, e.kind): count for e, count in seen.weights.items()}
    rows = _edge_rows(record, counts)
    classes = {(row.source, row.target, row.kind): row.edge_class for row in rows}
    edge_filter = EdgeFilter(request.GET, (row.kind for row in rows))
    passes = edge_filter.predicate()
    focus = edge_filter.cleaned_data.get("node") if edge_filter.is_valid() else None
    kinds = {node.id: node.kind for node in (*declared.graph.nodes, *seen.graph.nodes)}
    cap = model_admin.drawing_cap
    drawings = _drawings(declared, seen, diff_edges(record, counts), cap, kinds, focus)
    reach_form = ReachForm.of(request.GET)
    graphs = {"declared": declared.graph, "observed": seen.graph}
    reach = _reach_answer(reach_form, graphs, cap, kinds)
    filters = {
        key: value for key in ("edge_class", "kind", "q", "node") if (value := request.GET.get(key))
    }
    # Each export flushes this process's counts first: the attribution below reads them.
    downloads = [_download(model_admin, name, algorithm) for name in exports.GRAPHS]
    context = page_context(
        request,
        model_admin,
        "Connectome",
        server=exports.server_name(),
        window=seen.window,
        findings=_finding_rows(audit),
        reach_form=reach_form,
        reach=reach,
        reach_choices=_choices((declared.graph, seen.graph)),
        drawings=drawings,
        legend=[(name, STROKES[name]) for name in LEGEND],
        edge_filter=edge_filter,
        filters=filters,
        rows=[row for row in rows if passes(row.edge_class, row.source, row.target, row.kind)],
        total_rows=len(rows),
        attribution=[
            edge for edge in _attribution(classes) if passes(edge.edge_class, *edge.label)
        ],
        bound=declared.bound,
        coverage=sorted(record["coverage"].items()),
        algorithm=algorithm,
        algorithms=ALGORITHMS,
        downloads=downloads,
    )
    return TemplateResponse(request, "admin/beammcp_django/connectome.html", context)


def _drawings(
    declared: Declared,
    seen: exports.Observed,
    every_edge: Sequence[DrawnEdge],
    cap: int,
    kinds: Mapping[str, str],
    focus: str | None,
) -> list[Drawing]:
    """The page's drawings: the declared graph, the observed one, their diff, and the
    focused node's neighbourhood when the filter names one."""
    drawings = [
        _graph_drawing(
            "declared", "Declared graph", declared_edges(declared.graph), cap, kinds, focus
        ),
        _graph_drawing(
            "observed", "Observed graph", observed_edges(seen.weights), cap, kinds, focus
        ),
        _graph_drawing("diff", "Diff", every_edge, cap, kinds, focus),
    ]
    if focus:
        drawings.append(_neighbourhood_drawing(every_edge, focus, cap, kinds))
    return drawings


def export_view(request: HttpRequest, model_admin: ModelAdmin, name: str) -> HttpResponse:
    """One graph's canonical bytes as a JSON attachment, its digest in a header."""
    _require_view(request, model_admin)
    if name not in exports.GRAPHS:
        raise Http404("no connectome graph of that name")
    algorithm = request.GET.get("algorithm", "sha256")
    if algorithm not in ALGORITHMS:
        return HttpResponseBadRequest(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    try:
        export = exports.export(name, algorithm)
    except Uncanonical as refusal:
        return HttpResponse(
            f"the {name} graph cannot be written canonically: {refusal}",
            status=409,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(export.data, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["Connectome-Digest"] = f"{export.algorithm}={export.hexdigest}"
    return response
