"""The connectome page and its downloads.

The page flushes this process's counts, then shows the declared graph, the observed graph
(merged over every process) and their diff, each drawn by ``dot`` below the cap; every edge
of either graph in a table filtered on the server (a GET form, no JavaScript); the store's
rows per edge and per process; the completeness bound; and the three canonical exports with
their digests. The downloads serve ``exports.export(name).data`` unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.response import TemplateResponse

from beammcp_django.admin_views import page_context, page_url
from beammcp_django.connectome import exports
from beammcp_django.connectome.annotations import records
from beammcp_django.connectome.canonical import ALGORITHMS, Uncanonical
from beammcp_django.connectome.diff import CLASSES, diff
from beammcp_django.connectome.drawing import (
    STROKES,
    DrawingFailed,
    DrawnEdge,
    declared_edges,
    diff_edges,
    draw,
    observed_edges,
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


def _drawing(
    name: str,
    title: str,
    edges: list[DrawnEdge],
    cap: int,
    kinds: Mapping[str, str],
    focus: str | None,
) -> Drawing:
    if not edges:
        return Drawing(name, title, 0, note="No edges.")
    if len(edges) > cap:
        return Drawing(
            name,
            title,
            len(edges),
            note=f"Not drawn: {len(edges)} edges, above the drawing cap of {cap}. "
            "The edge table lists every edge; the export holds the whole graph.",
        )
    try:
        return Drawing(name, title, len(edges), svg=draw(name, edges, kinds, focus))
    except DrawingFailed as error:
        return Drawing(name, title, len(edges), note=f"Not drawn: {error}.")


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
    drawings = [
        _drawing("declared", "Declared graph", declared_edges(declared.graph), cap, kinds, focus),
        _drawing("observed", "Observed graph", observed_edges(seen.weights), cap, kinds, focus),
        _drawing("diff", "Diff", diff_edges(record, counts), cap, kinds, focus),
    ]
    filters = {
        key: value for key in ("edge_class", "kind", "q", "node") if (value := request.GET.get(key))
    }
    downloads = [_download(model_admin, name, algorithm) for name in exports.GRAPHS]
    context = page_context(
        request,
        model_admin,
        "Connectome",
        server=exports.server_name(),
        window=seen.window,
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
