"""Each tool's effects: the ones its declared graph can reach and the ones its observed graph
did reach, with counts, for the catalog browser.

A tool *can reach* an effect when the declared graph has a path from the tool's node to the
effect's node. It *did reach* one when the observed graph has such a path; its count is the
sum of the calls on the observed effect edges into that effect from the nodes the tool
reaches (its handler and the functions below it). A function two tools share counts for
both: the observed graph keeps no call's path, only each edge's total.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

from beammcp_django.connectome.core.canonical import Edge, Graph
from beammcp_django.connectome.core.effects import effect_of
from beammcp_django.connectome.core.reach import digraph_of


@dataclass(frozen=True)
class ToolEffect:
    effect: str  # the effect's node id
    can_reach: bool  # a declared path
    calls: int | None  # the observed effect edges' calls; None when no observed path

    @property
    def label(self) -> str:
        """The effect in words: ``model.write demo.Observation``."""
        effect = effect_of(self.effect)
        assert effect is not None, "a ToolEffect holds effect node ids only"
        return f"{effect.name} {effect.subject}".strip()


def _reached(digraph: nx.DiGraph, tool: str) -> set[str]:
    """The tool and every node it reaches (nothing when the graph lacks the tool)."""
    return {tool, *nx.descendants(digraph, tool)} if tool in digraph else set()


def tool_effects(
    declared: Graph, observed: Graph, weights: Mapping[Edge, int], tools: Iterable[str]
) -> dict[str, list[ToolEffect]]:
    """The effects each of ``tools`` (node ids) can reach (declared) or did reach
    (observed), by effect node id; each graph is read once for all of them."""
    can_reach_in, reached_in = digraph_of(declared), digraph_of(observed)
    calls_from: dict[str, dict[str, int]] = {}  # source -> effect -> calls on the edge
    for edge, count in weights.items():
        if effect_of(edge.target) is not None:
            into = calls_from.setdefault(edge.source, {})
            into[edge.target] = into.get(edge.target, 0) + count
    found: dict[str, list[ToolEffect]] = {}
    for tool in tools:
        can_reach = {n for n in _reached(can_reach_in, tool) if effect_of(n) is not None}
        calls: dict[str, int] = {}
        for source in _reached(reached_in, tool) & calls_from.keys():
            for effect, count in calls_from[source].items():
                calls[effect] = calls.get(effect, 0) + count
        found[tool] = [
            ToolEffect(effect, effect in can_reach, calls.get(effect))
            for effect in sorted(can_reach | calls.keys())
        ]
    return found
