"""The four reach questions as one answer record (connectome/questions.py), and
``manage.py mcp_connectome reach`` printing it for the sample's declared graph."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from beammcp_django.connectome.core.canonical import Edge, Graph, Node
from beammcp_django.connectome.core.questions import BadQuestion, ask, merged

#   e -> a -> g -> x ;  e -> b -> x   (g does not guard x: b bypasses it)
#   e -> a -> y ; y only through a
EDGES = [("e", "a"), ("a", "g"), ("g", "x"), ("e", "b"), ("b", "x"), ("a", "y")]
GRAPH = Graph(
    [Node(n, "module", "mfa") for n in "eagbxy"],
    [Edge(s, t, "invoke", "declared") for s, t in EDGES],
)


def hops(record):
    return [(hop["from"], hop["to"]) for hop in record["path"]]


def test_reaches_gives_a_shortest_witness():
    record = ask(GRAPH, "declared", "reaches", "e", "x")
    assert record["answer"] is True
    assert hops(record) == [("e", "b"), ("b", "x")]
    assert ask(GRAPH, "declared", "reaches", "x", "e")["answer"] is False


def test_avoiding_and_dominates_name_the_bypass():
    bypass = ask(GRAPH, "declared", "avoiding", "e", "x", "g")
    assert (bypass["answer"], hops(bypass)) == (True, [("e", "b"), ("b", "x")])
    guarded = ask(GRAPH, "declared", "dominates", "e", "x", "g")
    assert (guarded["answer"], hops(guarded)) == (False, [("e", "b"), ("b", "x")])
    assert ask(GRAPH, "declared", "dominates", "e", "y", "a")["answer"] is True


def test_must_cross_lists_the_dominator_chain():
    record = ask(GRAPH, "declared", "must_cross", "e", "y")
    assert record["nodes"] == ["e", "a", "y"]
    assert ask(GRAPH, "declared", "must_cross", "y", "e")["answer"] is False


@pytest.mark.parametrize(
    ("question", "gate", "message"),
    [
        ("reach", None, "no question named 'reach'"),
        ("avoiding", None, "needs a gate"),
        ("reaches", "g", "takes no gate"),
        ("reaches", None, "has no node 'nowhere'"),
    ],
)
def test_a_question_that_cannot_be_asked_is_refused_by_name(question, gate, message):
    with pytest.raises(BadQuestion, match=message):
        ask(GRAPH, "declared", question, "e", "nowhere" if "node" in message else "x", gate)


def test_merged_holds_both_sides_edges():
    observed = Graph([Node("y", "module", "mfa"), Node("z", "effect", "boundary")],
                     [Edge("y", "z", "effect", "observed")])  # fmt: skip
    both = merged(GRAPH, observed)
    assert ask(both, "merged", "reaches", "e", "z")["answer"] is True
    assert [hop["provenance"] for hop in ask(both, "merged", "reaches", "e", "z")["path"]] == [
        "declared",
        "declared",
        "observed",
    ]


@pytest.mark.django_db
def test_the_command_answers_for_the_sample_s_declared_graph_as_json(capsys):
    call_command(
        "mcp_connectome", "reach", "reaches", "tool/current_conditions",
        "effect/model.write/demo.Observation", "--graph", "declared",
    )  # fmt: skip
    record = json.loads(capsys.readouterr().out)
    assert record["answer"] is True
    server = "beammcp-sample-weather"
    assert [hop["to"] for hop in record["path"]] == [
        f"{server}/module/sample_project.demo.mcp/CurrentConditions.call/3",
        f"{server}/effect/model.write/demo.Observation",
    ]
    call_command(
        "mcp_connectome", "reach", "reaches", "tool/get_forecast",
        "effect/model.write/demo.Observation", "--graph", "declared",
    )  # fmt: skip
    assert json.loads(capsys.readouterr().out)["answer"] is False
    with pytest.raises(CommandError, match="has no node 'tool/nope'"):
        call_command("mcp_connectome", "reach", "reaches", "tool/nope", "tool/echo")


def test_a_label_copied_from_a_drawing_is_refused_naming_the_node_id_it_stands_for():
    with pytest.raises(CommandError) as refused:
        call_command(
            "mcp_connectome", "reach", "reaches", "tool/current_conditions",
            "model.write/demo.Observation", "--graph", "declared",
        )  # fmt: skip
    assert str(refused.value) == (
        "the declared graph has no node 'model.write/demo.Observation'; "
        "did you mean 'effect/model.write/demo.Observation'?"
    )
