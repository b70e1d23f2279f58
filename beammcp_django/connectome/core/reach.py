"""Questions a reviewer asks of a graph: can this entry reach that effect, can it without
crossing a gate (and if so, by which path), does the gate guard every path, and which nodes
must every path cross.

Built on networkx (a maintained graph library: BFS paths and Cooper-Harvey-Kennedy immediate
dominators), over the graph's own edges: a witness path is a list of the graph's ``Edge``
objects, never an invented hop. Between two nodes joined by several edges (different kinds or
provenances), the first in canonical order stands for the hop.
"""

from __future__ import annotations

from itertools import pairwise

import networkx as nx

from beammcp_django.connectome.core.canonical import Edge, Graph


class UnknownNode(KeyError):
    """A question named a node id the graph does not hold."""


def digraph_of(graph: Graph) -> nx.DiGraph:
    """The graph as a networkx digraph; each hop's ``edge`` attribute is the graph's first
    edge between the two nodes in canonical order."""
    digraph = nx.DiGraph()
    digraph.add_nodes_from(node.id for node in graph.nodes)
    for edge in sorted(graph.edges, key=lambda e: tuple(p.encode("utf-8") for p in e.key)):
        if not digraph.has_edge(edge.source, edge.target):
            digraph.add_edge(edge.source, edge.target, edge=edge)
    return digraph


def _known(digraph: nx.DiGraph, *node_ids: str) -> None:
    for node_id in node_ids:
        if node_id not in digraph:
            raise UnknownNode(node_id)


def _path(digraph: nx.DiGraph, entry: str, effect: str) -> list[Edge] | None:
    try:
        hops = nx.shortest_path(digraph, entry, effect)
    except nx.NetworkXNoPath:
        return None
    return [digraph.edges[a, b]["edge"] for a, b in pairwise(hops)]


def reaches(graph: Graph, entry: str, effect: str) -> list[Edge] | None:
    """A shortest path of the graph's edges from ``entry`` to ``effect``, or None."""
    digraph = digraph_of(graph)
    _known(digraph, entry, effect)
    return _path(digraph, entry, effect)


def reaches_avoiding(graph: Graph, entry: str, effect: str, gate: str) -> list[Edge] | None:
    """A path from ``entry`` to ``effect`` that never crosses ``gate`` (a witness that the
    gate can be bypassed), or None when every path crosses it or none exists."""
    digraph = digraph_of(graph)
    _known(digraph, entry, effect, gate)
    if gate in (entry, effect):
        return None
    return _path(nx.restricted_view(digraph, [gate], []), entry, effect)


def must_cross(graph: Graph, entry: str, effect: str) -> list[str]:
    """The nodes every path from ``entry`` to ``effect`` crosses, from entry to effect
    (both included); empty when ``effect`` is unreachable."""
    digraph = digraph_of(graph)
    _known(digraph, entry, effect)
    dominators = nx.immediate_dominators(digraph, entry)
    if effect not in dominators:
        return []
    chain = [effect]
    while chain[-1] != entry:
        chain.append(dominators[chain[-1]])
    return list(reversed(chain))


def dominates(graph: Graph, entry: str, gate: str, effect: str) -> bool:
    """True when ``effect`` is reachable from ``entry`` and every such path crosses ``gate``."""
    _known(digraph_of(graph), gate)
    return gate in must_cross(graph, entry, effect)
