"""The four reach questions, asked of a named graph and answered as one JSON-able record.

``manage.py mcp_connectome reach`` prints the record; the admin's connectome page draws and
lists it: one function, so the two give the same answer. The questions (``reach.py``):

- ``reaches``: can ``entry`` reach ``effect``? The path: a shortest witness.
- ``avoiding``: can it without crossing ``gate``? The path: the bypass.
- ``dominates``: does ``gate`` guard every path? The path: a bypass, when one exists.
- ``must_cross``: which nodes must every path cross (``nodes``, entry to effect)? True when
  the effect is reachable; the path: a shortest witness.

``merged`` is the declared and the observed graph together (an edge of either; between two
nodes both sides join, the hop is the first edge in canonical order, as everywhere in
``reach``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from beammcp_django.connectome.core.canonical import Edge, Graph, Node
from beammcp_django.connectome.core.reach import (
    UnknownNode,
    dominates,
    must_cross,
    reaches,
    reaches_avoiding,
)

QUESTIONS = ("reaches", "avoiding", "dominates", "must_cross")
GRAPH_NAMES = ("declared", "observed", "merged")
# The questions that need a gate.
GATED = frozenset({"avoiding", "dominates"})


class BadQuestion(ValueError):
    """The question cannot be asked as put; the message names what is wrong."""


def merged(declared: Graph, observed: Graph) -> Graph:
    """Both graphs' nodes (a declared node's kind and level first) and every edge of either."""
    nodes: dict[str, Node] = {node.id: node for node in observed.nodes}
    nodes.update({node.id: node for node in declared.nodes})
    return Graph(tuple(nodes.values()), (*declared.edges, *observed.edges))


def _hops(path: Sequence[Edge] | None) -> list[dict[str, str]]:
    return [
        {"from": e.source, "kind": e.kind, "provenance": e.provenance, "to": e.target}
        for e in path or ()
    ]


def ask(
    graph: Graph,
    graph_name: str,
    question: str,
    entry: str,
    effect: str,
    gate: str | None = None,
) -> dict[str, Any]:
    """The answer record: the question as asked, ``answer``, the witness ``path`` (the
    graph's own edges) and, for ``must_cross``, the ``nodes`` every path crosses."""
    if question not in QUESTIONS:
        raise BadQuestion(f"no question named {question!r}; ask one of {', '.join(QUESTIONS)}")
    if question in GATED and not gate:
        raise BadQuestion(f"the question {question!r} needs a gate")
    if question not in GATED and gate:
        raise BadQuestion(f"the question {question!r} takes no gate")
    record: dict[str, Any] = {
        "effect": effect,
        "entry": entry,
        "gate": gate,
        "graph": graph_name,
        "question": question,
    }
    try:
        if question == "reaches":
            path = reaches(graph, entry, effect)
            record.update(answer=path is not None, path=_hops(path))
        elif question == "avoiding":
            path = reaches_avoiding(graph, entry, effect, gate or "")
            record.update(answer=path is not None, path=_hops(path))
        elif question == "dominates":
            guarded = dominates(graph, entry, gate or "", effect)
            bypass = None if guarded else reaches_avoiding(graph, entry, effect, gate or "")
            record.update(answer=guarded, path=_hops(bypass))
        else:
            chain = must_cross(graph, entry, effect)
            path = reaches(graph, entry, effect) if chain else None
            record.update(answer=bool(chain), path=_hops(path), nodes=chain)
    except UnknownNode as unknown:
        raise BadQuestion(f"the {graph_name} graph has no node {unknown.args[0]!r}") from None
    return record
