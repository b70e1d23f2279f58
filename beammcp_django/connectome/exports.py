"""This project's connectome: the declared graph, the observed graph from the merged store,
their diff, and the canonical bytes of each, as the ``connectome://`` resources, the admin
and ``manage.py mcp_connectome`` serve them (one function, so the three are byte-identical).

The rest of ``beammcp_django.connectome`` knows nothing of Django; this module adapts it:
the catalog and server name from settings, the scope (``BEAMMCP["CONNECTOME_SCOPE"]``, by
default the installed apps holding the catalog's handlers), and the store.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any

from django.apps import apps

from beammcp_django.conf import forget_on_change, get_settings, load_catalog
from beammcp_django.connectome.core import process_events
from beammcp_django.connectome.core.annotations import Finding, findings, records
from beammcp_django.connectome.core.canonical import Edge, Graph, digest, encode_graph, node_id
from beammcp_django.connectome.core.declared import Declared, build_declared, handler_function
from beammcp_django.connectome.core.diff import diff, encode_record
from beammcp_django.connectome.core.effect_observer import EffectObserver
from beammcp_django.connectome.core.effects import Effect
from beammcp_django.connectome.core.hiding import owned_nodes, without
from beammcp_django.connectome.core.observed import (
    EdgeKey,
    EdgeLabel,
    Observation,
    call_function,
    call_handler,
    edges_of_calls,
    handler_id,
    observed_graph,
    process_collector,
)
from beammcp_django.connectome.core.questions import GRAPH_NAMES, BadQuestion, ask, merged
from beammcp_django.connectome.core.sidecar import encode_sidecar
from beammcp_django.connectome.core.tracer import Tracer
from beammcp_django.connectome.query_observer import QueryObserver
from beammcp_django.connectome.store import Flusher, merged_counts
from beammcp_django.models import ObservedEdge
from beammcp_django.protocol.catalog import ENTRY_KINDS

GRAPHS = ("declared", "observed", "diff")


@dataclass(frozen=True)
class Observed:
    graph: Graph
    weights: dict[Edge, int]
    # The observation window the diff record carries: first and last call seen, UTC.
    window: dict[str, str]


@dataclass(frozen=True)
class Export:
    """The canonical bytes of one graph and their digest."""

    name: str
    data: bytes
    algorithm: str
    hexdigest: str

    @property
    def filename(self) -> str:
        return f"connectome.{self.name}.json"


def server_name() -> str:
    return get_settings()["SERVER_NAME"]


def _handler_modules(catalog: Any) -> set[str]:
    modules = (
        getattr(handler_function(catalog, spec, kind.tag), "__module__", None)
        for kind in ENTRY_KINDS
        for spec in getattr(catalog, kind.list)
    )
    return {module for module in modules if module}


def scope() -> tuple[str, ...]:
    """The packages whose source the declared graph reads and the tracer watches."""
    configured = get_settings()["CONNECTOME_SCOPE"]
    if configured is not None:
        return tuple(configured)
    names = set()
    for module in _handler_modules(load_catalog()):
        app = apps.get_containing_app_config(module)
        if app is not None and app.name != "beammcp_django":
            names.add(app.name)
    return tuple(sorted(names))


def _entry_names(catalog: Any) -> tuple[tuple[str, ...], ...]:
    return (*(tuple(spec.key for spec in getattr(catalog, kind.list)) for kind in ENTRY_KINDS),)


class _ByIdentity:
    """A catalog as a cache key, by identity: any object with the entry lists may be a
    catalog, and a dataclass or a namespace has no hash."""

    __slots__ = ("catalog",)

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog

    def __hash__(self) -> int:
        return id(self.catalog)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByIdentity) and other.catalog is self.catalog


def declared() -> Declared:
    """The declared graph and its completeness bound (rebuilt when the entries change)."""
    catalog = load_catalog()
    return _declared(_ByIdentity(catalog), _entry_names(catalog), server_name(), scope())


def model_labels() -> dict[str, str]:
    """Each installed model's dotted names (where it is defined, and its app's ``models``
    module, which may re-export it) and its ``app_label.Model``."""
    labels = {}
    for model in apps.get_models(include_auto_created=True):
        labels[f"{model.__module__}.{model.__qualname__}"] = model._meta.label
        models_module = model._meta.app_config.models_module
        if models_module is not None:
            labels.setdefault(f"{models_module.__name__}.{model.__name__}", model._meta.label)
    return labels


def kind_labels(catalog: Any) -> dict[str, str]:
    """Each registered handle kind's class by its dotted name, and the kind's name."""
    return {
        f"{declaration.__module__}.{declaration.__qualname__}": declaration.kind
        for declaration in getattr(catalog, "declarations", ())
        if isinstance(getattr(declaration, "kind", None), str)
        and callable(getattr(declaration, "argument", None))
    }


@lru_cache(maxsize=4)
def _declared(
    catalog: _ByIdentity,
    entries: tuple[tuple[str, ...], ...],
    server: str,
    modules: tuple[str, ...],
) -> Declared:
    return build_declared(
        catalog.catalog, server, modules, model_labels().get, kind_labels(catalog.catalog).get
    )


forget_on_change(_declared.cache_clear)


@dataclass(frozen=True)
class Hidden:
    """The catalog entries a caller's gates hide, as ``(tag, key)`` pairs
    (``resources.hidden_from``), and the node ids of the graph they name."""

    entries: frozenset[tuple[str, str]]

    @cached_property
    def nodes(self) -> tuple[list[str], list[str], list[str]]:
        """The hidden entries' nodes, the visible entries' nodes, and the hidden entries'
        handler nodes (those in scope)."""
        catalog, server, modules = load_catalog(), server_name(), scope()
        hidden: list[str] = []
        visible: list[str] = []
        handlers: list[str] = []
        for kind in ENTRY_KINDS:
            for spec in getattr(catalog, kind.list):
                entry = node_id(server, kind.tag, spec.key)
                if (kind.tag, spec.key) not in self.entries:
                    visible.append(entry)
                    continue
                hidden.append(entry)
                function = handler_function(catalog, spec, kind.tag)
                handler = handler_id(server, function, modules)
                if handler is not None:
                    handlers.append(handler)
        return hidden, visible, handlers

    def owned(self, graph: Graph) -> frozenset[str]:
        """The nodes of ``graph`` the hidden entries own (``hiding.owned_nodes``)."""
        hidden, visible, handlers = self.nodes
        return owned_nodes(graph, hidden, visible, handlers)


def declared_graph(hidden: Hidden | None = None) -> Graph:
    """The declared graph; with ``hidden``, without what the hidden entries own."""
    graph = declared().graph
    if hidden is None or not hidden.entries:
        return graph
    return without(graph, hidden.owned(graph))


class _TracerSlot:
    """The process's tracer, when ``BEAMMCP["CONNECTOME_TRACE"]`` asks for one: started once,
    with the wall-clock time it started (the tracer counts, it keeps no times)."""

    def __init__(self) -> None:
        self.tracer: Tracer | None = None
        self.started_at = 0.0
        self._lock = threading.Lock()

    def start(self, limits: dict[str, Any]) -> None:
        with self._lock:
            if self.tracer is not None:
                return
            tracer = Tracer(
                scope(), max_events=limits["MAX_EVENTS"], max_seconds=limits["MAX_SECONDS"]
            )
            tracer.start()
            self.tracer, self.started_at = tracer, time.time()

    def edges(self) -> dict[EdgeLabel, Observation]:
        tracer = self.tracer
        if tracer is None:
            return {}
        now = time.time()
        return {
            label: Observation(count, self.started_at, now)
            for label, count in tracer.edge_counts(server_name()).items()
        }


tracer_slot = _TracerSlot()


class _EffectSlot:
    """The process's effect observer and its query hook, made from the settings of the
    moment (the scope); ``forget`` takes the hook off new connections."""

    def __init__(self) -> None:
        self.observer: EffectObserver | None = None
        self._queries: QueryObserver | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self.observer is not None:
                return
            catalog = load_catalog()
            observer = EffectObserver(
                scope(), lambda call: getattr(call_function(catalog, call), "__code__", None)
            )
            self._queries = QueryObserver(observer)
            self._queries.start()
            process_events.observe(observer)
            self.observer = observer

    def forget(self) -> None:
        with self._lock:
            if self._queries is not None:
                self._queries.stop()
                process_events.observe(None)
            self.observer = self._queries = None

    def edges(self) -> dict[EdgeLabel, Observation]:
        observer = self.observer
        if observer is None:
            return {}
        catalog, server, modules = load_catalog(), server_name(), scope()

        def handler_of(call: EdgeKey) -> str | None:
            return call_handler(catalog, server, modules, call)

        return observer.edges(server, handler_of)


effect_slot = _EffectSlot()


def note_handle(operation: str, kind: str, depth: int) -> None:
    """Count a server-minted handle's ``operation`` (mint, use, end) of ``kind`` for the host
    call in progress: its ``handle.<operation>`` effect (``handles/book.py`` tells it)."""
    observer = effect_slot.observer
    if observer is not None:
        name = f"handle.{operation}"
        observer.note(Effect(name, kind), (name, kind), depth + 1)


forget_on_change(effect_slot.forget)


def start_observing() -> None:
    """Start the flusher and the effect hooks, and the tracer when configured (once per
    process)."""
    flusher().start()
    effect_slot.start()
    limits = get_settings()["CONNECTOME_TRACE"]
    if limits is not None:
        tracer_slot.start(limits)


def process_edges() -> dict[EdgeLabel, Observation]:
    """What this process has observed, as graph edges (cumulative since it started): the
    dispatch spans' edges, the effects' edges (the host functions on their stacks), and the
    tracer's function edges while one runs or has run (first and last seen of a traced edge:
    the tracer's start and now; its call counts stand for an edge an effect's stack showed)."""
    edges = effect_slot.edges()
    edges.update(tracer_slot.edges())
    edges.update(
        edges_of_calls(process_collector.snapshot(), load_catalog(), server_name(), scope())
    )
    return edges


class _FlusherSlot:
    """The process's flusher, made from the settings of the moment; ``forget`` stops it, so a
    settings change never leaves an old thread flushing beside the new one."""

    def __init__(self) -> None:
        self._flusher: Flusher | None = None
        self._lock = threading.Lock()

    def get(self) -> Flusher:
        with self._lock:
            if self._flusher is None:
                interval = get_settings()["CONNECTOME_FLUSH_SECONDS"]
                self._flusher = Flusher(process_edges, interval)
            return self._flusher

    def forget(self) -> None:
        with self._lock:
            if self._flusher is not None:
                self._flusher.stop()
            self._flusher = None

    def close(self) -> None:
        """The last flush; the slot is emptied, so a later start makes a new flusher."""
        with self._lock:
            flusher, self._flusher = self._flusher, None
        if flusher is not None:
            flusher.close()


flusher_slot = _FlusherSlot()
forget_on_change(flusher_slot.forget)


def finish_observing() -> None:
    """Write this process's counts one last time and stop flushing: for a process that
    leaves without running ``atexit``. Nothing when no flusher was ever made."""
    flusher_slot.close()


def flusher() -> Flusher:
    return flusher_slot.get()


def flush() -> int:
    """Write this process's counts to the store now; how many rows changed."""
    return flusher().flush()


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def observed(hidden: Hidden | None = None) -> Observed:
    """The merged observed graph of every process (this one flushed first) and its counts;
    with ``hidden``, without what the entries hidden from a caller own (``hiding``): their
    edges, counts and first and last calls are in no part of it, the window included."""
    flush()
    merged = merged_counts()
    if hidden is not None and hidden.entries:
        whole, _ = observed_graph({label: seen.count for label, seen in merged.items()})
        owned = hidden.owned(whole)
        merged = {
            label: seen
            for label, seen in merged.items()
            if label[0] not in owned and label[1] not in owned
        }
    graph, weights = observed_graph({label: seen.count for label, seen in merged.items()})
    window = {}
    if merged:
        window = {
            "ended_at": _utc(max(seen.last_seen for seen in merged.values())),
            "started_at": _utc(min(seen.first_seen for seen in merged.values())),
        }
    return Observed(graph, weights, window)


def annotation_findings(declared_graph: Graph, observed_graph: Graph) -> list[Finding]:
    """The annotation audit of both graphs: each tool's reach against its annotations."""
    tools, server = load_catalog().tools, server_name()
    return [
        *findings(declared_graph, tools, server, "declared"),
        *findings(observed_graph, tools, server, "observed"),
    ]


def diff_record(algorithm: str = "sha256", hidden: Hidden | None = None) -> dict[str, Any]:
    """Declared against observed; with ``hidden``, both as that caller may see them."""
    seen = observed(hidden)
    graph = declared_graph(hidden)
    audit = records(annotation_findings(graph, seen.graph))
    return diff(graph, seen.graph, seen.window, algorithm, audit)


def graph_named(name: str) -> Graph:
    """The declared, observed or merged graph (``questions.GRAPH_NAMES``)."""
    if name == "declared":
        return declared().graph
    if name == "observed":
        return observed().graph
    if name == "merged":
        return merged(declared().graph, observed().graph)
    raise BadQuestion(f"no graph named {name!r}; use one of {', '.join(GRAPH_NAMES)}")


def node_named(graph: Graph, text: str) -> str:
    """A node id as a person types it: whole, or without the server's name in front
    (``tool/record_observation``)."""
    known = {node.id for node in graph.nodes}
    if text in known:
        return text
    prefixed = _typed_prefix() + text
    return prefixed if prefixed in known else text


def as_typed(identity: str) -> str:
    """A node id as a person reads and types it: without the server's name in front."""
    return identity.split("/", 1)[-1]


def _typed_prefix() -> str:
    """What a person may leave out of a node id: ``<server>/``."""
    return node_id(server_name(), "")


def reach_answer(
    graph_name: str,
    question: str,
    entry: str,
    effect: str,
    gate: str | None = None,
    graph: Graph | None = None,
) -> dict[str, Any]:
    """One reach question over a named graph (``questions.ask``), nodes as typed: ``graph``
    when the caller already holds it (the admin's page, which has read the store), else
    read now."""
    graph = graph_named(graph_name) if graph is None else graph
    nodes = [node_named(graph, text) if text else None for text in (entry, effect, gate)]
    known = {node.id for node in graph.nodes}
    for text, named in zip((entry, effect, gate), nodes, strict=True):
        suggested = _label_of(graph, text) if text and named not in known else None
        if suggested is not None:
            raise BadQuestion(
                f"the {graph_name} graph has no node {text!r}; did you mean {suggested!r}?"
            )
    return ask(graph, graph_name, question, nodes[0] or "", nodes[1] or "", nodes[2])


def _label_of(graph: Graph, text: str) -> str | None:
    """The node a label copied from a drawing stands for (``model.write/demo.Observation``
    for ``effect/model.write/demo.Observation``), as a person types its id: the one node
    whose id ends with the label, or None."""
    ending = "/" + text
    found = [node.id for node in graph.nodes if node.id.endswith(ending)]
    if len(found) != 1:
        return None
    return as_typed(found[0])


def export(name: str, algorithm: str = "sha256", hidden: Hidden | None = None) -> Export:
    """The canonical bytes of ``name`` (declared, observed or diff) and their digest; with
    ``hidden``, of the part a caller may see (the whole graph is the admin's)."""
    if name == "declared":
        data = encode_graph(declared_graph(hidden), algorithm)
    elif name == "observed":
        data = encode_graph(observed(hidden).graph, algorithm)
    elif name == "diff":
        data = encode_record(diff_record(algorithm, hidden))
    else:
        raise ValueError(f"no connectome graph named {name!r}; use one of {', '.join(GRAPHS)}")
    return Export(name, data, algorithm, digest(data, algorithm))


def weights_sidecar() -> bytes:
    """The observed counts as the sidecar (``schema_version`` 3, never hashed)."""
    return encode_sidecar(observed().weights.items())


def attribution() -> list[ObservedEdge]:
    """Every process's claims, row by row: which process saw which edge, how often, when."""
    return list(ObservedEdge.objects.all())
