"""Effects observed at run time (connectome/effect_observer.py, query_observer.py): credited
to the host call in progress and the host functions on the stack, to the call's handler when
no host frame is there, and to nothing outside a host call."""

from __future__ import annotations

import importlib
import sys
import threading

import pytest
from django.db import connection

from beammcp_django.connectome.core.effect_observer import EffectObserver
from beammcp_django.connectome.core.effects import MAIL, MODEL_READ, MODEL_WRITE, Effect
from beammcp_django.connectome.query_observer import QueryObserver
from beammcp_django.models import ObservedEdge
from beammcp_django.protocol.calling import host_call
from tests.connectome import effect_host

SCOPE = [effect_host.__name__]
CALL = ("tools/call", "t")
HANDLER = f"s/module/{effect_host.__name__}/handler/1"


def handler_of(call):
    return HANDLER if call == CALL else None


def function(name: str, arity: int) -> str:
    return f"s/module/{effect_host.__name__}/{name}/{arity}"


def in_call(work, *args):
    token = host_call.set(CALL)
    try:
        return work(*args)
    finally:
        host_call.reset(token)


def labels(observer: EffectObserver) -> dict[tuple[str, str, str], int]:
    return {label: seen.count for label, seen in observer.edges("s", handler_of).items()}


def test_an_effect_is_credited_to_the_chain_of_host_functions_that_had_it():
    observer = EffectObserver(SCOPE)
    in_call(effect_host.handler, observer)
    in_call(effect_host.handler, observer)
    assert labels(observer) == {
        (function("handler", 1), function("helper", 1), "invoke"): 2,
        (function("helper", 1), "s/effect/mail", "effect"): 2,
    }


def test_a_remembered_chain_is_used_only_while_its_frames_are_where_they_were():
    # The same effect of the same call, by way of two functions: each is credited to its own.
    observer = EffectObserver(SCOPE)
    for way in (effect_host.first, effect_host.second, effect_host.first):
        in_call(way, observer)
    assert labels(observer) == {
        (function("first", 1), function("helper", 1), "invoke"): 2,
        (function("second", 1), function("helper", 1), "invoke"): 1,
        (function("helper", 1), "s/effect/mail", "effect"): 3,
    }


def test_outside_a_host_call_nothing_is_counted():
    observer = EffectObserver(SCOPE)
    effect_host.handler(observer)
    assert labels(observer) == {}


def test_with_no_host_frame_on_the_stack_the_call_s_handler_is_credited():
    # As the async ORM's queries are: run in a worker thread, away from the host's coroutine.
    observer = EffectObserver(["no.such.package"])
    in_call(observer.note, Effect(MODEL_READ, "demo.Observation"), "select")
    assert labels(observer) == {(HANDLER, "s/effect/model.read/demo.Observation", "effect"): 1}
    other = EffectObserver(["no.such.package"])
    token = host_call.set(("tools/call", "package-owned"))  # a handler outside the scope
    try:
        other.note(Effect(MAIL), "mail")
    finally:
        host_call.reset(token)
    assert labels(other) == {}


def test_a_thread_started_inside_a_call_without_its_context_is_not_the_call_s():
    observer = EffectObserver(SCOPE)

    def in_thread() -> None:
        thread = threading.Thread(target=effect_host.helper, args=(observer,))
        thread.start()
        thread.join()

    in_call(in_thread)
    assert labels(observer) == {}


@pytest.fixture
def queries():
    observer = EffectObserver(SCOPE)
    hook = QueryObserver(observer)
    hook.install(connection)
    try:
        yield observer
    finally:
        connection.execute_wrappers.remove(hook)


@pytest.mark.django_db
def test_a_call_s_queries_are_reads_and_writes_of_their_models(queries):
    in_call(effect_host.read_and_write)
    effect_host.read_and_write()  # outside the call: not counted
    found = labels(queries)
    assert found == {
        (function("read_and_write", 0), "s/effect/model.read/demo.Observation", "effect"): 1,
        (function("read_and_write", 0), "s/effect/model.write/demo.Observation", "effect"): 1,
    }


@pytest.mark.django_db
def test_the_statement_text_is_classified_once_and_no_parameter_is_kept(queries):
    in_call(effect_host.read_and_write)
    hook = next(w for w in connection.execute_wrappers if isinstance(w, QueryObserver))
    assert all("oslo" not in sql for sql, _ in hook._statements)
    assert {effects for effects in hook._statements.values()} >= {
        (Effect(MODEL_READ, "demo.Observation"),),
        (Effect(MODEL_WRITE, "demo.Observation"),),
    }


@pytest.mark.django_db
def test_package_queries_with_no_host_frame_and_a_package_handler_are_nobody_s(queries):
    token = host_call.set(("resources/read", "connectome://observed"))
    try:
        ObservedEdge.objects.count()  # from no host function: this module is not in scope
    finally:
        host_call.reset(token)
    assert labels(queries) == {}


def test_hosts_a_caller_may_choose_are_bounded_per_process(monkeypatch):
    import socket

    from beammcp_django.connectome.core import process_events

    monkeypatch.setattr(process_events._State, "hosts", set())
    connecting = socket.socket()
    try:
        names = [
            process_events._network((connecting, (f"h{number}.example", 443)))
            for number in range(process_events._HOST_LIMIT + 3)
        ]
    finally:
        connecting.close()
    assert names[0] == Effect("network", "h0.example")
    assert names[-1] == Effect("network", "*")
    assert len({name.subject for name in names}) == process_events._HOST_LIMIT + 1


def test_an_import_s_bytecode_cache_is_not_a_file_write_of_the_call(tmp_path, monkeypatch):
    """A module imported for the first time inside a call has its bytecode cache written (a
    __pycache__ made, a temporary file renamed onto the .pyc): the interpreter's doing, not
    the call's. A file the call writes itself is the call's."""
    from beammcp_django.connectome.core import process_events

    (tmp_path / "freshly_written_module.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delitem(sys.modules, "freshly_written_module", raising=False)
    observer = EffectObserver(SCOPE)
    process_events.observe(observer)
    try:
        in_call(importlib.import_module, "freshly_written_module")
        assert list((tmp_path / "__pycache__").glob("freshly_written_module.*.pyc"))
        assert not [label for label in labels(observer) if "file.write" in label[1]]
        in_call((tmp_path / "note.txt").write_text, "written by the call")
        assert [label for label in labels(observer) if "file.write" in label[1]]
    finally:
        process_events.observe(None)
        sys.modules.pop("freshly_written_module", None)
