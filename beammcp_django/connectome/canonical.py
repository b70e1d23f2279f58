"""The connectome's canonical bytes (schema_version 3), byte-compatible with the original.

A graph is written as UTF-8 JSON with no insignificant whitespace: a fixed envelope
(``schema_version``, ``algorithm``, ``nodes``, ``edges``), nodes sorted by id and edges by
(from, to, kind, provenance) comparing UTF-8 bytes, node and edge members in fixed order, every
other object's keys sorted by UTF-16 code units (RFC 8785), every string NFC-normalised first.
Strings are escaped by the ``rfc8785`` package (RFC 8785 §3.2.2.2, the same escaping the
format names); integers are written in decimal with no size limit; floats are refused. The
digest is named in the bytes: SHA-256 by default, SHA-384 or SHA-512 on request.

The format is restated in ``docs/connectome.md``; its worked examples are the tests.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import rfc8785

SCHEMA_VERSION = 3
ALGORITHMS = ("sha256", "sha384", "sha512")
SIGNS = ("allow", "deny", "hold", "ungoverned", "unset")
LEGACY_SIGNS = {1: ("allow", "deny", "hold", "unknown"), 2: SIGNS, 3: SIGNS}


class Uncanonical(ValueError):
    """The graph or value cannot be written canonically; the message names the cause."""


@dataclass(frozen=True)
class Node:
    id: str
    kind: str
    level: str
    labels: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    provenance: str
    sign: str = "unset"

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.source, self.target, self.kind, self.provenance)


@dataclass(frozen=True)
class Graph:
    nodes: Sequence[Node]
    edges: Sequence[Edge]


def nfc(text: str) -> str:
    """``text`` in Unicode Normalization Form C: every string the format compares or writes
    (node ids, edge keys, object keys) is compared and written in this form."""
    return unicodedata.normalize("NFC", text)


def encode_string(text: str) -> bytes:
    """A string as the format writes it (NFC, then RFC 8785 escaping); public so the sidecar
    writes its strings exactly as the graph does. A lone surrogate is refused by name."""
    try:
        return rfc8785.dumps(nfc(text))
    except rfc8785.CanonicalizationError:
        raise Uncanonical("a string is not well-formed Unicode") from None


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _utf8_order(text: str) -> bytes:
    # surrogatepass: a lone surrogate must reach the string writer, which refuses it by name.
    return text.encode("utf-8", "surrogatepass")


def edge_order(key: Sequence[str]) -> tuple[bytes, ...]:
    """How edges (and sidecar weights) are sorted: each key part as UTF-8 bytes."""
    return tuple(_utf8_order(part) for part in key)


def fixed_object(*members: tuple[str, bytes]) -> bytes:
    """An object whose members the format fixes, in the given order (names are plain ASCII),
    from values already written canonically."""
    return (
        b"{"
        + b",".join(b'"' + name.encode("ascii") + b'":' + value for name, value in members)
        + b"}"
    )


def encode_value(value: Any, *, where: str = "value") -> bytes:
    """Any JSON value in canonical form: objects' keys in UTF-16 order, no floats."""
    if value is None:
        return b"null"
    if value is True:
        return b"true"
    if value is False:
        return b"false"
    if type(value) is int:
        return str(value).encode("ascii")
    if isinstance(value, str):
        return encode_string(value)
    if isinstance(value, float):
        raise Uncanonical(f"{where} holds a float; the format admits integers only")
    if isinstance(value, Mapping):
        members: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Uncanonical(f"{where} has a key that is not a string")
            normal = nfc(key)
            if normal in members:
                raise Uncanonical(f"{where} has two keys equal after NFC")
            members[normal] = item
        parts = (
            encode_string(key) + b":" + encode_value(members[key], where=where)
            for key in sorted(members, key=_utf16_order)
        )
        return b"{" + b",".join(parts) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(encode_value(item, where=where) for item in value) + b"]"
    raise Uncanonical(f"{where} holds a {type(value).__name__}, which has no JSON form")


def check_algorithm(algorithm: str) -> None:
    """Refuse a digest algorithm the format does not name (``ALGORITHMS``); public because
    every record that carries an ``algorithm`` member (the graph, the diff) checks it."""
    if algorithm not in ALGORITHMS:
        raise Uncanonical(f"unknown digest algorithm; use one of {', '.join(ALGORITHMS)}")


def encode_graph(graph: Graph, algorithm: str = "sha256") -> bytes:
    """The canonical bytes of a graph. Refuses what the format refuses, never repairs it."""
    check_algorithm(algorithm)
    nodes: dict[str, Node] = {}
    for node in graph.nodes:
        node_id = nfc(node.id)
        if node_id in nodes:
            raise Uncanonical(f"two nodes share the id {node_id!r} after NFC")
        nodes[node_id] = node
    edges: dict[tuple[str, str, str, str], Edge] = {}
    for edge in graph.edges:
        key = tuple(nfc(part) for part in edge.key)
        if key[0] not in nodes or key[1] not in nodes:
            raise Uncanonical(f"the edge {key[0]!r} -> {key[1]!r} has an endpoint with no node")
        if key in edges:
            raise Uncanonical(f"the edge {key[0]!r} -> {key[1]!r} ({key[2]}) is listed twice")
        edges[key] = edge  # type: ignore[index]
    node_bytes = [
        fixed_object(
            ("id", encode_string(node_id)),
            ("kind", encode_string(nodes[node_id].kind)),
            (
                "labels",
                encode_value(dict(nodes[node_id].labels), where=f"the labels of {node_id!r}"),
            ),
            ("level", encode_string(nodes[node_id].level)),
        )
        for node_id in sorted(nodes, key=_utf8_order)
    ]
    edge_bytes = [
        fixed_object(
            ("from", encode_string(key[0])),
            ("kind", encode_string(key[2])),
            ("provenance", encode_string(key[3])),
            ("sign", encode_string(edges[key].sign)),
            ("to", encode_string(key[1])),
        )
        for key in sorted(edges, key=edge_order)
    ]
    return (
        b'{"schema_version":3,"algorithm":'
        + encode_string(algorithm)
        + b',"nodes":['
        + b",".join(node_bytes)
        + b'],"edges":['
        + b",".join(edge_bytes)
        + b"]}"
    )


def digest(data: bytes, algorithm: str = "sha256") -> str:
    """The lowercase hex digest the bytes name."""
    check_algorithm(algorithm)
    return hashlib.new(algorithm, data).hexdigest()


@dataclass(frozen=True)
class Verified:
    schema_version: int
    algorithm: str
    hexdigest: str


def verify(data: bytes) -> Verified:
    """Read ``schema_version`` and ``algorithm`` and hash as the format says, or refuse.

    Versions 1 and 2 carry no ``algorithm`` and hash with SHA-256; version 3 must name one;
    anything else is refused. A sign outside the version's vocabulary makes the record
    malformed even though its hash could be computed.
    """
    try:
        record = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Uncanonical("the bytes are not JSON") from None
    if not isinstance(record, dict):
        raise Uncanonical("the bytes are not a JSON object")
    version = record.get("schema_version")
    if type(version) is not int or version not in (1, 2, 3):
        raise Uncanonical("unknown schema_version")
    if version < 3:
        if "algorithm" in record:
            raise Uncanonical(f"schema_version {version} carries no algorithm member")
        algorithm = "sha256"
    else:
        algorithm = record.get("algorithm")  # type: ignore[assignment]
        if algorithm not in ALGORITHMS:
            raise Uncanonical("schema_version 3 must name sha256, sha384 or sha512")
    signs = LEGACY_SIGNS[version]
    for sign in _signs(record):
        if sign not in signs:
            raise Uncanonical(f"a sign outside the schema_version {version} vocabulary")
    return Verified(version, algorithm, digest(data, algorithm))


def _signs(record: Mapping[str, Any]) -> Iterable[Any]:
    for edge in record.get("edges", ()) if isinstance(record.get("edges"), list) else ():
        if isinstance(edge, dict) and "sign" in edge:
            yield edge["sign"]
    classes = record.get("classes")
    if isinstance(classes, dict):
        for entry in classes.get("changed_sign", ()) or ():
            if isinstance(entry, dict):
                yield entry.get("declared_sign")
                yield entry.get("observed_sign")


def node_id(server: str, tag: str, *rest: str | int) -> str:
    """A node id: components escaped ('%' then '/'), joined by '/' (no NFC here)."""

    def escape(component: str | int) -> str:
        return str(component).replace("%", "%25").replace("/", "%2F")

    return "/".join(escape(part) for part in (server, tag, *rest))
