"""Effects observed through a real server process: the queries and mail of real calls, as
observed edges in the merged store and the exports, credited to the host functions that had
them and never to the package's own work, with no argument byte anywhere it writes.

SQLite here, PostgreSQL on the run that uses it (``-m orm``, tests/databases.py).
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.databases import is_postgres, rows
from tests.http.mcphttp_support import message, post, server_env, start_server
from tests.support import manage

pytestmark = [pytest.mark.slow, pytest.mark.orm]

SERVER = "beammcp-sample-weather"
SAMPLE = "sample_project.demo.mcp"
EFFECTS = "tests.connectome.effectsapp.mcp"


def function(module: str, qualname: str, arity: int) -> str:
    return f"{SERVER}/module/{module}/{qualname}/{arity}"


def effect(*parts: str) -> str:
    return "/".join((SERVER, "effect", *parts))


def tool(name: str) -> str:
    return f"{SERVER}/tool/{name}"


def call(port: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = post(port, message(name, "tools/call", {"name": name, "arguments": arguments}))
    assert reply.status == 200, reply.body
    result = reply.json()["result"]
    assert not result.get("isError"), result
    return result


def read(port: int, uri: str) -> dict[str, Any]:
    reply = post(port, message(uri, "resources/read", {"uri": uri}))
    assert reply.status == 200, reply.body
    return reply.json()["result"]


def export(env: dict[str, str], tmp_path: Path, graph: str) -> tuple[dict[str, Any], bytes]:
    target = tmp_path / f"{graph}.json"
    extra = ["--weights", str(tmp_path / "weights.json")] if graph == "observed" else []
    manage(env, "mcp_connectome", "export", f"--{graph}", "-o", str(target), *extra)
    data = target.read_bytes()
    return json.loads(data), data


def edges(graph: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(e["from"], e["to"], e["kind"]) for e in graph["edges"]}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One server on a fresh database, every effectful call made once with a secret in its
    free-text argument, then stopped (its exit flush writes every count)."""
    tmp_path = tmp_path_factory.mktemp("effects")
    env = {
        **server_env(tmp_path),
        "DJANGO_SETTINGS_MODULE": "tests.connectome.effects_settings",
        "BEAMMCP_TEST_FLUSH_SECONDS": "3600",
    }
    secret = f"planted-{secrets.token_hex(8)}"
    server = start_server("mcp_serve", env, tmp_path)
    listener = socket.create_server(("localhost", 0))
    try:
        port = server.port
        call(port, "touch_the_world", {"port": listener.getsockname()[1]})
        call(port, "record_observation", {"city": "oslo", "temperature_c": 3.5})
        call(port, "current_conditions", {"city": "lisbon"})
        call(port, "get_forecast", {"city": "oslo", "days": 2})
        read(port, "weather://observations/oslo")
        made = call(port, "create_watch_list", {"cities": ["oslo"]})["structuredContent"]
        call(port, "watch_city", {"watch_list_id": made["watch_list_id"], "city": "lisbon"})
        call(port, "watched_forecast", {"watch_list_id": made["watch_list_id"]})
        for name in ("count_readings", "mail_digest", "raw_count", "purge_city", "async_record"):
            call(port, name, {"note": secret})
        read(port, "connectome://observed")  # the package's own queries, inside a host call
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=20)
    finally:
        listener.close()
        server.stop()
    observed, observed_bytes = export(env, tmp_path, "observed")
    declared, _ = export(env, tmp_path, "declared")
    diff, diff_bytes = export(env, tmp_path, "diff")
    return {
        "env": env,
        "dir": tmp_path,
        "secret": secret,
        "observed": observed,
        "declared": declared,
        "diff": diff,
        "written": [observed_bytes, diff_bytes, (tmp_path / "weights.json").read_bytes()],
    }


def test_a_tool_s_write_and_the_async_template_s_read_are_observed_from_their_handlers(served):
    found = edges(served["observed"])
    record = function(SAMPLE, "RecordObservation.call", 3)
    template = function(SAMPLE, "CityObservations.read", 4)
    assert (record, effect("model.write", "demo.Observation"), "effect") in found
    # The async ORM's query ran in asgiref's thread: credited to the handler awaiting it.
    assert (template, effect("model.read", "demo.Observation"), "effect") in found
    # Both are declared too: the diff holds them as declared and observed.
    both = {(e["from"], e["to"]) for e in served["diff"]["classes"]["declared_and_observed"]}
    assert (record, effect("model.write", "demo.Observation")) in both
    assert (template, effect("model.read", "demo.Observation")) in both


def test_a_handle_is_its_kind_s_effect_declared_and_observed_never_the_package_s_tables(served):
    found = edges(served["observed"])
    made = function(SAMPLE, "CreateWatchList.call", 3)
    watch = function(SAMPLE, "WatchCity.call", 3)
    forecast = function(SAMPLE, "WatchedForecast.call", 3)
    expected = {
        (made, effect("handle.mint", "watch_list")),
        (watch, effect("handle.use", "watch_list")),
        (forecast, effect("handle.use", "watch_list")),  # awaited on a thread: its handler's
    }
    assert {(source, target, "effect") for source, target in expected} <= found
    # The store's own queries (McpHandle's table) are the package's: the test below.
    both = {(e["from"], e["to"]) for e in served["diff"]["classes"]["declared_and_observed"]}
    assert expected <= both


def test_a_read_only_tool_reaches_no_effect_and_a_helper_s_query_shows_the_helper(served):
    found = edges(served["observed"])
    forecast = function(SAMPLE, "GetForecast.call", 3)
    assert (tool("get_forecast"), forecast, "invoke") in found
    assert not [edge for edge in found if edge[0] == forecast]
    counting = function(EFFECTS, "CountReadings.call", 3)
    helper = function(EFFECTS, "readings_like", 1)
    assert (counting, helper, "invoke") in found
    assert (helper, effect("model.read", "demo.Observation"), "effect") in found
    assert not [edge for edge in found if edge[0] == counting and edge[2] == "effect"]


def test_mail_raw_sql_deletes_and_async_writes_are_observed(served):
    found = edges(served["observed"])
    assert (function(EFFECTS, "MailDigest.call", 3), effect("mail"), "effect") in found
    # A raw statement on a model's table is that model's read; declared, it is raw SQL.
    raw = function(EFFECTS, "RawCount.call", 3)
    assert (raw, effect("model.read", "demo.Observation"), "effect") in found
    assert (raw, effect("sql", "default"), "effect") in edges(served["declared"])
    purge = function(EFFECTS, "PurgeCity.call", 3)
    assert (purge, effect("model.delete", "demo.Observation"), "effect") in found
    writer = function(EFFECTS, "AsyncRecord.call", 3)
    assert (writer, effect("model.write", "demo.Observation"), "effect") in found
    assert (writer, effect("model.read", "demo.Observation"), "effect") in found


def test_a_connection_a_file_written_and_a_process_are_observed_from_audit_events(served):
    touching = function(EFFECTS, "TouchTheWorld.call", 3)
    found = {edge[1] for edge in edges(served["observed"]) if edge[0] == touching}
    assert found == {effect("network", "localhost"), effect("file.write"), effect("subprocess")}
    declared = {edge[1] for edge in edges(served["declared"]) if edge[0] == touching}
    # Declared: the host is not a literal of the call, the file and the process are.
    assert declared == {effect("network", "*"), effect("file.write"), effect("subprocess")}


def test_the_package_s_own_queries_are_credited_to_no_tool(served):
    # Flushes, the store read behind connectome://observed, the handles' rows, and every
    # other query the package ran: no effect on any of the package's own models, from
    # anything.
    touched = {e["to"] for e in served["observed"]["edges"] if e["kind"] == "effect"}
    assert touched, "no effect was observed at all"
    assert not [node for node in touched if "beammcp_django" in node]
    kinds = {node.split("/effect/", 1)[1].split("/")[0] for node in touched}
    expected = {"model.read", "model.write", "model.delete", "mail", "handle.mint", "handle.use"}
    assert kinds == expected | {"network", "file.write", "subprocess"}, touched
    others = {e["to"] for e in served["observed"]["edges"] if e["kind"] == "effect"
              and not e["from"].endswith("TouchTheWorld.call/3")}  # fmt: skip
    assert {node.split("/effect/", 1)[1].split("/")[0] for node in others} == expected


def test_the_audit_names_the_mis_annotated_tools_in_the_diff_record(served):
    findings = served["diff"]["annotation_findings"]
    named = {(f["tool"], f["hint"], f["value"], f["effect"], f["graph"]) for f in findings}
    write = effect("model.write", "demo.Observation")
    assert (tool("current_conditions"), "readOnlyHint", True, write, "declared") in named
    assert (tool("current_conditions"), "readOnlyHint", True, write, "observed") in named
    delete = effect("model.delete", "demo.Observation")
    assert (tool("purge_city"), "destructiveHint", False, delete, "observed") in named
    assert (tool("mail_digest"), "openWorldHint", False, effect("mail"), "observed") in named
    # The sample's well-annotated tools are in no finding.
    assert not {f["tool"] for f in findings} & {tool("get_forecast"), tool("record_observation")}


def test_no_argument_byte_is_in_the_store_or_any_export(served):
    secret = served["secret"].encode()
    for data in served["written"]:
        assert secret not in data
    url = served["env"]["DATABASE_URL"]
    stored = rows(url, "SELECT source, target, kind, node FROM beammcp_django_observededge")
    assert stored and secret.decode() not in repr(stored)
    if not is_postgres(url):
        database = Path(url.removeprefix("sqlite:///"))
        for path in database.parent.glob(database.name + "*"):  # the file, its WAL
            assert secret not in path.read_bytes(), path
