"""The merged store: each process flushes its own cumulative counts, never another's."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from typing import Any

import pytest

from beammcp_django import process as servers
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.observed import Observation, process_collector
from beammcp_django.connectome.store import edge_key, merged_counts, process_store
from beammcp_django.models import ObservedEdge
from beammcp_django.signals import observed_flushed

SERVER = "beammcp-sample-weather"
ECHO = f"{SERVER}/tool/echo"
ECHO_HANDLER = f"{SERVER}/module/sample_project.demo.mcp/Echo.call/3"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    process_collector.forget()
    process_store._written.clear()


def call_echo(times: int) -> None:
    for number in range(times):
        message = {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": META},
        }
        reply = asyncio.run(servers.get_server().handle(message))
        assert "result" in reply


def rows() -> dict[tuple[str, str], ObservedEdge]:
    return {(row.source, row.target): row for row in ObservedEdge.objects.all()}


def test_a_flush_writes_one_row_per_edge_for_this_process_with_its_counts():
    call_echo(3)
    assert exports.flush() == 2
    stored = rows()
    assert set(stored) == {(f"{SERVER}/server", ECHO), (ECHO, ECHO_HANDLER)}
    assert {row.count for row in stored.values()} == {3}
    assert {row.node for row in stored.values()} == {process_store.node}
    assert all(row.kind == "invoke" for row in stored.values())


def test_a_flush_with_nothing_new_writes_nothing_and_new_calls_update_the_same_rows():
    call_echo(2)
    exports.flush()
    before = rows()
    assert exports.flush() == 0
    call_echo(1)
    assert exports.flush() == 2
    after = rows()
    assert after.keys() == before.keys()
    for key, row in after.items():
        assert row.pk == before[key].pk
        assert row.count == 3
        assert row.first_seen == before[key].first_seen
        assert row.last_seen >= before[key].last_seen


def test_another_processes_rows_are_never_overwritten_and_the_merged_counts_sum_both():
    moment = datetime(2026, 11, 1, tzinfo=UTC)
    label = (f"{SERVER}/server", ECHO, "invoke")
    other = ObservedEdge.objects.create(
        node="elsewhere:41:1700000000",
        source=label[0],
        target=label[1],
        kind=label[2],
        edge_key=edge_key(label),
        count=40,
        first_seen=moment,
        last_seen=moment,
        flushed_at=moment,
    )
    call_echo(2)
    exports.flush()
    other.refresh_from_db()
    assert other.count == 40
    assert merged_counts()[label].count == 42
    assert merged_counts()[label].first_seen == moment.timestamp()
    assert {row.node for row in exports.attribution() if row.target == ECHO} == {
        "elsewhere:41:1700000000",
        process_store.node,
    }


def test_each_flush_that_writes_sends_observed_flushed_with_the_node_and_row_count():
    received: list[dict[str, Any]] = []

    def receiver(**kwargs: Any) -> None:
        received.append(kwargs)

    observed_flushed.connect(receiver)
    try:
        call_echo(1)
        exports.flush()
        exports.flush()
    finally:
        observed_flushed.disconnect(receiver)
    assert [(r["node"], r["edges"]) for r in received] == [(process_store.node, 2)]


def test_a_forked_child_counts_under_a_name_of_its_own_from_zero():
    call_echo(2)
    parent_node = process_store.node
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            report = {"node": process_store.node, "calls": len(process_collector.snapshot())}
            os.write(writer, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(writer)
    report = json.loads(os.read(reader, 4096))
    os.waitpid(child, 0)
    assert report["node"] != parent_node
    assert report["calls"] == 0
    assert len(process_collector.snapshot()) == 1


def test_processes_agreeing_on_host_name_pid_and_start_second_still_count_apart(monkeypatch):
    # Two containers on the host's network (one host name), each in its own PID namespace
    # (both pid 7), started in the same second: without a tag of its own, each would update
    # the other's rows, and the merged counts would lose one process's calls.
    from beammcp_django.connectome import store

    monkeypatch.setattr(store.socket, "gethostname", lambda: "web")
    monkeypatch.setattr(store.os, "getpid", lambda: 7)
    monkeypatch.setattr(store.time, "time", lambda: 1_800_000_000.0)
    first, second = store.ProcessStore(), store.ProcessStore()
    assert first.node.startswith("web:7:1800000000:")
    assert first.node != second.node
    label = (f"{SERVER}/server", ECHO, "invoke")
    first.flush({label: Observation(3, 1_800_000_000.0, 1_800_000_000.0)})
    second.flush({label: Observation(4, 1_800_000_000.0, 1_800_000_000.0)})
    assert merged_counts()[label].count == 7


def test_a_configured_tracer_adds_the_function_edges_it_saw_inside_the_scope():
    slot = exports._TracerSlot()
    slot.start({"MAX_EVENTS": 200_000, "MAX_SECONDS": 60})
    try:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "get_forecast",
                "arguments": {"city": "oslo", "days": 2},
                "_meta": META,
            },
        }
        assert "result" in asyncio.run(servers.get_server().handle(message))
    finally:
        slot.tracer.stop()
    forecast = f"{SERVER}/module/sample_project.demo.mcp/GetForecast.call/3"
    made_up_day = f"{SERVER}/module/sample_project.demo.mcp/made_up_day/2"
    traced = slot.edges()
    assert traced[(forecast, made_up_day, "invoke")].count == 2
    assert all(label[0].startswith(f"{SERVER}/module/sample_project.demo") for label in traced)


def test_rows_written_in_a_transaction_that_rolls_back_are_written_again_next_time():
    from django.db import transaction

    call_echo(1)

    class RolledBack(Exception):
        pass

    with pytest.raises(RolledBack), transaction.atomic():
        assert exports.flush() == 2
        raise RolledBack
    assert ObservedEdge.objects.count() == 0
    assert exports.flush() == 2
    assert ObservedEdge.objects.count() == 2


ONE_ECHO = "one echo call"


def scripted_flusher(answers: list[Any]) -> Any:
    """A flusher whose collections are ``answers`` in turn: an exception is raised (a failed
    flush, whatever its cause), ``ONE_ECHO`` is one call of echo to write."""
    from beammcp_django.connectome.core.observed import Observation
    from beammcp_django.connectome.store import Flusher

    seen = Observation(1, 1_700_000_000.0, 1_700_000_000.0)
    remaining = iter(
        {(f"{SERVER}/server", ECHO, "invoke"): seen} if answer == ONE_ECHO else answer
        for answer in answers
    )

    def collect() -> dict:
        answer = next(remaining)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return Flusher(collect, interval=None)


def test_a_flush_that_fails_is_logged_in_one_line_and_the_flusher_flushes_again(caplog):
    flusher = scripted_flusher([RuntimeError("not a database error"), ONE_ECHO])
    assert flusher.flush_quietly() == 0
    assert "MCP connectome flush failed" in caplog.text
    assert "RuntimeError: not a database error" in caplog.text
    assert "Traceback" not in caplog.text
    assert flusher.flush_quietly() == 1


def test_the_same_failure_again_is_logged_once_until_a_flush_succeeds(caplog):
    locked = RuntimeError("database is locked")
    flusher = scripted_flusher([locked, locked, locked, ONE_ECHO, locked])
    caplog.set_level("DEBUG", logger="beammcp_django")
    for _ in range(3):
        assert flusher.flush_quietly() == 0
    failures = [r for r in caplog.records if "database is locked" in r.getMessage()]
    assert [r.levelname for r in failures] == ["WARNING", "DEBUG", "DEBUG"]
    assert flusher.flush_quietly() == 1
    assert flusher.flush_quietly() == 0  # failing again after a success: said again
    failures = [r for r in caplog.records if "database is locked" in r.getMessage()]
    assert [r.levelname for r in failures] == ["WARNING", "DEBUG", "DEBUG", "WARNING"]


def test_no_argument_byte_reaches_the_store_or_any_export():
    secret = "argument-secret-5b1e77-never-stored"
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": secret}, "_meta": META},
    }
    asyncio.run(servers.get_server().handle(message))
    exports.flush()
    stored = [
        value
        for row in ObservedEdge.objects.values()
        for value in row.values()
        if isinstance(value, str)
    ]
    assert stored and all(secret not in value for value in stored)
    for name in exports.GRAPHS:
        assert secret.encode() not in exports.export(name).data
    assert secret.encode() not in exports.weights_sidecar()


def test_with_no_interval_the_flusher_starts_no_thread_and_flushes_only_on_demand():
    import threading

    from beammcp_django.connectome.store import Flusher

    before = {thread.name for thread in threading.enumerate()}
    Flusher(dict, interval=None).start()
    assert "beammcp-connectome-flush" not in {t.name for t in threading.enumerate()} - before


def test_a_settings_change_stops_the_running_flusher_and_the_next_uses_the_new_interval():
    from django.test import override_settings

    with override_settings(BEAMMCP={"CONNECTOME_FLUSH_SECONDS": 3600}):
        first = exports.flusher()
        first.start()
        with override_settings(BEAMMCP={"CONNECTOME_FLUSH_SECONDS": None}):
            assert first._stopped.is_set()
            assert exports.flusher() is not first
