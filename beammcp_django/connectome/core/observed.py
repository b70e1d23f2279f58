"""The observed collector: which catalog entries the calls actually reached, and how often.

A process-local table, in the spirit of the BEAM's ETS: each thread counts in a table of its
own (no lock on the hot path; a lock only when a thread makes its first count), and a snapshot
merges them. It records edge identity and counts only (method, target, first and last seen),
never an argument, a result or a message byte. The server feeds it once per call that reached
host code; ``bench/collector.py`` measures what that costs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from beammcp_django.connectome.core import effects
from beammcp_django.connectome.core.canonical import Edge, Graph, Node, node_id
from beammcp_django.connectome.core.declared import EDGE_OF_TAG, handler_function
from beammcp_django.protocol.catalog import ENTRY_KINDS, KIND_OF_TAG

# (method, target): "tools/call" and a tool name, "resources/read" and a URI, "prompts/get"
# and a prompt name. Node ids are made from these only when a snapshot is read.
EdgeKey = tuple[str, str]


@dataclass(frozen=True)
class Observation:
    count: int
    first_seen: float
    last_seen: float


class Collector:
    def __init__(self) -> None:
        self._local = threading.local()
        self._tables: list[dict[EdgeKey, list[float]]] = []
        self._register = threading.Lock()

    def _table(self) -> dict[EdgeKey, list[float]]:
        table: dict[EdgeKey, list[float]] = {}
        with self._register:
            self._tables.append(table)
        self._local.table = table
        return table

    def record(self, method: str, target: str) -> None:
        """Count one call of ``method`` on ``target`` (the hot path: a dict lookup and two
        stores in this thread's own table)."""
        try:
            table = self._local.table
        except AttributeError:
            table = self._table()
        now = time.time()
        entry = table.get((method, target))
        if entry is None:
            table[(method, target)] = [1, now, now]
        else:
            entry[0] += 1
            entry[2] = now

    def count(self, key: Any) -> None:
        """``record`` for a key made beforehand (the effect hooks keep theirs: a query's key
        is the same every time its statement runs)."""
        try:
            table = self._local.table
        except AttributeError:
            table = self._table()
        now = time.time()
        entry = table.get(key)
        if entry is None:
            table[key] = [1, now, now]
        else:
            entry[0] += 1
            entry[2] = now

    def snapshot(self) -> dict[EdgeKey, Observation]:
        """Every thread's counts merged (cumulative since the process started)."""
        with self._register:
            tables = list(self._tables)
        merged: dict[EdgeKey, Observation] = {}
        for table in tables:
            for key, (count, first, last) in list(table.items()):
                seen = merged.get(key)
                if seen is None:
                    merged[key] = Observation(int(count), first, last)
                else:
                    merged[key] = Observation(
                        seen.count + int(count),
                        min(seen.first_seen, first),
                        max(seen.last_seen, last),
                    )
        return merged

    def forget(self) -> None:
        """Drop every count (a forked child starts from nothing, not from its parent's)."""
        with self._register:
            self._tables = []
        self._local = threading.local()


# The process's collector: the servers this process builds feed it (BEAMMCP["CONNECTOME_OBSERVE"]).
process_collector = Collector()
# A forked worker (a pre-forking server) counts its own calls only.
os.register_at_fork(after_in_child=process_collector.forget)


# An observed edge named as the graph names it: (from node id, to node id, edge kind).
EdgeLabel = tuple[str, str, str]

# Which entry tag and server edge kind each observed method stands for.
_ENTRY_OF_METHOD = {kind.method: (kind.tag, EDGE_OF_TAG[kind.tag]) for kind in ENTRY_KINDS}


def _entry_spec(catalog: Any, tag: str, target: str) -> Any:
    specs = getattr(catalog, KIND_OF_TAG[tag].list)
    return next((spec for spec in specs if spec.key == target), None)


def handler_id(server: str, function: Any, scope: Sequence[str]) -> str | None:
    """The node id of the host function serving an entry, as the declared graph names it
    (module, qualified name, positional arity from the code object), or None outside scope."""
    module = getattr(function, "__module__", None)
    code = getattr(function, "__code__", None)
    if not module or code is None:
        return None
    if not any(module == root or module.startswith(root + ".") for root in scope):
        return None
    return node_id(server, "module", module, code.co_qualname, code.co_argcount)


def edges_of_calls(
    calls: Mapping[EdgeKey, Observation], catalog: Any, server: str, scope: Sequence[str]
) -> dict[EdgeLabel, Observation]:
    """The collector's (method, target) counts as graph edges: the server to the entry it
    served and the entry to the host function the catalog dispatched it to (the span around
    dispatch sees both). Calls with no entry node (completion) and entries no longer in the
    catalog keep only what can be named: nothing, and the server edge, respectively."""
    edges: dict[EdgeLabel, Observation] = {}
    for (method, target), seen in calls.items():
        named = _ENTRY_OF_METHOD.get(method)
        if named is None:
            continue
        tag, kind = named
        entry = node_id(server, tag, target)
        edges[(node_id(server, "server"), entry, kind)] = seen
        function = call_handler(catalog, server, scope, (method, target))
        if function is not None:
            edges[(entry, function, "invoke")] = seen
    return edges


def call_function(catalog: Any, call: EdgeKey) -> Any:
    """The host function the catalog dispatches a (method, target) call to; None for a call
    naming no entry (completion) or an entry gone from the catalog."""
    named = _ENTRY_OF_METHOD.get(call[0])
    if named is None:
        return None
    spec = _entry_spec(catalog, named[0], call[1])
    if spec is None:
        return None
    return handler_function(catalog, spec, named[0])


def call_handler(catalog: Any, server: str, scope: Sequence[str], call: EdgeKey) -> str | None:
    """The node of the host function serving a call (``call_function``), or None, also for
    a handler outside the scope."""
    function = call_function(catalog, call)
    return None if function is None else handler_id(server, function, scope)


# A node's kind and level by its id's tag; any other tag is a host function's.
_NODE_OF_TAG = {
    "server": ("server", "server"),
    "tool": ("tool", "server"),
    "resource": ("resource", "server"),
    "prompt": ("prompt", "server"),
    "effect": (effects.KIND, effects.LEVEL),
}


def observed_graph(counts: Mapping[EdgeLabel, int]) -> tuple[Graph, dict[Edge, int]]:
    """The observed graph (only the endpoints seen, labels empty, every edge
    ``provenance "observed"``, ``sign "unset"``) and its counts as weights beside it: counts
    are never part of the hashed bytes."""
    nodes: dict[str, Node] = {}
    weights: dict[Edge, int] = {}
    for (source, target, kind), count in counts.items():
        for identity in (source, target):
            if identity not in nodes:
                node_kind, level = _NODE_OF_TAG.get(_tag_of(identity), ("module", "mfa"))
                nodes[identity] = Node(identity, node_kind, level)
        weights[Edge(source, target, kind, "observed")] = count
    return Graph(tuple(nodes.values()), tuple(weights)), weights


def _tag_of(identity: str) -> str:
    """The identity tag of a node id: the component after the (escaped) server name."""
    parts = identity.split("/")
    return parts[1] if len(parts) > 1 else ""
