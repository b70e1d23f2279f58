"""Declared against observed: every edge of either graph in exactly one class.

An edge is named by (from, to, kind) after NFC, its provenance aside. An edge in both graphs
is ``changed_sign`` when both sides supplied a sign (neither ``unset``) and they differ, else
``declared_and_observed`` (a one-sided sign is counted, not classed); an edge only declared is
``declared_never_observed`` (authority never used), one only observed is
``observed_but_undeclared`` (drift). The record carries ten coverage counts; consumers divide.
The package never reads a sign as a decision: it only reports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any

from beammcp_django.connectome.core.canonical import (
    SCHEMA_VERSION,
    Graph,
    Once,
    check_algorithm,
    encode_value,
    nfc,
    normalised,
    utf16_order,
)

UNSET = "unset"  # the sign of an edge that supplied none
CLASSES = (
    "changed_sign",
    "declared_and_observed",
    "declared_never_observed",
    "observed_but_undeclared",
)


def _columns(graph: Graph, normal: dict[str, str]) -> list[list[str]]:
    """The from, to and kind of every edge, after NFC, as three columns."""
    return [list(normalised(graph.edges, part, normal)) for part in ("source", "target", "kind")]


class _Labels:
    """Labels as integers: every string of either graph ranked once in UTF-16 order, a label
    is its (from, to, kind) ranks as the digits of one number, so integer order is the class
    arrays' order (from, to, kind in UTF-16 code units) and sets and sorts compare integers."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = sorted(set(texts), key=utf16_order)
        self.rank = {text: position for position, text in enumerate(self.texts)}
        self.base = len(self.texts)

    def signs(self, graph: Graph, columns: list[list[str]]) -> dict[int, str]:
        """Each edge's sign by its label; a label listed twice keeps its last edge's sign."""
        rank, base = self.rank, self.base
        labels = [
            (rank[s] * base + rank[t]) * base + rank[k] for s, t, k in zip(*columns, strict=True)
        ]
        return dict(zip(labels, map(attrgetter("sign"), graph.edges), strict=True))

    def entries(self, labels: Iterable[int]) -> list[dict[str, str]]:
        """The class array of ``labels``, sorted."""
        texts, base, square = self.texts, self.base, self.base * self.base
        return [
            {
                "from": texts[label // square],
                "kind": texts[label % base],
                "to": texts[label // base % base],
            }
            for label in sorted(labels)
        ]

    def covered(self, labels: Iterable[int], nodes: set[str]) -> int:
        """How many of ``labels`` have both endpoints among ``nodes``."""
        inside = [text in nodes for text in self.texts]
        base, square = self.base, self.base * self.base
        return sum(
            1 for label in labels if inside[label // square] and inside[label // base % base]
        )


def _supplied_signs(signs: Mapping[int, str]) -> dict[int, str]:
    """The labels whose edge supplied a sign (not ``unset``), with it, picked out in C so
    that only they are compared one by one (most edges supply none)."""
    given = list(compress(signs.items(), map(UNSET.__ne__, signs.values())))
    return dict(given)


def diff(
    declared: Graph,
    observed: Graph,
    window: Mapping[str, Any],
    algorithm: str = "sha256",
    findings: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The diff record (its canonical bytes: ``encode_record``). ``findings``, the
    annotation audit's (``annotations.records``), are its ``annotation_findings`` member
    when there is any; a record with none has exactly the original's five members.

    Edges are classed as integer labels (``_Labels``) and become the record's entry objects
    only once sorted: the class arrays are the only per-edge objects built."""
    check_algorithm(algorithm)
    normal: dict[str, str] = Once(nfc)
    declared_nodes = {normal[node.id] for node in declared.nodes}
    observed_nodes = {normal[node.id] for node in observed.nodes}
    declared_columns, observed_columns = _columns(declared, normal), _columns(observed, normal)
    labels = _Labels(normal.values())
    declared_signs = labels.signs(declared, declared_columns)
    observed_signs = labels.signs(observed, observed_columns)
    both = declared_signs.keys() & observed_signs.keys()
    declared_given, observed_given = (
        _supplied_signs(declared_signs),
        _supplied_signs(observed_signs),
    )
    changed = [
        label
        for label in declared_given.keys() & observed_given.keys()
        if declared_given[label] != observed_given[label]
    ]
    agreed = both.difference(changed)
    classes = {
        "changed_sign": labels.entries(changed),
        "declared_and_observed": labels.entries(agreed),
        "declared_never_observed": labels.entries(declared_signs.keys() - observed_signs.keys()),
        "observed_but_undeclared": labels.entries(observed_signs.keys() - declared_signs.keys()),
    }
    for label, entry in zip(sorted(changed), classes["changed_sign"], strict=True):
        entry.update(declared_sign=declared_signs[label], observed_sign=observed_signs[label])
    coverage = {
        "declared_and_observed": len(both),
        "declared_edges": len(declared_signs),
        "declared_endpoint_covered": labels.covered(declared_signs, observed_nodes),
        "declared_nodes": len(declared_nodes),
        "declared_sign_only": len(both & declared_given.keys() - observed_given.keys()),
        "nodes_in_both": len(declared_nodes & observed_nodes),
        "observed_edges": len(observed_signs),
        "observed_endpoint_declared": labels.covered(observed_signs, declared_nodes),
        "observed_nodes": len(observed_nodes),
        "observed_sign_only": len(both & observed_given.keys() - declared_given.keys()),
    }
    record = {
        "algorithm": algorithm,
        "classes": classes,
        "coverage": coverage,
        "schema_version": SCHEMA_VERSION,
        "window": dict(window),
    }
    if findings:
        record["annotation_findings"] = [dict(finding) for finding in findings]
    return record


def encode_record(record: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a diff record: every object's keys in UTF-16 order."""
    return encode_value(record, where="the diff record")
