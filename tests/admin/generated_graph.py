"""A seeded, generated connectome the size of a large host's, for the admin's tests and
``bench/connectome_page.py``: tools calling handlers calling functions across modules and
packages, the functions reaching model, SQL, network and mail effects, and an observed graph
of some of those edges with call counts."""

from __future__ import annotations

import random

from beammcp_django.connectome.core.canonical import Edge, Graph, Node, node_id
from beammcp_django.connectome.core.declared import Declared
from beammcp_django.connectome.core.effects import EDGE_KIND, Effect
from beammcp_django.connectome.exports import Observed

TOOLS, FUNCTIONS, MODULES, PACKAGES = 150, 1500, 60, 6
EFFECT_EDGES = 400
LEVELS = {"server": "server", "tool": "server", "effect": "boundary", "module": "mfa"}
EFFECTS = (
    *(
        Effect(name, f"app{a}.Model{m}")
        for name in ("model.read", "model.write", "model.delete")
        for a in range(8)
        for m in range(5)
    ),
    Effect("sql", "default"),
    Effect("network", "api.example.com"),
    Effect("mail"),
)


def _function(server: str, index: int) -> str:
    module = index % MODULES
    return node_id(server, "module", f"pkg{module % PACKAGES}.mod{module}", f"f{index}", 2)


def generated(
    server: str, edges: int = 5000, observed: int = 1000, seed: int = 5000
) -> tuple[Declared, Observed]:
    """A declared graph of exactly ``edges`` edges and an observed graph of ``observed`` of
    them (with counts); the same for the same seed."""
    chooser = random.Random(seed)
    tools = [node_id(server, "tool", f"t{i}") for i in range(TOOLS)]
    functions = [_function(server, i) for i in range(FUNCTIONS)]
    effects = [effect.node(server) for effect in EFFECTS]
    found: dict[tuple[str, str], str] = {}
    for index, tool in enumerate(tools):
        found[(node_id(server, "server"), tool)] = "invoke"
        found[(tool, functions[index])] = "invoke"
    while sum(kind == EDGE_KIND for kind in found.values()) < EFFECT_EDGES:
        found[(chooser.choice(functions), chooser.choice(effects))] = EDGE_KIND
    while len(found) < edges:
        source, target = chooser.sample(functions, 2)
        found.setdefault((source, target), "invoke")
    kinds = {node_id(server, "server"): "server", **dict.fromkeys(tools, "tool")}
    kinds.update(dict.fromkeys(effects, "effect"))
    endpoints = dict.fromkeys(identity for pair in found for identity in pair)
    nodes = [Node(i, kinds.get(i, "module"), LEVELS[kinds.get(i, "module")]) for i in endpoints]
    declared_edges = [Edge(s, t, kind, "declared") for (s, t), kind in sorted(found.items())]
    seen = chooser.sample(declared_edges, observed)
    weights = {
        Edge(e.source, e.target, e.kind, "observed"): chooser.randint(1, 10_000) for e in seen
    }
    seen_nodes = {i for e in weights for i in (e.source, e.target)}
    observed_graph = Graph(tuple(n for n in nodes if n.id in seen_nodes), tuple(weights))
    window = {"ended_at": "2026-12-02T00:00:00Z", "started_at": "2026-12-01T00:00:00Z"}
    return Declared(Graph(tuple(nodes), tuple(declared_edges))), Observed(
        observed_graph, weights, window
    )


def stored(edges: int = 5000, seed: int = 5000) -> int:
    """Write a generated graph's edges of ``edges``, every one observed with its count, into
    the store as one process's rows, under the settings' server name: what a large host's
    workers would have flushed. Returns how many rows were written."""
    from datetime import UTC, datetime

    from beammcp_django.connectome.exports import server_name
    from beammcp_django.connectome.store import edge_key
    from beammcp_django.models import ObservedEdge

    _, observed = generated(server_name(), edges=edges, observed=edges, seed=seed)
    now = datetime.now(tz=UTC)
    rows = [
        ObservedEdge(
            node="generated",
            source=edge.source,
            target=edge.target,
            kind=edge.kind,
            edge_key=edge_key((edge.source, edge.target, edge.kind)),
            count=count,
            first_seen=now,
            last_seen=now,
            flushed_at=now,
        )
        for edge, count in observed.weights.items()
    ]
    return len(ObservedEdge.objects.bulk_create(rows, batch_size=500))
