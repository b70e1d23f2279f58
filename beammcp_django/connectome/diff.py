"""Declared against observed: every edge of either graph in exactly one class.

An edge is named by (from, to, kind) after NFC, its provenance aside. An edge in both graphs
is ``changed_sign`` when both sides supplied a sign (neither ``unset``) and they differ, else
``declared_and_observed`` (a one-sided sign is counted, not classed); an edge only declared is
``declared_never_observed`` (authority never used), one only observed is
``observed_but_undeclared`` (drift). The record carries ten coverage counts; consumers divide.
The package never reads a sign as a decision: it only reports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .canonical import SCHEMA_VERSION, Edge, Graph, check_algorithm, encode_value, nfc

CLASSES = (
    "changed_sign",
    "declared_and_observed",
    "declared_never_observed",
    "observed_but_undeclared",
)


def _label(edge: Edge) -> tuple[str, str, str]:
    return (nfc(edge.source), nfc(edge.target), nfc(edge.kind))


def _by_label(graph: Graph) -> dict[tuple[str, str, str], Edge]:
    return {_label(edge): edge for edge in graph.edges}


def _order(entry: Mapping[str, Any]) -> tuple[bytes, bytes, bytes]:
    return tuple(entry[key].encode("utf-16-be", "surrogatepass") for key in ("from", "to", "kind"))  # type: ignore[return-value]


def diff(
    declared: Graph,
    observed: Graph,
    window: Mapping[str, Any],
    algorithm: str = "sha256",
    findings: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The diff record (its canonical bytes: ``encode_record``). ``findings``, the
    annotation audit's (``annotations.records``), are its ``annotation_findings`` member
    when there is any; a record with none has exactly the original's five members."""
    check_algorithm(algorithm)
    declared_edges = _by_label(declared)
    observed_edges = _by_label(observed)
    classes: dict[str, list[dict[str, Any]]] = {name: [] for name in CLASSES}
    declared_sign_only = observed_sign_only = both = 0
    for label, edge in declared_edges.items():
        source, target, kind = label
        entry = {"from": source, "kind": kind, "to": target}
        seen = observed_edges.get(label)
        if seen is None:
            classes["declared_never_observed"].append(entry)
            continue
        both += 1
        declared_sign, observed_sign = edge.sign, seen.sign
        if declared_sign != "unset" and observed_sign != "unset" and declared_sign != observed_sign:
            entry.update(declared_sign=declared_sign, observed_sign=observed_sign)
            classes["changed_sign"].append(entry)
            continue
        classes["declared_and_observed"].append(entry)
        if declared_sign != "unset" and observed_sign == "unset":
            declared_sign_only += 1
        elif observed_sign != "unset" and declared_sign == "unset":
            observed_sign_only += 1
    for label in observed_edges.keys() - declared_edges.keys():
        source, target, kind = label
        classes["observed_but_undeclared"].append({"from": source, "kind": kind, "to": target})
    for entries in classes.values():
        entries.sort(key=_order)
    declared_nodes = {nfc(node.id) for node in declared.nodes}
    observed_nodes = {nfc(node.id) for node in observed.nodes}
    coverage = {
        "declared_and_observed": both,
        "declared_edges": len(declared_edges),
        "declared_endpoint_covered": sum(
            1 for s, t, _ in declared_edges if s in observed_nodes and t in observed_nodes
        ),
        "declared_nodes": len(declared_nodes),
        "declared_sign_only": declared_sign_only,
        "nodes_in_both": len(declared_nodes & observed_nodes),
        "observed_edges": len(observed_edges),
        "observed_endpoint_declared": sum(
            1 for s, t, _ in observed_edges if s in declared_nodes and t in declared_nodes
        ),
        "observed_nodes": len(observed_nodes),
        "observed_sign_only": observed_sign_only,
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
