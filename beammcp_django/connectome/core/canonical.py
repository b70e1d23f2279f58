"""The connectome's canonical bytes (schema_version 3), byte-compatible with the original.

A graph is written as UTF-8 JSON with no insignificant whitespace: a fixed envelope
(``schema_version``, ``algorithm``, ``nodes``, ``edges``), nodes sorted by id and edges by
(from, to, kind, provenance) comparing UTF-8 bytes, node and edge members in fixed order, every
other object's keys sorted by UTF-16 code units (RFC 8785), every string NFC-normalised first.
Strings are escaped as RFC 8785 §3.2.2.2 does (the format's rule 8, which the standard
library's JSON string writer follows exactly); integers are written in decimal with no size
limit; floats are refused. The digest is named in the bytes: SHA-256 by default, SHA-384 or
SHA-512 on request.

The format is restated in ``docs/connectome.md``; its worked examples are the tests.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any

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


# The standard library's JSON string writer, without ASCII escaping, writes exactly the format's
# escaping (rule 8): ``\"`` ``\\`` ``\b`` ``\t`` ``\n`` ``\f`` ``\r``, every other U+0000-U+001F as
# ``\u00xx`` in lowercase hex, everything else (U+007F, U+2028, astral characters) literally.
# tests/connectome/test_canonical_equivalence.py holds it to that over every code point.
_ESCAPED = json.JSONEncoder(ensure_ascii=False).encode


def encode_string(text: str) -> bytes:
    """A string as the format writes it (NFC, then the escaping of rule 8); public so the
    sidecar writes its strings exactly as the graph does. A lone surrogate is refused by name."""
    try:
        return _ESCAPED(nfc(text)).encode("utf-8")
    except UnicodeEncodeError:
        raise Uncanonical("a string is not well-formed Unicode") from None


class Once(dict):
    """``make(key)`` computed on first lookup and kept: a graph names each id in every edge
    that touches it, so one encoding normalises and writes each distinct string once. Keys
    are strings compared by equality, as the graph's own id lookups already are."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.make(key)
        return value


def utf16_order(text: str) -> bytes:
    """How object keys and the diff's class arrays are sorted: UTF-16 code units (rule 5)."""
    return text.encode("utf-16-be", "surrogatepass")


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


def _getter(keys: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``keys`` as a tuple, taken in C (``itemgetter`` gives a bare value for
    one key, and takes none without one)."""
    if len(keys) > 1:
        return itemgetter(*keys)
    return lambda value: tuple(value[key] for key in keys)


class _Writer:
    """Values in canonical form, for one encoding: each distinct string is written once, and
    each distinct key set is checked and put in UTF-16 order once (a diff record has one key
    set for a hundred thousand class entries), as a ``%`` template of the object's bytes."""

    def __init__(self) -> None:
        self.strings: dict[str, bytes] = Once(encode_string)
        self.string = self.strings.__getitem__
        # Per key set: the object's ``%`` template (or, when a key cannot be written, that
        # refusal: see ``_object``) and what takes its values in writing order.
        self.layouts: dict[tuple[Any, ...], tuple[bytes | Uncanonical, Callable]] = {}

    def value(self, value: Any, where: str) -> bytes:
        kind = type(value)
        if kind is str:
            return self.strings[value]
        if kind is dict:
            return self._object(value, where)
        if kind is list:
            return self._array(value, where)
        if value is None:
            return b"null"
        if value is True:
            return b"true"
        if value is False:
            return b"false"
        if kind is int:
            return str(value).encode("ascii")
        if isinstance(value, str):
            return self.strings[value]
        if isinstance(value, float):
            raise Uncanonical(f"{where} holds a float; the format admits integers only")
        if isinstance(value, Mapping):
            return self._object(value, where)
        if isinstance(value, (list, tuple)):
            return self._array(value, where)
        raise Uncanonical(f"{where} holds a {type(value).__name__}, which has no JSON form")

    def _array(self, items: Sequence[Any], where: str) -> bytes:
        # A class array of the diff is a hundred thousand objects: skip ``value``'s dispatch.
        written = [
            self._object(item, where) if type(item) is dict else self.value(item, where)
            for item in items
        ]
        return b"[" + b",".join(written) + b"]"

    def _object(self, value: Mapping[str, Any], where: str) -> bytes:
        keys = tuple(value)
        layout = self.layouts.get(keys)
        if layout is None:
            layout = self.layouts[keys] = self._layout(keys, where)
        template, values = layout
        items = values(value)
        if isinstance(template, Uncanonical):
            # Members are written key then value in order, so the values before an unwritable
            # key are written (and may be refused) first, as member-by-member writing would.
            for item in items:
                self.value(item, where)
            raise template
        try:
            # Only strings, the common case, go through the cache in C; anything else fails
            # there with a TypeError (no other value is equal to a string), so all are
            # written one by one, in order, as any value is.
            return template % tuple(map(self.string, items))
        except TypeError:
            return template % tuple([self.value(item, where) for item in items])

    def _layout(self, keys: tuple[Any, ...], where: str) -> tuple[bytes | Uncanonical, Callable]:
        members: dict[str, str] = {}
        for key in keys:
            if not isinstance(key, str):
                raise Uncanonical(f"{where} has a key that is not a string")
            normal = nfc(key)
            if normal in members:
                raise Uncanonical(f"{where} has two keys equal after NFC")
            members[normal] = key
        order = sorted(members, key=utf16_order)
        names = []
        for position, name in enumerate(order):
            try:
                names.append(self.strings[name].replace(b"%", b"%%") + b":%b")
            except Uncanonical as refusal:
                return refusal, _getter(tuple(members[name] for name in order[:position]))
        template = b"{" + b",".join(names) + b"}"
        return template, _getter(tuple(members[name] for name in order))


def encode_value(value: Any, *, where: str = "value") -> bytes:
    """Any JSON value in canonical form: objects' keys in UTF-16 order, no floats."""
    return _Writer().value(value, where)


def check_algorithm(algorithm: str) -> None:
    """Refuse a digest algorithm the format does not name (``ALGORITHMS``); public because
    every record that carries an ``algorithm`` member (the graph, the diff) checks it."""
    if algorithm not in ALGORITHMS:
        raise Uncanonical(f"unknown digest algorithm; use one of {', '.join(ALGORITHMS)}")


_NODE = b'{"id":%b,"kind":%b,"labels":%b,"level":%b}'
_EDGE = b'{"from":%b,"kind":%b,"provenance":%b,"sign":%b,"to":%b}'


def normalised(edges: Sequence[Edge], name: str, normal: dict[str, str]) -> Iterator[str]:
    """One member of every edge, after NFC, in edge order: a column built in C (``map``),
    where a loop over a hundred thousand edges would spend most of an encoding's time."""
    return map(normal.__getitem__, map(attrgetter(name), edges))


def _refuse_edge(edges: Sequence[Edge], nodes: Mapping[str, Node], normal: dict[str, str]) -> None:
    """Raise the refusal of the first edge, in the graph's order, that dangles or repeats."""
    keys: set[tuple[str, ...]] = set()
    for edge in edges:
        key = source, target, kind, _ = tuple(normal[part] for part in edge.key)
        if source not in nodes or target not in nodes:
            raise Uncanonical(f"the edge {source!r} -> {target!r} has an endpoint with no node")
        if key in keys:
            raise Uncanonical(f"the edge {source!r} -> {target!r} ({kind}) is listed twice")
        keys.add(key)


def encode_graph(graph: Graph, algorithm: str = "sha256") -> bytes:
    """The canonical bytes of a graph. Refuses what the format refuses, never repairs it.

    Node ids are sorted once, as Python strings after NFC (code point order is UTF-8 byte
    order, lone surrogates included), and edges then sort by the (from, to) ranks and the
    kind and provenance strings, their four-part keys being unique; every per-edge step is a
    ``map`` or ``zip`` in C. Only a graph with a dangling or repeated edge is walked edge by
    edge, to name the first one.
    """
    check_algorithm(algorithm)
    normal: dict[str, str] = Once(nfc)
    nodes: dict[str, Node] = {}
    for node in graph.nodes:
        node_id = normal[node.id]
        if node_id in nodes:
            raise Uncanonical(f"two nodes share the id {node_id!r} after NFC")
        nodes[node_id] = node
    ids = sorted(nodes)
    rank = {node_id: position for position, node_id in enumerate(ids)}
    edges = graph.edges
    froms = list(map(rank.get, normalised(edges, "source", normal)))
    tos = list(map(rank.get, normalised(edges, "target", normal)))
    kinds = list(normalised(edges, "kind", normal))
    provenances = list(normalised(edges, "provenance", normal))
    keys = set(zip(froms, tos, kinds, provenances, strict=True))
    if None in froms or None in tos or len(keys) < len(edges):
        _refuse_edge(edges, nodes, normal)
    rows = sorted(zip(froms, tos, kinds, provenances, map(attrgetter("sign"), edges), strict=True))
    writer = _Writer()
    strings = writer.strings
    node_bytes = []
    for node_id in ids:
        node = nodes[node_id]
        named = strings[node_id], strings[node.kind]
        if type(node.labels) is dict and not node.labels:  # most nodes: no writer call
            labels = b"{}"
        else:
            labels = writer.value(dict(node.labels), f"the labels of {node_id!r}")
        node_bytes.append(_NODE % (*named, labels, strings[node.level]))
    ends = [strings[node_id] for node_id in ids]  # by rank, all written with the nodes
    column = [map(itemgetter(part), rows) for part in range(5)]
    edge_bytes = map(
        _EDGE.__mod__,
        zip(
            map(ends.__getitem__, column[0]),
            map(strings.__getitem__, column[2]),
            map(strings.__getitem__, column[3]),
            map(strings.__getitem__, column[4]),
            map(ends.__getitem__, column[1]),
            strict=True,
        ),
    )
    return b"".join(
        (
            b'{"schema_version":3,"algorithm":',
            strings[algorithm],
            b',"nodes":[',
            b",".join(node_bytes),
            b'],"edges":[',
            b",".join(edge_bytes),
            b"]}",
        )
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


def node_parts(identity: str) -> list[str]:
    """A node id's components as ``node_id`` was given them ('/' and '%' unescaped)."""
    return [part.replace("%2F", "/").replace("%25", "%") for part in identity.split("/")]
