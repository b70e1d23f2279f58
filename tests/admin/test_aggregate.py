"""The drawings' views (``connectome/aggregate.py``) and each tool's effects
(``connectome/tool_effects.py``) on small graphs written out by hand: no Django, no ``dot``."""

from __future__ import annotations

from beammcp_django.connectome.core.aggregate import fitted, neighbourhood
from beammcp_django.connectome.core.canonical import Edge, Graph, Node, node_id
from beammcp_django.connectome.core.drawing import DrawnEdge
from beammcp_django.connectome.core.tool_effects import tool_effects

S = "srv"
TOOL, OTHER = node_id(S, "tool", "a"), node_id(S, "tool", "b")
F1, F2 = node_id(S, "module", "app.views", "f", 1), node_id(S, "module", "app.views", "g", 0)
F3 = node_id(S, "module", "app.models", "h", 2)
F4 = node_id(S, "module", "lib.util", "k", 0)
WRITE_A = node_id(S, "effect", "model.write", "shop.Order")
WRITE_B = node_id(S, "effect", "model.write", "shop.Line")
MAIL = node_id(S, "effect", "mail")


def observed(source: str, target: str, count: int, kind: str = "invoke") -> DrawnEdge:
    return DrawnEdge(source, target, kind, "observed", count)


EDGES = [
    observed(TOOL, F1, 5),
    observed(OTHER, F2, 1),
    observed(F1, F3, 4),
    observed(F2, F3, 1),
    observed(F3, WRITE_A, 3, "effect"),
    observed(F3, WRITE_B, 2, "effect"),
    observed(F1, WRITE_A, 1, "effect"),
    observed(F4, MAIL, 7, "effect"),
]


def test_within_the_cap_the_edges_are_drawn_as_they_are():
    view = fitted(EDGES, 8)
    assert view.level == "full" and list(view.edges) == EDGES and view.members == {}


def test_functions_group_by_module_and_effects_by_effect_and_app_their_calls_summed():
    view = fitted(EDGES, 7)
    assert view.level == "modules"
    views, models = node_id(S, "module", "app.views"), node_id(S, "module", "app.models")
    shop = node_id(S, "effect", "model.write", "shop.*")
    assert {(e.source, e.target, e.count, e.merged) for e in view.edges} == {
        (TOOL, views, 5, 1),
        (OTHER, views, 1, 1),
        (views, models, 5, 2),
        (views, shop, 1, 1),
        (models, shop, 5, 2),
        (node_id(S, "module", "lib.util"), node_id(S, "effect", "mail"), 7, 1),
    }
    assert view.members[views] == 2 and view.members[shop] == 2 and TOOL not in view.members


def test_coarser_levels_group_by_top_package_then_entries_by_kind():
    assert fitted(EDGES, 5).level == "packages"
    view = fitted(EDGES, 4)
    assert view.level == "entries"
    assert (node_id(S, "tool", "*"), node_id(S, "module", "app.*"), 6, 2) in {
        (e.source, e.target, e.count, e.merged) for e in view.edges
    }


def test_past_the_last_level_the_lightest_edges_are_left_out_and_counted():
    view = fitted(EDGES, 1)
    assert view.level == "lightest omitted" and view.omitted == 3  # of the four at "entries"
    assert [e.count for e in view.edges] == [7]  # mail, the heaviest


def test_declared_edges_keep_no_count_and_count_what_they_merge():
    declared = [
        DrawnEdge(TOOL, F1, "invoke", "declared"),
        DrawnEdge(TOOL, F2, "invoke", "declared"),
    ]
    (edge,) = fitted(declared, 1).edges
    assert edge.count is None and edge.merged == 2


def test_a_neighbourhood_is_a_nodes_own_edges_bounded_by_the_cap():
    view = neighbourhood(EDGES, F3, 10)
    assert {(e.source, e.target) for e in view.edges} == {
        (F1, F3),
        (F2, F3),
        (F3, WRITE_A),
        (F3, WRITE_B),
    }
    bounded = neighbourhood(EDGES, F3, 2)
    assert [e.count for e in bounded.edges] == [4, 3] and bounded.omitted == 2


def graph(*edges: Edge) -> Graph:
    ids = dict.fromkeys(i for e in edges for i in (e.source, e.target))
    return Graph(tuple(Node(i, "module", "mfa") for i in ids), edges)


def test_a_tools_effects_are_what_it_can_reach_and_what_it_did_with_the_calls_into_each():
    declared = graph(
        Edge(TOOL, F1, "invoke", "declared"),
        Edge(F1, F3, "invoke", "declared"),
        Edge(F3, WRITE_A, "effect", "declared"),
        Edge(F3, WRITE_B, "effect", "declared"),
    )
    weights = {
        Edge(TOOL, F1, "invoke", "observed"): 5,
        Edge(F1, WRITE_A, "effect", "observed"): 3,
        Edge(F1, MAIL, "effect", "observed"): 2,
        Edge(F2, WRITE_A, "effect", "observed"): 9,  # not reached from TOOL
    }
    found = {
        e.label: (e.can_reach, e.calls)
        for e in tool_effects(declared, graph(*weights), weights, [TOOL, OTHER])[TOOL]
    }
    assert found == {
        "mail": (False, 2),
        "model.write shop.Line": (True, None),
        "model.write shop.Order": (True, 3),
    }
    assert tool_effects(declared, graph(*weights), weights, [OTHER]) == {OTHER: []}
