"""A caller's part of a connectome: a graph without the catalog entries hidden from that caller
and without everything that belongs to those entries alone.

An entry a gate hides is answered as if it did not exist (``protocol/access.py``), and a graph
naming it, its handler or the effects only it reaches would be an oracle for it. What an
entry *owns*: its node, its handler and the methods of the handler's class, and every node
reachable from those; less every node a visible entry reaches, which the caller may see
whichever hidden entry also reaches it. Nodes no entry reaches (a helper nobody calls) stay:
they belong to no entry. The graph left has no edge with a removed end, so a diff, a count or
an audit computed over it says nothing of the hidden entries.

No Django here: the entries hidden from a caller are decided by the caller's gates
(``connectome/resources.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable

from beammcp_django.connectome.core.canonical import Graph, node_parts

# The identity tag of a host function's node (``declared.py``: ``<server>/module/...``).
_FUNCTION_TAG = "module"


def _reach(successors: dict[str, list[str]], starts: Iterable[str]) -> set[str]:
    seen = set(starts)
    pending = list(seen)
    while pending:
        for target in successors.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def _declaring_class(handler: str) -> tuple[str, str] | None:
    """The module and class of a handler method's node id (``<server>/module/<module>/
    <Class.method>/<arity>``); None for a plain function's."""
    parts = node_parts(handler)
    if len(parts) != 5 or parts[1] != _FUNCTION_TAG:
        return None
    owner = parts[3].rpartition(".")[0]
    return (parts[2], owner + ".") if owner else None


def _class_members(graph: Graph, handlers: Iterable[str]) -> set[str]:
    """Every function node of the classes declaring ``handlers``."""
    classes = {found for found in map(_declaring_class, handlers) if found is not None}
    if not classes:
        return set()
    members = set()
    for node in graph.nodes:
        parts = node_parts(node.id)
        if len(parts) == 5 and parts[1] == _FUNCTION_TAG:
            module, qualname = parts[2], parts[3]
            if any(module == m and qualname.startswith(owner) for m, owner in classes):
                members.add(node.id)
    return members


def owned_nodes(
    graph: Graph,
    hidden: Collection[str],
    visible: Collection[str],
    hidden_handlers: Collection[str] = (),
) -> frozenset[str]:
    """The nodes of ``graph`` that belong to the ``hidden`` entries alone (entry node ids),
    given the ``visible`` ones; ``hidden_handlers`` are the hidden entries' handler node ids
    (their classes' other methods belong to them too, reached or not)."""
    if not hidden:
        return frozenset()
    successors: dict[str, list[str]] = defaultdict(list)
    for edge in graph.edges:
        successors[edge.source].append(edge.target)
    starts = {*hidden, *hidden_handlers, *_class_members(graph, hidden_handlers)}
    owned = _reach(successors, starts) - _reach(successors, visible)
    return frozenset(owned | set(hidden))


def without(graph: Graph, removed: Collection[str]) -> Graph:
    """``graph`` with the ``removed`` nodes and every edge touching one of them left out."""
    if not removed:
        return graph
    return Graph(
        tuple(node for node in graph.nodes if node.id not in removed),
        tuple(
            edge
            for edge in graph.edges
            if edge.source not in removed and edge.target not in removed
        ),
    )
