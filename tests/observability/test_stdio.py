"""Observability over stdio, in a real ``manage.py mcp_stdio`` process: a span per request
continuing ``params._meta``'s trace context, a span per host call, one access-log line per
request on stderr (stdout stays protocol-only), and no line at all with the logger left at
its default level."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.observability.conftest import (
    AccessLog,
    by_name,
    new_span_id,
    new_trace_id,
    observe_env,
    traceparent,
)
from tests.stdio.conftest import StdioProcess, legacy_request
from tests.support import message

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory: Path = tmp_path_factory.mktemp("observe-stdio")
    return observe_env(directory)


@pytest.fixture
def stdio_server(stdio_env: dict[str, str]) -> Iterator[StdioProcess]:
    process = StdioProcess(stdio_env)
    yield process
    process.stop()


def stderr_of(process: StdioProcess) -> AccessLog:
    return AccessLog(lambda: bytes(process.stderr_bytes).decode(errors="replace"))


def spans_over_stdio(process: StdioProcess, trace_id: str) -> list[dict]:
    reply = process.request(
        message(
            f"spans-{trace_id}",
            "tools/call",
            {"name": "probe_spans", "arguments": {"trace_id": trace_id}},
        )
    )
    return json.loads(reply["result"]["content"][0]["text"])


def test_a_stdio_request_has_its_spans_and_its_line(stdio_server: StdioProcess) -> None:
    log = stderr_of(stdio_server)
    trace_id, parent_span = new_trace_id(), new_span_id()
    reply = stdio_server.request(
        message(
            "stdio-echo",
            "tools/call",
            {"name": "echo", "arguments": {"text": "argument-value-stdio"}},
            traceparent=traceparent(trace_id, parent_span),
        )
    )
    assert reply["result"]["content"][0]["text"] == "argument-value-stdio"

    spans = by_name(spans_over_stdio(stdio_server, trace_id))
    server, host = spans["tools/call echo"], spans["execute_tool echo"]
    assert server["kind"] == "SpanKind.SERVER"
    assert server["parent_id"].removeprefix("0x") == parent_span
    assert server["attributes"]["network.transport"] == "pipe"
    assert server["attributes"]["jsonrpc.request.id"] == "stdio-echo"
    assert "client.address" not in server["attributes"]
    assert host["parent_id"] == server["context"]["span_id"]

    first = AccessLog.fields(log.wait_for(1)[0])
    assert first["message"].startswith(
        "transport=stdio method=tools/call target=echo outcome=ok duration_ms="
    )
    assert first["message"].endswith(f"trace_id={trace_id}")
    assert (first["transport"], first["status"]) == ("stdio", "None")
    assert "argument-value-stdio" not in bytes(stdio_server.stderr_bytes).decode(errors="replace")


def test_legacy_requests_and_refused_lines_are_logged(stdio_server: StdioProcess) -> None:
    log = stderr_of(stdio_server)
    handshake = legacy_request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "observability-test", "version": "1"},
        },
    )
    assert "result" in stdio_server.request(handshake)
    stdio_server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    reply = stdio_server.request(legacy_request(2, "tools/call", {"name": "fault_explode"}))
    assert reply["error"]["code"] == -32603
    stdio_server.send_raw(b'{"jsonrpc": "2.0", "id": 3,\n')
    assert stdio_server.next_error_without_id(0)["error"]["code"] == -32700
    lines = [AccessLog.fields(line) for line in log.wait_for(3)]
    assert [(line["method"], line["outcome"], line["code"]) for line in lines] == [
        ("initialize", "ok", "None"),
        ("tools/call", "error", "-32603"),
        ("None", "error", "-32700"),
    ]


def test_with_the_logger_at_its_default_level_stdio_writes_no_line(
    stdio_env: dict[str, str],
) -> None:
    env = {**stdio_env, "DJANGO_SETTINGS_MODULE": "tests.stdio_settings"}
    process = StdioProcess(env)
    try:
        reply = process.request(
            message("quiet", "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        )
        assert reply["result"]["content"][0]["text"] == "hi"
        assert process.finish() == 0
    finally:
        process.stop()
    stderr = bytes(process.stderr_bytes).decode(errors="replace")
    assert "transport=stdio" not in stderr
