"""The connectome's canonical bytes against the format note's worked examples: the exact
bytes and every hash (shared/notes/connectome-format.md §3.1 and §4.3)."""

from __future__ import annotations

import hashlib

import pytest

from beammcp_django.connectome.core.canonical import (
    Edge,
    Graph,
    Node,
    Uncanonical,
    digest,
    encode_graph,
    encode_value,
    node_id,
    verify,
)
from beammcp_django.connectome.core.diff import diff, encode_record

WORKED_GRAPH = (
    b'{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"s/server","kind":"server",'
    b'"labels":{},"level":"server"},{"id":"s/tool/t","kind":"tool","labels":{"mode":"read_only"},'
    b'"level":"server"}],"edges":[{"from":"s/server","kind":"invoke","provenance":"declared",'
    b'"sign":"unset","to":"s/tool/t"}]}'
)
GRAPH_HASHES = {
    "sha256": "a401cd47f0f0410d17248538eb8a3ef00018f6a31bf6fb6a7b9b0ba3377f570e",
    "sha384": (
        "f5b9b2f4fe21a4bfe88721d804f4f82d167f73f7dd59b1a6"
        "4ae0196f4cf78f05a6b9a3efa6d02e7362469796dbba53dd"
    ),
    "sha512": (
        "26cacb025eeaeabb0c441a293882ab81ec2436b80559618fd700dc494f9a5d2e"
        "2c6d46cee69a68cbdc84746aa9d64a4a11da027df7b0bc733ba1091031ee2e78"
    ),
}
WORKED_DIFF = (
    b'{"algorithm":"sha256","classes":{"changed_sign":[{"declared_sign":"allow","from":"srv/tool/c",'
    b'"kind":"invoke","observed_sign":"deny","to":"srv/tool/a"}],"declared_and_observed":[{"from":'
    b'"srv/tool/a","kind":"invoke","to":"srv/tool/b"},{"from":"srv/tool/b","kind":"invoke","to":'
    b'"srv/tool/a"}],"declared_never_observed":[{"from":"srv/tool/a","kind":"invoke","to":"srv/tool/c"}],'
    b'"observed_but_undeclared":[{"from":"srv/tool/b","kind":"invoke","to":"srv/tool/c"}]},"coverage":'
    b'{"declared_and_observed":3,"declared_edges":4,"declared_endpoint_covered":4,"declared_nodes":4,'
    b'"declared_sign_only":1,"nodes_in_both":4,"observed_edges":4,"observed_endpoint_declared":4,'
    b'"observed_nodes":4,"observed_sign_only":0},"schema_version":3,"window":{"ended_at":'
    b'"2026-09-14T01:00:00Z","started_at":"2026-09-14T00:00:00Z"}}'
)


def worked_graph() -> Graph:
    return Graph(
        nodes=[
            Node("s/tool/t", "tool", "server", {"mode": "read_only"}),
            Node("s/server", "server", "server"),
        ],
        edges=[Edge("s/server", "s/tool/t", "invoke", "declared")],
    )


def test_the_worked_graph_reproduces_its_exact_bytes_and_sha256():
    data = encode_graph(worked_graph())
    assert data == WORKED_GRAPH
    assert digest(data) == GRAPH_HASHES["sha256"]


@pytest.mark.parametrize("algorithm", ["sha384", "sha512"])
def test_the_worked_graph_under_another_digest_differs_only_in_the_algorithm_member(algorithm):
    data = encode_graph(worked_graph(), algorithm)
    assert data == WORKED_GRAPH.replace(b'"sha256"', f'"{algorithm}"'.encode())
    assert digest(data, algorithm) == GRAPH_HASHES[algorithm]
    assert verify(data).hexdigest == GRAPH_HASHES[algorithm]


def test_the_legacy_v2_bytes_verify_with_sha256():
    legacy = WORKED_GRAPH.replace(
        b'"schema_version":3,"algorithm":"sha256",', b'"schema_version":2,'
    )
    checked = verify(legacy)
    assert (checked.schema_version, checked.algorithm) == (2, "sha256")
    assert checked.hexdigest == "de6db70dc7316885176c4a7493ee07c46e33ec3bb90951dc54908a74e81dc90d"


@pytest.mark.parametrize(
    "data",
    [
        WORKED_GRAPH.replace(b'"algorithm":"sha256",', b""),  # v3 without the member
        WORKED_GRAPH.replace(b'"schema_version":3', b'"schema_version":2'),  # v2 with it
        WORKED_GRAPH.replace(b'"schema_version":3', b'"schema_version":4'),
        WORKED_GRAPH.replace(b'"sha256"', b'"md5"'),
        WORKED_GRAPH.replace(b'"sign":"unset"', b'"sign":"maybe"'),
        WORKED_GRAPH.replace(b'"sign":"unset"', b'"sign":"unknown"'),  # a v1 word at v3
    ],
)
def test_the_verifier_refuses_what_the_format_refuses(data):
    with pytest.raises(Uncanonical):
        verify(data)


def test_one_graph_built_in_two_insertion_orders_gives_one_hash():
    nodes = [Node(f"s/tool/t{i}", "tool", "server", {"b": i, "a": [i, None]}) for i in range(5)]
    edges = [Edge(nodes[i].id, nodes[(i + 1) % 5].id, "invoke", "declared") for i in range(5)]
    forward = encode_graph(Graph(nodes, edges))
    backward = encode_graph(Graph(list(reversed(nodes)), list(reversed(edges))))
    assert forward == backward


def test_strings_are_nfc_normalised_and_escaped_as_the_format_says():
    decomposed = "cafe\u0301"
    assert encode_value(decomposed) == '"café"'.encode()
    assert encode_value('a"b\\c\b\t\n\f\r\x01/\u2028\U0001f600') == (
        b'"a\\"b\\\\c\\b\\t\\n\\f\\r\\u0001/' + "\u2028\U0001f600".encode() + b'"'
    )


def test_object_keys_sort_by_utf16_code_units():
    assert encode_value({"\uff01": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uff01":1}'.encode()


def test_integers_have_no_size_limit_and_floats_are_refused():
    assert encode_value({"n": -(10**30)}) == b'{"n":-1000000000000000000000000000000}'
    with pytest.raises(Uncanonical, match="float"):
        encode_value({"x": 1.5})


@pytest.mark.parametrize(
    "graph",
    [
        Graph([Node("caf\u00e9", "tool", "server"), Node("cafe\u0301", "tool", "server")], []),
        Graph([Node("a", "tool", "server")], [Edge("a", "missing", "invoke", "declared")]),
        Graph(
            [Node("a", "tool", "server"), Node("b", "tool", "server")],
            [Edge("a", "b", "invoke", "declared"), Edge("a", "b", "invoke", "declared")],
        ),
        Graph([Node("a", "tool", "server", {"k": object()})], []),
        Graph([Node("a", "tool", "server", {"caf\u00e9": 1, "cafe\u0301": 2})], []),
    ],
    ids=[
        "ids-equal-after-nfc",
        "dangling-endpoint",
        "duplicate-edge",
        "no-json-form",
        "label-keys-equal-after-nfc",
    ],
)
def test_uncanonical_graphs_are_refused_never_repaired(graph):
    with pytest.raises(Uncanonical):
        encode_graph(graph)


def test_an_unknown_algorithm_is_refused_before_writing():
    with pytest.raises(Uncanonical):
        encode_graph(worked_graph(), "md5")


def test_node_ids_escape_percent_then_slash():
    assert node_id("srv", "resource", "r://a") == "srv/resource/r:%2F%2Fa"
    assert node_id("a/b", "prompt", "p%") == "a%2Fb/prompt/p%25"
    assert node_id("srv", "module", "Foo.Bar", "run", 2) == "srv/module/Foo.Bar/run/2"


def worked_diff_graphs() -> tuple[Graph, Graph]:
    names = ["srv/server", "srv/tool/a", "srv/tool/b", "srv/tool/c"]
    nodes = [Node(name, "tool" if "tool" in name else "server", "server") for name in names]
    a, b, c = names[1:]
    declared = Graph(
        nodes,
        [
            Edge(a, b, "invoke", "declared"),
            Edge(a, c, "invoke", "declared"),
            Edge(c, a, "invoke", "declared", "allow"),
            Edge(b, a, "invoke", "declared", "allow"),
        ],
    )
    observed = Graph(
        nodes,
        [
            Edge(a, b, "invoke", "observed"),
            Edge(b, c, "invoke", "observed"),
            Edge(c, a, "invoke", "observed", "deny"),
            Edge(b, a, "invoke", "observed", "unset"),
        ],
    )
    return declared, observed


WINDOW = {"ended_at": "2026-09-14T01:00:00Z", "started_at": "2026-09-14T00:00:00Z"}


def test_the_worked_diff_reproduces_its_800_bytes_and_hashes():
    declared, observed = worked_diff_graphs()
    data = encode_record(diff(declared, observed, WINDOW))
    assert data == WORKED_DIFF
    assert len(data) == 800
    assert (
        hashlib.sha256(data).hexdigest()
        == "a8a4206fb65febc83ed099be8b7408b6938795efc8a92f7cac1f53781c4312e1"
    )
    assert (
        verify(data).hexdigest == "a8a4206fb65febc83ed099be8b7408b6938795efc8a92f7cac1f53781c4312e1"
    )
    sha384 = encode_record(diff(declared, observed, WINDOW, "sha384"))
    assert verify(sha384).hexdigest == (
        "2efccb9b6852b3d4088b170987fd7e51c52d474a81522e3203d9420eda199fd2d872aebbd1e60e44b5c9b2b1e0b0090e"
    )


def test_every_edge_of_either_graph_lands_in_exactly_one_class():
    declared, observed = worked_diff_graphs()
    record = diff(declared, observed, WINDOW)
    labels = [
        (e["from"], e["to"], e["kind"]) for entries in record["classes"].values() for e in entries
    ]
    expected = {(e.source, e.target, e.kind) for e in [*declared.edges, *observed.edges]}
    assert len(labels) == len(set(labels)) == len(expected)
    assert set(labels) == expected


def test_a_lone_surrogate_in_an_edge_kind_is_refused_by_name_not_by_a_unicode_error():
    graph = Graph(
        [Node("s/server", "server", "server"), Node("s/tool/t", "tool", "server")],
        [Edge("s/server", "s/tool/t", "invoke\ud800", "declared")],
    )
    with pytest.raises(Uncanonical, match="well-formed"):
        encode_graph(graph)
