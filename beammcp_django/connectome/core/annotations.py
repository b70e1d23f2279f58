"""Each tool's reach held against its annotations: the findings of the annotation audit.

A tool annotated ``readOnlyHint: true`` whose graph reaches a write, ``destructiveHint:
false`` (and not read-only) reaching a delete, ``openWorldHint: false`` reaching the network
or mail: each is a finding, with the shortest path of the graph's own edges that witnesses
it. Only an annotation the host declared is held (the spec's defaults promise nothing of the
kind); which effects contradict which annotation is ``effects.CONTRADICTS``. The package
decides nothing about a finding: the diff record, the admin and ``manage.py check`` show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import networkx as nx

from beammcp_django.connectome.core.canonical import Edge, Graph, node_id
from beammcp_django.connectome.core.effects import CONTRADICTS, Effect, effect_of
from beammcp_django.connectome.core.reach import digraph_of

# The wire's name of each annotation the audit holds.
HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "open_world": "openWorldHint",
}


@dataclass(frozen=True)
class Finding:
    tool: str  # the tool's node id
    hint: str  # the annotation's wire name
    value: bool  # as declared
    effect: str  # the effect's node id
    graph: str  # "declared" or "observed"
    path: tuple[Edge, ...]  # a shortest witness, tool to effect

    @property
    def record(self) -> dict[str, Any]:
        """The finding as the diff record carries it (no path: the record stays one line per
        finding; the admin and the check draw the path)."""
        return {
            "effect": self.effect,
            "graph": self.graph,
            "hint": self.hint,
            "tool": self.tool,
            "value": self.value,
        }

    def sentence(self) -> str:
        """The finding in words, its path's node ids without the server's name."""
        effect = effect_of(self.effect) or Effect(self.effect)
        subject = f" {effect.subject}" if effect.subject else ""
        nodes = [self.path[0].source, *(edge.target for edge in self.path)]
        hops = " -> ".join(node.split("/", 1)[-1] for node in nodes)
        return (
            f"annotated {self.hint}: {str(self.value).lower()}, but its {self.graph} graph "
            f"reaches {effect.name}{subject}: {hops}"
        )


def _held(annotations: Any) -> list[tuple[str, bool, frozenset[str]]]:
    """The (annotation, value, contradicting effects) a tool's annotations promise."""
    if annotations is None:
        return []
    held = []
    read_only = getattr(annotations, "read_only", None) is True
    for (field, value), contradicted in CONTRADICTS.items():
        if getattr(annotations, field, None) is not value:
            continue
        if field == "destructive" and read_only:
            continue  # the spec: meaningful only when the tool is not read-only
        held.append((field, value, contradicted))
    return held


def findings(graph: Graph, tools: Iterable[Any], server: str, graph_name: str) -> list[Finding]:
    """Every finding of ``graph`` for the catalog's ``tools`` (their specs)."""
    digraph = digraph_of(graph)
    found: list[Finding] = []
    for spec in tools:
        held = _held(spec.annotations)
        tool = node_id(server, "tool", spec.key)
        if not held or tool not in digraph:
            continue
        paths = nx.single_source_shortest_path(digraph, tool)
        for target in sorted(paths):
            effect = effect_of(target)
            if effect is None:
                continue
            for field, value, contradicted in held:
                if effect.name in contradicted:
                    hops = paths[target]
                    path = tuple(digraph.edges[a, b]["edge"] for a, b in pairwise(hops))
                    found.append(Finding(tool, HINTS[field], value, target, graph_name, path))
    return found


def records(found: Iterable[Finding]) -> list[Mapping[str, Any]]:
    """The findings as the diff record's ``annotation_findings``, in a stable order."""
    return sorted(
        (finding.record for finding in found),
        key=lambda r: tuple(
            r[k].encode("utf-16-be", "surrogatepass") for k in ("tool", "effect", "hint", "graph")
        ),
    )
