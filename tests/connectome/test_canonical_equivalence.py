"""The fast encoder and diff against a plain reference written from the format's rules
(shared/notes/connectome-format.md §3.1 and §4.3): the same bytes, or the same refusal with the
same message, on random graphs built from hostile strings (control characters, ``"`` and
``\\``, U+2028, astral characters, strings NFC rewrites, keys whose UTF-16 order is not their
code point order, lone surrogates), and the string escaping over every code point."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beammcp_django.connectome.core.canonical import (
    ALGORITHMS,
    Edge,
    Graph,
    Node,
    Uncanonical,
    encode_graph,
    encode_string,
    encode_value,
)
from beammcp_django.connectome.core.diff import diff, encode_record
from tests.support import examples

# -- the reference: each rule as the note states it, one character and one member at a time --

SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
SHORT_ESCAPES |= {"\f": "\\f", "\r": "\\r"}


def reference_string(text: str) -> bytes:
    """Rule 7 then rule 8: NFC, then ``"`` ``\\`` and five controls short, the other
    U+0000-U+001F as lowercase ``\\u00xx``, everything else literal UTF-8; no surrogates."""
    written = []
    for character in unicodedata.normalize("NFC", text):
        if character in SHORT_ESCAPES:
            written.append(SHORT_ESCAPES[character])
        elif ord(character) < 0x20:
            written.append(f"\\u{ord(character):04x}")
        elif 0xD800 <= ord(character) <= 0xDFFF:
            raise Uncanonical("a string is not well-formed Unicode")
        else:
            written.append(character)
    return ('"' + "".join(written) + '"').encode("utf-8")


def reference_value(value: Any, where: str) -> bytes:
    """Rules 5 and 9: keys in UTF-16 code units, integers in decimal, floats refused."""
    if value is None or type(value) is bool:
        return {None: b"null", True: b"true", False: b"false"}[value]
    if type(value) is int:
        return str(value).encode()
    if isinstance(value, str):
        return reference_string(value)
    if isinstance(value, float):
        raise Uncanonical(f"{where} holds a float; the format admits integers only")
    if isinstance(value, Mapping):
        members: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Uncanonical(f"{where} has a key that is not a string")
            if unicodedata.normalize("NFC", key) in members:
                raise Uncanonical(f"{where} has two keys equal after NFC")
            members[unicodedata.normalize("NFC", key)] = item
        written = b""
        for key in sorted(members, key=lambda k: k.encode("utf-16-be", "surrogatepass")):
            written += (b"," if written else b"") + reference_string(key) + b":"
            written += reference_value(members[key], where)
        return b"{" + written + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(reference_value(item, where) for item in value) + b"]"
    raise Uncanonical(f"{where} holds a {type(value).__name__}, which has no JSON form")


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def reference_graph(graph: Graph, algorithm: str = "sha256") -> bytes:
    """Rules 1-4: the envelope, nodes by id and edges by key as UTF-8 bytes, fixed members."""
    if algorithm not in ALGORITHMS:
        raise Uncanonical(f"unknown digest algorithm; use one of {', '.join(ALGORITHMS)}")
    nfc = lambda text: unicodedata.normalize("NFC", text)  # noqa: E731
    nodes: dict[str, Node] = {}
    for node in graph.nodes:
        if nfc(node.id) in nodes:
            raise Uncanonical(f"two nodes share the id {nfc(node.id)!r} after NFC")
        nodes[nfc(node.id)] = node
    edges: dict[tuple[str, ...], Edge] = {}
    for edge in graph.edges:
        key = tuple(nfc(part) for part in (edge.source, edge.target, edge.kind, edge.provenance))
        if key[0] not in nodes or key[1] not in nodes:
            raise Uncanonical(f"the edge {key[0]!r} -> {key[1]!r} has an endpoint with no node")
        if key in edges:
            raise Uncanonical(f"the edge {key[0]!r} -> {key[1]!r} ({key[2]}) is listed twice")
        edges[key] = edge
    written = []
    for node_id in sorted(nodes, key=utf8):
        node = nodes[node_id]
        written.append(
            b'{"id":' + reference_string(node_id) + b',"kind":' + reference_string(node.kind)
        )
        written[-1] += b',"labels":' + reference_value(
            dict(node.labels), f"the labels of {node_id!r}"
        )
        written[-1] += b',"level":' + reference_string(node.level) + b"}"
    lines = []
    for key in sorted(edges, key=lambda key: tuple(map(utf8, key))):
        source, target, kind, provenance = key
        line = b'{"from":' + reference_string(source) + b',"kind":' + reference_string(kind)
        line += b',"provenance":' + reference_string(provenance)
        line += b',"sign":' + reference_string(edges[key].sign)
        lines.append(line + b',"to":' + reference_string(target) + b"}")
    return (
        b'{"schema_version":3,"algorithm":' + reference_string(algorithm) + b',"nodes":['
        + b",".join(written) + b'],"edges":[' + b",".join(lines) + b"]}"
    )  # fmt: skip


def reference_diff(declared: Graph, observed: Graph, window: Mapping[str, Any]) -> dict:
    """§4.3: every label in one class, class arrays by from, to, kind in UTF-16, ten counts."""
    nfc = lambda text: unicodedata.normalize("NFC", text)  # noqa: E731
    by_label = [
        {(nfc(e.source), nfc(e.target), nfc(e.kind)): e for e in graph.edges}
        for graph in (declared, observed)
    ]
    classes: dict[str, list[dict[str, str]]] = {
        "changed_sign": [],
        "declared_and_observed": [],
        "declared_never_observed": [],
        "observed_but_undeclared": [],
    }
    declared_only = observed_only = 0
    for label, edge in by_label[0].items():
        entry = {"from": label[0], "kind": label[2], "to": label[1]}
        seen = by_label[1].get(label)
        if seen is None:
            classes["declared_never_observed"].append(entry)
        elif "unset" not in (edge.sign, seen.sign) and edge.sign != seen.sign:
            entry |= {"declared_sign": edge.sign, "observed_sign": seen.sign}
            classes["changed_sign"].append(entry)
        else:
            classes["declared_and_observed"].append(entry)
            declared_only += edge.sign != "unset" and seen.sign == "unset"
            observed_only += seen.sign != "unset" and edge.sign == "unset"
    for label in by_label[1]:
        if label not in by_label[0]:
            entry = {"from": label[0], "kind": label[2], "to": label[1]}
            classes["observed_but_undeclared"].append(entry)
    for entries in classes.values():
        entries.sort(
            key=lambda e: [
                e[k].encode("utf-16-be", "surrogatepass") for k in ("from", "to", "kind")
            ]
        )
    nodes = [{nfc(node.id) for node in graph.nodes} for graph in (declared, observed)]
    both = len(classes["changed_sign"]) + len(classes["declared_and_observed"])
    return {
        "algorithm": "sha256",
        "classes": classes,
        "coverage": {
            "declared_and_observed": both,
            "declared_edges": len(by_label[0]),
            "declared_endpoint_covered": covered(by_label[0], nodes[1]),
            "declared_nodes": len(nodes[0]),
            "declared_sign_only": declared_only,
            "nodes_in_both": len(nodes[0] & nodes[1]),
            "observed_edges": len(by_label[1]),
            "observed_endpoint_declared": covered(by_label[1], nodes[0]),
            "observed_nodes": len(nodes[1]),
            "observed_sign_only": observed_only,
        },
        "schema_version": 3,
        "window": dict(window),
    }


def covered(labels: Mapping[tuple[str, str, str], Edge], nodes: set[str]) -> int:
    return sum(source in nodes and target in nodes for source, target, _ in labels)


def outcome(write: Callable[..., bytes], *arguments: Any) -> bytes | tuple[str, str]:
    """The bytes written, or the refusal's message: both writers must agree on either."""
    try:
        return write(*arguments)
    except Uncanonical as refusal:
        return ("refused", str(refusal))


# -- hostile material --------------------------------------------------------------------

HOSTILE = [
    *"ab/%.",
    *'"\\',
    *"\x00\x01\x1f\x7f\b\t\n\x0b\x0c\r",
    "\u2028",
    "\u2029",
    "e\u0301",  # NFC composes it to U+00E9
    "\u00e9",
    "A\u030a",  # NFC: U+00C5, as is U+212B, the Angstrom sign
    "\u212b",
    "\u00c5",
    "\uff01",  # after U+1F600 in UTF-16, before it by code point
    "\U0001f600",
    "\U00010000",
    "\ue000",
    "\uffff",
    "\ufeff",
    "\ud7ff",
    "天",
]
TEXT = st.lists(st.sampled_from(HOSTILE), max_size=5).map("".join)
LONE = st.sampled_from(["\ud800", "\udfff", "a\udc00b"])
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30), TEXT
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
SIGNS = st.sampled_from(["unset", "unset", "allow", "deny", "hold", "ungoverned", "de\u0301ny"])


@st.composite
def graphs(draw: st.DrawFn, flaws: bool = True) -> Graph:
    """A small graph of hostile ids; with ``flaws``, sometimes one thing the format refuses
    (a float, a lone surrogate, a dangling or repeated edge, ids equal after NFC)."""
    ids = draw(st.lists(TEXT.map(lambda text: "srv/" + text), min_size=1, max_size=8, unique=True))
    labels = st.dictionaries(TEXT, VALUE, max_size=3)
    nodes = [
        Node(i, draw(TEXT), draw(st.sampled_from(["server", "mfa"])), draw(labels)) for i in ids
    ]
    ends = st.sampled_from(ids)
    kinds = st.sampled_from(["invoke", "read", "effect", "invo\u0301ke", "\U0001f600", "\uff01"])
    keys = st.tuples(ends, ends, kinds, st.sampled_from(["declared", "observed"]))
    edges = [Edge(*key, draw(SIGNS)) for key in draw(st.lists(keys, max_size=25, unique=True))]
    flaw = draw(
        st.sampled_from(["none"] * 6 + ["float", "lone", "dangling", "twice", "nfc", "key"])
    )
    if not flaws or flaw == "none":
        pass
    elif flaw == "float":
        nodes[-1] = Node(ids[-1], "tool", "server", {"x": [1, 1.5]})
    elif flaw == "lone":
        where = draw(st.integers(0, 2))
        lone = draw(LONE)
        if where == 0 or not edges:
            nodes[0] = Node(nodes[0].id, "tool", "server", {lone: 1, "a": 2.5})
        elif where == 1:
            edges[0] = Edge(edges[0].source, edges[0].target, lone, "declared")
        else:
            edges[-1] = Edge(edges[-1].source, edges[-1].target, "invoke", "declared", lone)
    elif flaw == "dangling":
        edges.insert(draw(st.integers(0, len(edges))), Edge(ids[0], "srv/missing", "invoke", "d"))
    elif flaw == "twice" and edges:
        edges.append(Edge(*edges[0].key, "allow"))
    elif flaw == "nfc":
        nodes.append(Node(unicodedata.normalize("NFD", nodes[0].id), "tool", "server"))
    elif flaw == "key":
        nodes[0] = Node(nodes[0].id, "tool", "server", {"caf\u00e9": 1, "cafe\u0301": 2})
    draw(st.randoms()).shuffle(nodes)
    return Graph(nodes, edges)


# -- the tests -----------------------------------------------------------------------------


def test_every_code_point_is_escaped_as_rule_8_says():
    scalars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(scalars), 4096):
        text = "".join(scalars[start : start + 4096])
        assert encode_string(text) == reference_string(text)


@pytest.mark.parametrize("surrogate", [0xD800, 0xDBFF, 0xDC00, 0xDFFF])
def test_a_lone_surrogate_anywhere_in_a_string_is_refused_by_name(surrogate):
    with pytest.raises(Uncanonical, match="well-formed"):
        encode_string("ok" + chr(surrogate) + "ok")


@settings(max_examples=examples(300), deadline=None)
@given(graphs(), st.sampled_from(ALGORITHMS))
def test_random_hostile_graphs_give_the_reference_bytes_or_its_refusal(graph, algorithm):
    assert outcome(encode_graph, graph, algorithm) == outcome(reference_graph, graph, algorithm)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(TEXT | LONE, VALUE | st.floats(0, 1) | LONE, max_size=4))
def test_random_hostile_values_give_the_reference_bytes_or_its_refusal(value):
    assert outcome(encode_value, value) == outcome(reference_value, value, "value")


@settings(max_examples=examples(200), deadline=None)
@given(graphs(flaws=False), graphs(flaws=False), st.dictionaries(TEXT, TEXT, max_size=2))
def test_random_hostile_diffs_give_the_reference_record_and_bytes(declared, observed, window):
    record = diff(declared, observed, window)
    expected = reference_diff(declared, observed, window)
    assert record == expected
    assert outcome(encode_record, record) == outcome(reference_value, expected, "the diff record")


def seeded_pair(seed: int, edges: int) -> tuple[Graph, Graph]:
    """A larger pair than hypothesis draws, sharing most edges, with hostile ids throughout."""
    chooser = random.Random(seed)
    ids = {f"srv/{chooser.choice(HOSTILE)}{chooser.choice(HOSTILE)}/{i % 97}" for i in range(800)}
    ids = sorted({unicodedata.normalize("NFC", i) for i in ids})
    labels = {
        (
            chooser.choice(ids),
            chooser.choice(ids),
            chooser.choice(["invoke", "\uff01", "\U0001f600"]),
        )
        for _ in range(edges)
    }
    labels = sorted(labels)
    chooser.shuffle(labels)
    signs = ["unset"] * 6 + ["allow", "deny", "hold"]
    nodes = [Node(i, "module", "mfa", {"n": chooser.randint(-9, 9)}) for i in ids]
    declared = [
        Edge(*label, "declared", chooser.choice(signs)) for label in labels[: edges * 3 // 4]
    ]
    observed = [Edge(*label, "observed", chooser.choice(signs)) for label in labels[edges // 4 :]]
    decomposed = [Node(unicodedata.normalize("NFD", n.id), n.kind, n.level) for n in nodes]
    return Graph(nodes, declared), Graph(decomposed, observed)  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_large_graphs_and_their_diff_give_the_reference_bytes(seed):
    declared, observed = seeded_pair(seed, 3000)
    for graph in (declared, observed):
        assert encode_graph(graph) == reference_graph(graph)
    window = {"ended_at": "2026-09-14T01:00:00Z"}
    expected = reference_diff(declared, observed, window)
    assert diff(declared, observed, window) == expected
    assert encode_record(diff(declared, observed, window)) == reference_value(expected, "r")
