"""The annotation audit (connectome/annotations.py): a tool's reach held against what its
annotations declare, with a witness path; only declared annotations are held."""

from __future__ import annotations

import pytest

from beammcp_django.connectome.core.annotations import findings, records
from beammcp_django.connectome.core.canonical import Edge, Graph, Node
from beammcp_django.connectome.core.diff import diff, encode_record
from beammcp_django.protocol.catalog import ToolAnnotations, ToolSpec

FUNCTION = "s/module/m/f/0"
HELPER = "s/module/m/g/0"


def graph(*effects: str) -> Graph:
    """tool t -> f -> g -> each effect."""
    ids = ["s/tool/t", FUNCTION, HELPER, *effects]
    nodes = [Node(node, "effect" if "/effect/" in node else "tool", "server") for node in ids]
    edges = [
        Edge("s/tool/t", FUNCTION, "invoke", "declared"),
        Edge(FUNCTION, HELPER, "invoke", "declared"),
        *(Edge(HELPER, effect, "effect", "declared") for effect in effects),
    ]
    return Graph(nodes, edges)


def tool(**annotations: bool) -> ToolSpec:
    return ToolSpec("t", {"type": "object"}, annotations=ToolAnnotations(**annotations))


WRITE = "s/effect/model.write/app.M"
DELETE = "s/effect/model.delete/app.M"
READ = "s/effect/model.read/app.M"
NETWORK = "s/effect/network/api.example.com"
MAIL = "s/effect/mail"
MINT, USE, END = (f"s/effect/handle.{operation}/watch_list" for operation in ("mint", "use", "end"))


@pytest.mark.parametrize(
    ("annotations", "effects", "contradicted"),
    [
        ({"read_only": True}, (READ, NETWORK), set()),
        ({"read_only": True}, (WRITE, DELETE, READ), {WRITE, DELETE}),
        ({"read_only": True}, ("s/effect/sql/default", MAIL), {"s/effect/sql/default", MAIL}),
        ({"destructive": False}, (WRITE, DELETE), {DELETE}),
        # A handle minted or ended changes what the caller holds; a use reads (its idle
        # lifetime moved on is the handle's own bookkeeping, as a session's is).
        ({"read_only": True}, (MINT, USE, END), {MINT, END}),
        # destructiveHint is meaningful only when the tool is not read-only (the spec).
        ({"read_only": True, "destructive": False}, (DELETE,), {DELETE}),
        ({"open_world": False}, (NETWORK, MAIL, WRITE), {NETWORK, MAIL}),
        # Undeclared annotations promise nothing (the spec's defaults are the permissive ones).
        ({}, (WRITE, DELETE, NETWORK), set()),
        ({"read_only": False, "destructive": True, "open_world": True}, (WRITE, NETWORK), set()),
    ],
)
def test_which_effects_contradict_which_declared_annotations(annotations, effects, contradicted):
    found = findings(graph(*effects), [tool(**annotations)], "s", "declared")
    assert {finding.effect for finding in found} == contradicted
    if annotations.get("read_only"):
        assert {finding.hint for finding in found} <= {"readOnlyHint"}


def test_a_finding_carries_its_witness_and_says_it_in_words():
    (finding,) = findings(graph(WRITE), [tool(read_only=True)], "s", "observed")
    assert [edge.target for edge in finding.path] == [FUNCTION, HELPER, WRITE]
    assert finding.sentence() == (
        "annotated readOnlyHint: true, but its observed graph reaches model.write app.M: "
        "tool/t -> module/m/f/0 -> module/m/g/0 -> effect/model.write/app.M"
    )


def test_the_diff_record_carries_findings_only_when_there_are_some():
    declared = graph(WRITE)
    plain = diff(declared, declared, {})
    assert "annotation_findings" not in plain  # the original's five members, byte for byte
    audit = records(findings(declared, [tool(read_only=True)], "s", "declared"))
    record = diff(declared, declared, {}, findings=audit)
    assert record["annotation_findings"] == [
        {"effect": WRITE, "graph": "declared", "hint": "readOnlyHint", "tool": "s/tool/t",
         "value": True}
    ]  # fmt: skip
    assert encode_record(record).startswith(b'{"algorithm":"sha256","annotation_findings":[{')
