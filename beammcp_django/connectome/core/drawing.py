"""Drawings of the connectome: graphviz's ``dot`` lays a graph out as SVG markup to inline.

Three drawings share one function: the declared graph, the observed graph (edges labelled
with their counts) and the diff (every edge of either graph, styled by its class). Nothing a
node id holds reaches the SVG as markup: DOT names are generated (``n0``, ``n1``...), ids are
written only as label and tooltip text with backslashes doubled and HTML-like labels
disabled, and graphviz escapes that text for XML. ``draw`` is given at most the cap's edges
(``aggregate.py`` makes a larger graph fit), so a large host cannot stall the page in ``dot``.

Layouts are cached by the SHA-256 of the exact DOT source, in a small LRU in this process
(``layouts``): the same source always lays out to the same SVG, so a page view of an
unchanged graph, drawn with the same options, runs no ``dot`` at all. In process rather than
in Django's cache framework because this module is the connectome's core (no Django), a
layout is cheap to make once per serving process, and an SVG of a few hundred kilobytes is
a poor fit for a shared cache's item limits; bounded by entries so a walk through many
nodes' neighbourhoods cannot grow it without end.
"""

from __future__ import annotations

import hashlib
import math
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import graphviz

from beammcp_django.connectome.core.canonical import Edge, Graph, node_parts

# Above this many edges a graph is drawn aggregated (the edge table still lists every edge). With
# the effort limits below, dot laid out random 200-edge graphs among 30 to 200 nodes in 0.3 to
# 1.2 s each, 300 edges in up to 2.3 s (2026-11-29, one run each, the 2-core development
# machine; without the limits a dense 300-edge graph took 38 to 134 s). A page draws three.
DRAWING_CAP = 200
_LABEL_CHARACTERS = 48
# dot's crossing minimisation and network simplex grow fast on a dense graph: bound both.
# Counts are external labels (xlabel), placed after layout; a plain edge label becomes a
# virtual node dot must rank and order, which cost more than the rest of a dense layout.
_EFFORT = {"mclimit": "0.1", "nslimit": "2", "nslimit1": "2"}


@dataclass(frozen=True)
class Stroke:
    """How one class of edge is drawn, in DOT attributes (the legend reuses them)."""

    label: str
    color: str
    style: str  # "solid" | "dashed" | "bold"
    width: float

    def dot(self) -> dict[str, str]:
        return {
            "color": self.color,
            "fontcolor": self.color,
            "style": self.style,
            "penwidth": f"{self.width:g}",
        }

    @property
    def css(self) -> str:
        """A CSS border that looks like the stroke, for the legend's swatch."""
        line = "dashed" if self.style == "dashed" else "solid"
        return f"border-top: {max(self.width, 1.5) * 1.5:g}px {line} {self.color}"


STROKES: dict[str, Stroke] = {
    "declared": Stroke("declared", "#343a40", "solid", 1.2),
    "observed": Stroke("observed (label: calls)", "#1864ab", "solid", 1.2),
    "declared_and_observed": Stroke("declared and observed", "#343a40", "solid", 1.2),
    "declared_never_observed": Stroke(
        "declared, never observed (dead authority)", "#868e96", "dashed", 1.2
    ),
    "observed_but_undeclared": Stroke("observed but undeclared (drift)", "#e8590c", "bold", 3),
    "changed_sign": Stroke("changed sign", "#7048e8", "bold", 2.5),
}

_SHAPES = {
    "server": "box3d",
    "tool": "box",
    "resource": "note",
    "prompt": "component",
    "module": "ellipse",
    "effect": "hexagon",
}
# How many layouts (DOT source -> SVG) a process keeps: a page view draws up to five.
LAYOUTS_KEPT = 64
# What each tag's members are called in a group's label ("40 functions").
_MEMBERS = {"module": "function", "effect": "effect"}


@dataclass(frozen=True)
class DrawnEdge:
    source: str
    target: str
    kind: str
    stroke: str  # a key of STROKES; also the SVG element's class
    count: int | None = None  # calls, drawn as the label of an observed edge
    merged: int = 1  # how many edges of the graph it stands for (aggregate.py)


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "\N{REPLACEMENT CHARACTER}" for ch in text)


def _shorten(text: str) -> str:
    if len(text) <= _LABEL_CHARACTERS:
        return text
    return text[: _LABEL_CHARACTERS - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _text(*lines: str) -> str:
    """DOT text shown as is: no escape sequence (``\\N``, ``\\l``), never an HTML label."""
    joined = "\\n".join(_printable(line).replace("\\", "\\\\") for line in lines)
    return graphviz.nohtml(joined)


def node_tag(identity: str) -> str:
    """The identity tag of a node id: the component after the server name."""
    parts = identity.split("/")
    return parts[1] if len(parts) > 1 else ""


def node_label(identity: str) -> tuple[str, ...]:
    """A node's label lines: the name after the tag; for a function, its qualified name and
    arity over its module."""
    parts = node_parts(identity)
    if len(parts) < 3:
        return (_shorten(parts[0]),)
    tag, rest = parts[1], parts[2:]
    if tag == "module" and len(rest) >= 2:
        return (_shorten("/".join(rest[1:])), _shorten(rest[0]))
    return (_shorten("/".join(rest)),)


def declared_edges(graph: Graph) -> list[DrawnEdge]:
    return [DrawnEdge(e.source, e.target, e.kind, "declared") for e in graph.edges]


def observed_edges(weights: Mapping[Edge, int]) -> list[DrawnEdge]:
    return [
        DrawnEdge(e.source, e.target, e.kind, "observed", count) for e, count in weights.items()
    ]


def diff_edges(
    record: Mapping[str, Mapping[str, Sequence[Mapping[str, str]]]],
    counts: Mapping[tuple[str, str, str], int],
) -> list[DrawnEdge]:
    """Every edge of a diff record styled by its class, with its calls where observed."""
    return [
        DrawnEdge(
            item["from"],
            item["to"],
            item["kind"],
            name,
            counts.get((item["from"], item["to"], item["kind"])),
        )
        for name, items in record["classes"].items()
        for item in items
    ]


def _width(count: int | None) -> float:
    """Thicker with the count, on a log scale, so one hot edge does not hide the rest."""
    return 0 if not count else min(math.log10(count), 3)


class DrawingFailed(RuntimeError):
    """``dot`` is missing or refused the graph; the message says which."""


class LayoutCache:
    """The SVG of each DOT source laid out lately, the least recently used forgotten first;
    safe to share between the threads serving the admin."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._svgs: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            svg = self._svgs.get(key)
            if svg is not None:
                self._svgs.move_to_end(key)
            return svg

    def put(self, key: str, svg: str) -> None:
        with self._lock:
            self._svgs[key] = svg
            self._svgs.move_to_end(key)
            while len(self._svgs) > self.kept:
                self._svgs.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._svgs.clear()

    def __len__(self) -> int:
        return len(self._svgs)


layouts = LayoutCache(LAYOUTS_KEPT)


def _group_label(identity: str, size: int) -> tuple[str, ...]:
    """A group's label: its id after the server's name, and how many nodes it stands for."""
    tag = node_tag(identity)
    members = _MEMBERS.get(tag, tag)
    shown = "/".join(node_parts(identity)[1:])
    return (_shorten(shown), f"{size} {members}{'s' if size != 1 else ''}")


def draw(
    name: str,
    edges: Sequence[DrawnEdge],
    node_kinds: Mapping[str, str] | None = None,
    focus: str | None = None,
    groups: Mapping[str, int] | None = None,
) -> str:
    """The SVG markup of ``edges`` laid out by ``dot`` (or the cached layout of the same DOT
    source), every element id prefixed by ``name`` so several drawings share a page.
    ``node_kinds`` (id -> kind) picks shapes; ``focus`` is a node id drawn highlighted;
    ``groups`` (id -> how many nodes) marks the nodes that stand for several."""
    source = _dot(name, edges, dict(node_kinds or {}), focus, dict(groups or {}))
    key = hashlib.sha256(source.source.encode("utf-8", "surrogatepass")).hexdigest()
    cached = layouts.get(key)
    if cached is not None:
        return cached
    try:
        svg = source.pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise DrawingFailed("graphviz's dot is not installed") from None
    except subprocess.CalledProcessError as error:
        raise DrawingFailed(f"dot refused the graph (exit status {error.returncode})") from None
    # The XML prolog, doctype and comments before the root element are not for inline HTML.
    svg = svg[svg.index("<svg") :]
    layouts.put(key, svg)
    return svg


def _dot(
    name: str,
    edges: Sequence[DrawnEdge],
    kinds: Mapping[str, str],
    focus: str | None,
    groups: Mapping[str, int],
) -> graphviz.Digraph:
    """The DOT graph of ``draw``'s arguments, not laid out."""
    graph = graphviz.Digraph(
        name=name,
        engine="dot",
        graph_attr={"rankdir": "LR", "id": name, "bgcolor": "transparent", **_EFFORT},
        node_attr={"fontname": "Helvetica", "fontsize": "11", "margin": "0.08,0.04"},
        edge_attr={"fontname": "Helvetica", "fontsize": "10", "arrowsize": "0.7"},
    )
    names: dict[str, str] = {}
    for identity in _endpoints(edges):
        dot_name = names[identity] = f"n{len(names)}"
        kind = kinds.get(identity) or node_tag(identity)
        label = _group_label(identity, groups[identity]) if identity in groups else None
        attributes = {
            "label": _text(*(label or node_label(identity))),
            "tooltip": _text(identity),
            "shape": _SHAPES.get(kind, "ellipse"),
            "id": f"{name}-{dot_name}",
            "class": kind if kind in _SHAPES else "other",
        }
        if identity in groups:
            attributes.update(style="dashed")
            attributes["class"] += " group"
        if identity == focus:
            attributes.update(style="filled", fillcolor="#fff3bf", penwidth="2.5")
            attributes["class"] += " focus"
        graph.node(dot_name, **attributes)
    for index, edge in enumerate(edges):
        stroke = STROKES[edge.stroke]
        attributes = stroke.dot()
        stands_for = f", {edge.merged} edges" if edge.merged > 1 else ""
        attributes.update(
            id=f"{name}-e{index}",
            tooltip=_text(f"{edge.source} -> {edge.target} ({edge.kind}{stands_for})"),
            **{"class": edge.stroke},
        )
        if edge.count is not None:
            attributes["xlabel"] = str(edge.count)
            attributes["penwidth"] = f"{stroke.width + _width(edge.count):g}"
        elif edge.merged > 1:
            attributes["xlabel"] = f"\N{MULTIPLICATION SIGN}{edge.merged}"
        graph.edge(names[edge.source], names[edge.target], **attributes)
    return graph


def _endpoints(edges: Iterable[DrawnEdge]) -> list[str]:
    return list(dict.fromkeys(identity for e in edges for identity in (e.source, e.target)))
