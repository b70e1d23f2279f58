"""The bounded tracer on a real package written to disk: exact edges and counts between its
functions, nothing outside its scope, its two limits removing it, threads started after it,
node ids equal to the declared graph's, and no argument value kept anywhere."""

from __future__ import annotations

import gc
import sys
import textwrap
import threading
import time
import types
import uuid

import pytest

from beammcp_django.connectome.core.canonical import encode_graph
from beammcp_django.connectome.core.declared import build_declared
from beammcp_django.connectome.core.observed import observed_graph
from beammcp_django.connectome.core.tracer import FunctionRef, Tracer
from beammcp_django.protocol.catalog import ToolSpec

PACKAGE = "tracer_fixture_pkg"
OUTSIDE = "tracer_outside_pkg"
SOURCES = {
    f"{PACKAGE}/__init__.py": "",
    f"{PACKAGE}/calls.py": f"""
        from {PACKAGE} import helpers
        from {OUTSIDE} import relay


        def entry(items, note):
            total = 0
            for item in items:
                total += helpers.double(item)
            return helpers.Tally(total).bump(note)


        def through_outside(value):
            return relay.call(helpers.double, value)


        def in_comprehension(values):
            return [helpers.double(value) for value in values]
        """,
    f"{PACKAGE}/helpers.py": """
        def double(value):
            return value * 2


        class Tally:
            def __init__(self, start):
                self.value = start

            def bump(self, note):
                return self.value + len(note)
        """,
    f"{PACKAGE}/hostile.py": """
        class _Name(str):
            def startswith(self, *prefixes):
                raise RuntimeError("a module name that cannot be read")


        def answer():
            return 42


        __name__ = _Name(__name__)
        """,
    f"{OUTSIDE}/__init__.py": "",
    f"{OUTSIDE}/relay.py": """
        def call(function, value):
            return function(value)
        """,
}

ENTRY = FunctionRef(f"{PACKAGE}.calls", "entry", 2)
DOUBLE = FunctionRef(f"{PACKAGE}.helpers", "double", 1)
TALLY_INIT = FunctionRef(f"{PACKAGE}.helpers", "Tally.__init__", 2)
TALLY_BUMP = FunctionRef(f"{PACKAGE}.helpers", "Tally.bump", 2)
IN_COMPREHENSION = FunctionRef(f"{PACKAGE}.calls", "in_comprehension", 1)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """The package's modules, imported from files written for this test module."""
    root = tmp_path_factory.mktemp("traced")
    for path, source in SOURCES.items():
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text(textwrap.dedent(source))
    sys.path.insert(0, str(root))
    try:
        from tracer_fixture_pkg import calls, hostile

        yield types.SimpleNamespace(calls=calls, hostile=hostile)
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.startswith((PACKAGE, OUTSIDE))]:
            del sys.modules[name]


@pytest.fixture
def make_tracer():
    """Tracers over the package with generous limits, always stopped at teardown."""
    made: list[Tracer] = []

    def make(**limits) -> Tracer:
        tracer = Tracer([PACKAGE], **{"max_events": 1_000_000, "max_seconds": 120, **limits})
        made.append(tracer)
        return tracer

    yield make
    for tracer in made:
        tracer.stop()
    assert sys.getprofile() is None and threading.getprofile() is None


def test_calls_between_functions_in_scope_are_counted_exactly(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    package.calls.entry([1, 2, 3], "note")
    package.calls.entry([4], "note")
    tracer.stop()
    assert tracer.edges() == {
        (ENTRY, DOUBLE): 4,
        (ENTRY, TALLY_INIT): 2,
        (ENTRY, TALLY_BUMP): 2,
    }
    assert tracer.stopped_because == "stopped"
    assert sys.getprofile() is None and threading.getprofile() is None


def test_a_call_to_or_from_a_module_outside_the_scope_is_not_recorded(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    assert package.calls.through_outside(3) == 6  # in -> outside relay -> in
    tracer.stop()
    assert tracer.edges() == {}
    assert tracer.events > 0  # the events were seen, only not in scope on both ends


def test_a_comprehension_is_folded_into_the_function_that_holds_it(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    package.calls.in_comprehension([1, 2, 3])
    tracer.stop()
    assert tracer.edges() == {(IN_COMPREHENSION, DOUBLE): 3}


def test_the_event_limit_removes_the_tracer_and_events_stop_counting(package, make_tracer):
    tracer = make_tracer(max_events=50)
    tracer.start()
    for _ in range(100):
        package.calls.entry([1], "note")
    assert tracer.stopped_because == "max_events"
    assert sys.getprofile() is None and threading.getprofile() is None
    assert tracer.events == 50
    counted = tracer.edges()
    assert 0 < sum(counted.values()) < 300  # 100 runs make 300 edges; the limit cut it short
    package.calls.entry([1], "note")
    assert tracer.events == 50
    assert tracer.edges() == counted


def test_the_duration_limit_removes_the_tracer_and_events_stop_counting(package, make_tracer):
    tracer = make_tracer(max_events=10**12, max_seconds=0.2)
    began = time.monotonic()
    tracer.start()
    while sys.getprofile() is not None and time.monotonic() - began < 60:
        package.calls.entry([1], "note")
    assert tracer.stopped_because == "max_seconds"
    assert time.monotonic() - began >= 0.2
    assert threading.getprofile() is None
    events, counted = tracer.events, tracer.edges()
    package.calls.entry([1], "note")
    assert (tracer.events, tracer.edges()) == (events, counted)


def test_a_thread_started_after_start_is_traced_and_merged(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    worker = threading.Thread(target=package.calls.entry, args=([1, 2, 3], "note"))
    worker.start()
    worker.join(timeout=30)
    package.calls.entry([4, 5], "note")
    tracer.stop()
    assert tracer.edges() == {
        (ENTRY, DOUBLE): 5,
        (ENTRY, TALLY_INIT): 2,
        (ENTRY, TALLY_BUMP): 2,
    }


def test_a_traced_thread_removes_its_own_profile_function_after_stop(package, make_tracer):
    ready, go = threading.Event(), threading.Event()
    profile_after_stop: list[object] = []

    def work() -> None:
        package.calls.entry([1], "before")
        ready.set()
        go.wait(timeout=30)
        package.calls.entry([1, 2], "after")
        profile_after_stop.append(sys.getprofile())

    tracer = make_tracer()
    tracer.start()
    worker = threading.Thread(target=work)
    worker.start()
    assert ready.wait(timeout=30)
    tracer.stop()
    go.set()
    worker.join(timeout=30)
    assert profile_after_stop == [None]
    assert tracer.edges()[(ENTRY, DOUBLE)] == 1


def test_a_thread_already_running_is_traced_only_from_python_3_12(package, make_tracer):
    go = threading.Event()

    def work() -> None:
        go.wait(timeout=30)
        package.calls.entry([1], "note")

    worker = threading.Thread(target=work)
    worker.start()
    tracer = make_tracer()
    tracer.start()
    go.set()
    worker.join(timeout=30)
    tracer.stop()
    expected = {(ENTRY, DOUBLE): 1, (ENTRY, TALLY_INIT): 1, (ENTRY, TALLY_BUMP): 1}
    assert tracer.edges() == (expected if sys.version_info >= (3, 12) else {})


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("max_events", 0),
        ("max_events", -1),
        ("max_events", True),
        ("max_events", 1.5),
        ("max_events", None),
        ("max_seconds", 0),
        ("max_seconds", -1),
        ("max_seconds", True),
        ("max_seconds", float("inf")),
        ("max_seconds", float("nan")),
        ("max_seconds", "10"),
    ],
)
def test_a_limit_that_is_not_positive_is_refused_by_name(argument, value):
    limits = {"max_events": 10, "max_seconds": 1.0, argument: value}
    with pytest.raises(ValueError, match=argument):
        Tracer([PACKAGE], **limits)


@pytest.mark.parametrize("argument", ["max_events", "max_seconds"])
def test_both_limits_are_required(argument):
    limits = {"max_events": 10, "max_seconds": 1.0}
    del limits[argument]
    with pytest.raises(TypeError, match=argument):
        Tracer([PACKAGE], **limits)


def test_a_scope_that_names_no_module_is_refused():
    for scope in ([], PACKAGE, [""]):
        with pytest.raises(ValueError, match="scope"):
            Tracer(scope, max_events=10, max_seconds=1.0)


@pytest.mark.parametrize("install", [sys.setprofile, threading.setprofile])
def test_starting_over_another_profiler_is_refused_and_leaves_it_in_place(install, make_tracer):
    def other_profiler(frame, event, arg) -> None:
        return None

    install(other_profiler)
    try:
        with pytest.raises(RuntimeError, match="another profiler"):
            make_tracer().start()
        assert other_profiler in (sys.getprofile(), threading.getprofile())
    finally:
        install(None)


def test_a_tracer_runs_once(make_tracer):
    tracer = make_tracer()
    tracer.start()
    with pytest.raises(RuntimeError, match="runs once"):
        tracer.start()
    tracer.stop()
    with pytest.raises(RuntimeError, match="runs once"):
        tracer.start()
    assert sys.getprofile() is None


def test_a_failure_inside_the_tracer_stops_it_and_never_reaches_host_code(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    assert package.hostile.answer() == 42  # classifying its module raises inside the tracer
    assert tracer.stopped_because == "error"
    assert sys.getprofile() is None and threading.getprofile() is None


def test_node_ids_are_the_declared_graphs_and_the_edges_compare_with_it(package, make_tracer):
    tracer = make_tracer()
    tracer.start()
    package.calls.entry([1, 2], "note")
    package.calls.in_comprehension([1])
    tracer.stop()
    observed, weights = observed_graph(tracer.edge_counts("srv"))

    class Catalog:
        tools = (ToolSpec("entry", {"type": "object"}),)
        resources = ()
        prompts = ()
        dispatch = staticmethod(package.calls.entry)

    modules = [f"{PACKAGE}.calls", f"{PACKAGE}.helpers"]  # every function of both is a node
    declared = build_declared(Catalog(), "srv", modules).graph
    declared_ids = {node.id for node in declared.nodes}
    assert {node.id for node in observed.nodes} <= declared_ids
    assert TALLY_BUMP.node_id("srv") == "srv/module/tracer_fixture_pkg.helpers/Tally.bump/2"

    def labels(graph):
        return {(edge.source, edge.target, edge.kind) for edge in graph.edges}

    def label(caller: FunctionRef, callee: FunctionRef) -> tuple[str, str, str]:
        return (caller.node_id("srv"), callee.node_id("srv"), "invoke")

    both = {label(ENTRY, DOUBLE), label(ENTRY, TALLY_INIT), label(IN_COMPREHENSION, DOUBLE)}
    # A call on a call's result (Tally(...).bump) is beyond static reading: observed only.
    assert labels(observed) == both | {label(ENTRY, TALLY_BUMP)}
    assert labels(observed) & labels(declared) == both
    assert {(edge.source, edge.target): count for edge, count in weights.items()} == {
        label(ENTRY, DOUBLE)[:2]: 2,
        label(ENTRY, TALLY_INIT)[:2]: 1,
        label(ENTRY, TALLY_BUMP)[:2]: 1,
        label(IN_COMPREHENSION, DOUBLE)[:2]: 1,
    }
    assert all(
        (node.kind, node.level, dict(node.labels)) == ("module", "mfa", {})
        for node in observed.nodes
    )
    assert {(edge.provenance, edge.sign) for edge in observed.edges} == {("observed", "unset")}
    assert encode_graph(observed).startswith(b'{"schema_version":3,"algorithm":"sha256"')


def _reachable(root: object) -> list[object]:
    """Every object reachable from ``root``, not descending into modules or classes."""
    seen: set[int] = set()
    found: list[object] = []
    pending = [root]
    while pending:
        item = pending.pop()
        if id(item) in seen or isinstance(item, (types.ModuleType, type)):
            continue
        seen.add(id(item))
        found.append(item)
        pending.extend(gc.get_referents(item))
    return found


def test_no_argument_value_or_frame_is_kept_anywhere(package, make_tracer):
    secret = "secret-" + uuid.uuid4().hex  # built at run time: in no code object's constants
    tracer = make_tracer()
    tracer.start()
    package.calls.entry([1], secret)
    tracer.stop()
    graph, weights = observed_graph(tracer.edge_counts("srv"))
    assert secret not in repr(tracer.edges()) + repr(weights)
    assert secret.encode() not in encode_graph(graph)
    state = _reachable(tracer)
    assert not any(isinstance(item, types.FrameType) for item in state)
    assert not any(isinstance(item, str) and secret in item for item in state)
