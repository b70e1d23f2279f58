"""Reachability questions over a small graph with a guarded and an unguarded route."""

import pytest

from beammcp_django.connectome.core.canonical import Edge, Graph, Node
from beammcp_django.connectome.core.reach import (
    UnknownNode,
    dominates,
    must_cross,
    reaches,
    reaches_avoiding,
)

IDS = ["srv/tool/pay", "srv/tool/refund", "check", "ledger", "audit", "island"]


def graph(*extra: Edge) -> Graph:
    edges = [
        Edge("srv/tool/pay", "check", "invoke", "declared"),
        Edge("check", "ledger", "invoke", "declared"),
        Edge("ledger", "audit", "invoke", "declared"),
        Edge("srv/tool/refund", "ledger", "invoke", "declared"),
        *extra,
    ]
    return Graph([Node(i, "module", "mfa") for i in IDS], edges)


def test_a_reachable_effect_comes_with_a_witness_made_of_the_graphs_own_edges():
    g = graph()
    path = reaches(g, "srv/tool/pay", "audit")
    assert [(e.source, e.target) for e in path] == [
        ("srv/tool/pay", "check"),
        ("check", "ledger"),
        ("ledger", "audit"),
    ]
    assert all(edge in g.edges for edge in path)


def test_an_unreachable_effect_has_no_path():
    assert reaches(graph(), "audit", "srv/tool/pay") is None
    assert reaches(graph(), "srv/tool/pay", "island") is None


def test_a_gate_on_every_path_cannot_be_avoided_and_dominates():
    g = graph()
    assert reaches_avoiding(g, "srv/tool/pay", "ledger", "check") is None
    assert dominates(g, "srv/tool/pay", "check", "ledger")
    assert must_cross(g, "srv/tool/pay", "audit") == ["srv/tool/pay", "check", "ledger", "audit"]


def test_a_bypass_is_reported_with_its_path_and_the_gate_no_longer_dominates():
    g = graph(Edge("srv/tool/pay", "ledger", "invoke", "observed"))
    bypass = reaches_avoiding(g, "srv/tool/pay", "ledger", "check")
    assert [(e.source, e.target, e.provenance) for e in bypass] == [
        ("srv/tool/pay", "ledger", "observed")
    ]
    assert not dominates(g, "srv/tool/pay", "check", "ledger")
    assert must_cross(g, "srv/tool/pay", "audit") == ["srv/tool/pay", "ledger", "audit"]


def test_a_gate_that_is_the_entry_or_the_effect_is_always_crossed():
    g = graph()
    assert reaches_avoiding(g, "srv/tool/pay", "ledger", "srv/tool/pay") is None
    assert reaches_avoiding(g, "srv/tool/pay", "ledger", "ledger") is None


def test_nothing_dominates_an_unreachable_effect():
    assert must_cross(graph(), "srv/tool/pay", "island") == []
    assert not dominates(graph(), "srv/tool/pay", "check", "island")


def test_a_question_about_a_node_the_graph_lacks_is_refused_by_name():
    with pytest.raises(UnknownNode, match="nowhere"):
        reaches(graph(), "srv/tool/pay", "nowhere")
