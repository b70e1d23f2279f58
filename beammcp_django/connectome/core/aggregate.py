"""Views of a connectome drawing that always fit the drawing cap: the graph aggregated, and
one node's neighbourhood at full detail.

A large host's graph has thousands of edges, which ``dot`` cannot lay out within a page view.
The aggregated view keeps the shape a reviewer reads (entries to the code to its effects) and
merges nodes into groups, coarser level by level until the edges fit:

1. ``modules``: each function into its module; each effect into its effect and app label
   (``model.write`` on ``demo.*``), or its effect alone when its subject is no model.
2. ``packages``: each module into its top package; each effect into its effect alone.
3. ``entries``: as ``packages``, and the entries into one node per kind (every tool, every
   resource, every prompt).
4. ``lightest omitted``: ``entries`` with its lightest edges left out, down to the cap (how
   many is said); only a graph with an uncommon variety of kinds gets here.

Edges between the same two groups, of the same kind and class, become one edge: their calls
summed (where counted) and how many edges it stands for kept. The neighbourhood is a node's
in- and out-edges as they are, the lightest left out beyond the cap. Nothing here knows
Django; the groups are node ids made by the ordinary rules, so they are drawn, escaped and
tooltipped as any node is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from beammcp_django.connectome.core.canonical import Once, node_id, node_parts
from beammcp_django.connectome.core.drawing import DrawnEdge
from beammcp_django.connectome.core.effects import MODEL_DELETE, MODEL_READ, MODEL_WRITE, effect_of

# The effects whose subject is ``app_label.Model``: grouped by app at the first level.
_MODEL_EFFECTS = frozenset({MODEL_READ, MODEL_WRITE, MODEL_DELETE})
# The node tags that are entries of the catalog (kept apart until the third level).
ENTRY_TAGS = ("tool", "resource", "prompt")
ANY = "*"

Grouping = Callable[[str], str]


@dataclass(frozen=True)
class View:
    """What one drawing shows: its edges, the level they were grouped at, how many nodes
    each group stands for (a node drawn as itself is absent), and how many edges were left
    out to fit."""

    edges: tuple[DrawnEdge, ...]
    level: str  # "full", "modules", "packages", "entries", "lightest omitted", "neighbourhood"
    members: Mapping[str, int] = field(default_factory=dict)
    omitted: int = 0


def _server(identity: str) -> str:
    return node_parts(identity)[0]


def _function_module(identity: str) -> str | None:
    """A function node's module (``<server>/module/<module>/<name>/<arity>``), else None."""
    parts = node_parts(identity)
    return parts[2] if len(parts) >= 4 and parts[1] == "module" else None


def _effect_group(identity: str, by_app: bool) -> str | None:
    effect = effect_of(identity)
    if effect is None:
        return None
    rest: tuple[str, ...] = ()
    if by_app and effect.name in _MODEL_EFFECTS and effect.subject:
        rest = (f"{effect.subject.split('.', 1)[0]}.{ANY}",)
    return node_id(_server(identity), "effect", effect.name, *rest)


def by_module(identity: str) -> str:
    """Level 1: a function into its module, an effect into its effect and app label."""
    module = _function_module(identity)
    if module is not None:
        return node_id(_server(identity), "module", module)
    return _effect_group(identity, by_app=True) or identity


def by_package(identity: str) -> str:
    """Level 2: a function into its module's top package, an effect into its effect."""
    module = _function_module(identity)
    if module is not None:
        return node_id(_server(identity), "module", f"{module.split('.', 1)[0]}.{ANY}")
    return _effect_group(identity, by_app=False) or identity


def by_entry_kind(identity: str) -> str:
    """Level 3: as ``by_package``, and every entry into one node of its kind."""
    parts = node_parts(identity)
    if len(parts) >= 3 and parts[1] in ENTRY_TAGS:
        return node_id(parts[0], parts[1], ANY)
    return by_package(identity)


LEVELS: tuple[tuple[str, Grouping], ...] = (
    ("modules", by_module),
    ("packages", by_package),
    ("entries", by_entry_kind),
)


def _weight(edge: DrawnEdge) -> tuple[int, int]:
    """Heavier first: by calls, then by how many edges it stands for."""
    return (edge.count or 0, edge.merged)


def _summed(first: int | None, second: int | None) -> int | None:
    """Two edges' calls together; None when neither was counted (a declared edge)."""
    return None if first is None and second is None else (first or 0) + (second or 0)


def grouped(edges: Iterable[DrawnEdge], group: Grouping) -> tuple[list[DrawnEdge], dict[str, int]]:
    """The edges between groups (one per two groups, kind and class; calls summed, merged
    edges counted), and how many nodes each group that merged nodes stands for. Each node
    is grouped once: a node is an endpoint of many edges, and its id is parsed to group it."""
    group = Once(group).__getitem__
    merged: dict[tuple[str, str, str, str], DrawnEdge] = {}
    members: dict[str, set[str]] = {}
    for edge in edges:
        source, target = group(edge.source), group(edge.target)
        for identity, into in ((edge.source, source), (edge.target, target)):
            members.setdefault(into, set()).add(identity)
        key = (source, target, edge.kind, edge.stroke)
        known = merged.get(key)
        if known is None:
            merged[key] = DrawnEdge(source, target, edge.kind, edge.stroke, edge.count, edge.merged)
            continue
        count = _summed(known.count, edge.count)
        merged[key] = DrawnEdge(
            source, target, edge.kind, edge.stroke, count, known.merged + edge.merged
        )
    sizes = {into: len(nodes) for into, nodes in members.items() if nodes != {into}}
    return list(merged.values()), sizes


def _lightest_omitted(edges: Sequence[DrawnEdge], cap: int) -> tuple[tuple[DrawnEdge, ...], int]:
    """The heaviest ``cap`` edges in their first order, and how many were left out."""
    if len(edges) <= cap:
        return tuple(edges), 0
    kept = set(sorted(range(len(edges)), key=lambda i: _weight(edges[i]), reverse=True)[:cap])
    return tuple(edge for i, edge in enumerate(edges) if i in kept), len(edges) - cap


def fitted(edges: Sequence[DrawnEdge], cap: int) -> View:
    """The edges as they are when they fit, else the first level of aggregation that fits
    (the last, its lightest edges left out, when none does)."""
    if len(edges) <= cap:
        return View(tuple(edges), "full")
    coarsest: tuple[list[DrawnEdge], dict[str, int]] = ([], {})
    for name, group in LEVELS:
        coarsest = grouped(edges, group)
        if len(coarsest[0]) <= cap:
            return View(tuple(coarsest[0]), name, coarsest[1])
    kept, omitted = _lightest_omitted(coarsest[0], cap)
    return View(kept, "lightest omitted", coarsest[1], omitted)


def neighbourhood(edges: Iterable[DrawnEdge], node: str, cap: int) -> View:
    """``node``'s in- and out-edges at full detail, the lightest left out beyond ``cap``."""
    touching = [edge for edge in edges if node in (edge.source, edge.target)]
    kept, omitted = _lightest_omitted(touching, cap)
    return View(kept, "neighbourhood", {}, omitted)
