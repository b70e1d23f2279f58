"""OpenTelemetry spans of MCP requests over HTTP, from a real uvicorn process whose tracer
provider is the SDK's, exporting to memory (read back through the ``probe_spans`` tool).

One ``SERVER`` span per JSON-RPC request, continuing the W3C trace context of
``params._meta`` (2026-07-28 basic/index.mdx) or of the ``traceparent`` header, and one
``INTERNAL`` child per call into host code; error status on JSON-RPC errors and host faults.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.http.mcphttp_support import FAULT_SECRET, ServerProcess, message, post
from tests.observability.conftest import (
    by_name,
    call_tool,
    new_span_id,
    new_trace_id,
    spans_over_http,
    traced_call,
    traceparent,
)

pytestmark = pytest.mark.slow


def hex_id(value: str) -> str:
    """The SDK's JSON writes ids as ``0x``-prefixed hex."""
    return value.removeprefix("0x")


def echo(port: int, **opts: Any) -> None:
    """Call the sample's echo tool (``opts`` as ``call_tool``'s); it must answer the echo."""
    response = call_tool(port, "echo", {"text": "hello"}, **opts)
    assert response.status == 200, response.body
    assert response.json()["result"]["content"][0]["text"] == "hello"


def test_a_tool_call_continues_the_trace_context_its_meta_carries(
    observed_server: ServerProcess,
) -> None:
    trace_id, parent_span = new_trace_id(), new_span_id()
    context = {"traceparent": traceparent(trace_id, parent_span), "tracestate": "rojo=00f067aa"}
    echo(observed_server.port, request_id="traced-echo-1", meta=context)

    spans = by_name(spans_over_http(observed_server.port, trace_id))
    assert set(spans) == {"tools/call echo", "execute_tool echo"}
    server, host = spans["tools/call echo"], spans["execute_tool echo"]
    assert server["kind"] == "SpanKind.SERVER"
    assert hex_id(server["context"]["trace_id"]) == trace_id
    assert hex_id(server["parent_id"]) == parent_span
    assert "rojo" in server["context"]["trace_state"]
    assert server["status"]["status_code"] == "UNSET"
    assert server["attributes"] == {
        "mcp.method.name": "tools/call",
        "network.transport": "tcp",
        "jsonrpc.request.id": "traced-echo-1",
        "mcp.protocol.version": "2026-07-28",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "client.address": "127.0.0.1",
        "client.port": server["attributes"]["client.port"],
        "http.response.status_code": 200,
    }
    assert host["kind"] == "SpanKind.INTERNAL"
    assert hex_id(host["parent_id"]) == hex_id(server["context"]["span_id"])
    assert host["attributes"] == {
        "mcp.method.name": "tools/call",
        "beammcp.host.target": "echo",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
    }
    assert host["start_time"] >= server["start_time"]
    assert host["end_time"] <= server["end_time"]


@pytest.mark.parametrize("tool", ["probe_current_span", "probe_current_span_async"])
def test_host_code_runs_inside_its_call_span_with_meta_baggage_in_a_thread_and_on_the_loop(
    observed_server: ServerProcess, tool: str
) -> None:
    trace_id, response = traced_call(observed_server.port, tool, meta={"baggage": "tenant=blue"})
    seen = json.loads(response.json()["result"]["content"][0]["text"])
    spans = by_name(spans_over_http(observed_server.port, trace_id))
    host = spans[f"execute_tool {tool}"]
    assert seen == {
        "trace_id": trace_id,
        "span_id": hex_id(host["context"]["span_id"]),
        "baggage": {"tenant": "blue"},
    }


def test_without_meta_context_the_http_traceparent_header_is_the_parent(
    observed_server: ServerProcess,
) -> None:
    trace_id, parent_span = new_trace_id(), new_span_id()
    echo(observed_server.port, add=[("traceparent", traceparent(trace_id, parent_span))])
    server = by_name(spans_over_http(observed_server.port, trace_id))["tools/call echo"]
    assert hex_id(server["parent_id"]) == parent_span
    assert server["links"] == []


def test_meta_context_takes_precedence_and_the_header_context_becomes_a_link(
    observed_server: ServerProcess,
) -> None:
    meta_trace, meta_span = new_trace_id(), new_span_id()
    header_trace, header_span = new_trace_id(), new_span_id()
    echo(
        observed_server.port,
        meta={"traceparent": traceparent(meta_trace, meta_span)},
        add=[("traceparent", traceparent(header_trace, header_span))],
    )
    assert spans_over_http(observed_server.port, header_trace) == []
    server = by_name(spans_over_http(observed_server.port, meta_trace))["tools/call echo"]
    assert hex_id(server["parent_id"]) == meta_span
    assert [
        (hex_id(link["context"]["trace_id"]), hex_id(link["context"]["span_id"]))
        for link in server["links"]
    ] == [(header_trace, header_span)]


def test_a_context_the_caller_did_not_sample_records_no_span(
    observed_server: ServerProcess,
) -> None:
    trace_id = new_trace_id()
    echo(observed_server.port, meta={"traceparent": traceparent(trace_id, new_span_id(), False)})
    assert spans_over_http(observed_server.port, trace_id) == []


def test_a_host_fault_ends_both_spans_with_error_status(observed_server: ServerProcess) -> None:
    trace_id, response = traced_call(observed_server.port, "fault_explode")
    assert response.status == 500
    assert response.error()["error"]["code"] == -32603

    spans = by_name(spans_over_http(observed_server.port, trace_id))
    server, host = spans["tools/call fault_explode"], spans["execute_tool fault_explode"]
    assert server["status"] == {
        "status_code": "ERROR",
        "description": "internal error; the server logged it",
    }
    assert server["attributes"]["error.type"] == "-32603"
    assert server["attributes"]["rpc.response.status_code"] == "-32603"
    assert server["attributes"]["http.response.status_code"] == 500
    assert host["status"]["status_code"] == "ERROR"
    assert host["attributes"]["error.type"] == "builtins.RuntimeError"
    (event,) = host["events"]
    assert event["name"] == "exception"
    assert event["attributes"]["exception.type"] == "RuntimeError"
    # The server span, like the reply, carries nothing of the exception's text.
    assert FAULT_SECRET not in json.dumps(server)


def test_a_tool_error_is_an_error_of_type_tool_error_without_an_exception_event(
    observed_server: ServerProcess,
) -> None:
    trace_id, response = traced_call(observed_server.port, "probe_tool_error")
    assert response.json()["result"]["isError"] is True
    spans = by_name(spans_over_http(observed_server.port, trace_id))
    server, host = spans["tools/call probe_tool_error"], spans["execute_tool probe_tool_error"]
    for span in (server, host):
        assert span["status"]["status_code"] == "ERROR"
        assert span["attributes"]["error.type"] == "tool_error"
    assert host["events"] == []
    assert "rpc.response.status_code" not in server["attributes"]


def test_a_refused_request_has_a_server_span_with_its_code_and_no_host_span(
    observed_server: ServerProcess,
) -> None:
    trace_id, response = traced_call(observed_server.port, "no_such_tool")
    assert response.status == 400
    (server,) = spans_over_http(observed_server.port, trace_id)
    # A name the catalog does not have is the client's own bytes: neither the span's name
    # (names must stay few) nor an attribute carries it; the status describes the error as
    # the reply did (its message echoes a plain name, as every refusal may).
    assert server["name"] == "tools/call"
    assert "gen_ai.tool.name" not in server["attributes"]
    assert "no_such_tool" not in json.dumps(server["attributes"])
    assert server["status"]["description"] == response.error()["error"]["message"]
    assert server["attributes"]["error.type"] == "-32602"
    assert server["status"]["status_code"] == "ERROR"


def test_an_unknown_method_gets_a_span_named_mcp(observed_server: ServerProcess) -> None:
    trace_id = new_trace_id()
    body = message(
        "unknown-method",
        "tools/launch",
        {},
        traceparent=traceparent(trace_id, new_span_id()),
    )
    response = post(observed_server.port, body)
    assert response.error()["error"]["code"] == -32601
    (server,) = spans_over_http(observed_server.port, trace_id)
    assert server["name"] == "MCP"
    assert server["attributes"]["mcp.method.name"] == "tools/launch"
    assert server["attributes"]["error.type"] == "-32601"


def test_list_and_read_requests_have_their_spans(observed_server: ServerProcess) -> None:
    trace_id = new_trace_id()
    parent = traceparent(trace_id, new_span_id())
    listed = post(observed_server.port, message("list-1", "tools/list", traceparent=parent))
    assert listed.status == 200
    read = post(
        observed_server.port,
        message("read-1", "resources/read", {"uri": "weather://stations"}, traceparent=parent),
    )
    assert read.status == 200, read.body
    spans = by_name(spans_over_http(observed_server.port, trace_id))
    assert spans["tools/list"]["attributes"]["mcp.method.name"] == "tools/list"
    assert "read_resource weather://stations" in spans
    read_span = spans["resources/read"]
    assert read_span["attributes"]["mcp.resource.uri"] == "weather://stations"
    host = spans["read_resource weather://stations"]
    assert hex_id(host["parent_id"]) == hex_id(read_span["context"]["span_id"])


def test_a_templated_read_names_its_template_never_the_uri_asked_for(
    observed_server: ServerProcess,
) -> None:
    trace_id = new_trace_id()
    uri = "weather://observations/oslo"
    parent = traceparent(trace_id, new_span_id())
    read = post(
        observed_server.port, message("read-2", "resources/read", {"uri": uri}, traceparent=parent)
    )
    assert read.status == 200, read.body
    spans = by_name(spans_over_http(observed_server.port, trace_id))
    attributes = spans["resources/read"]["attributes"]
    assert attributes["beammcp.resource.template"] == "weather://observations/{city}"
    assert "mcp.resource.uri" not in attributes
    assert "read_resource weather://observations/{city}" in spans
    assert "oslo" not in json.dumps(list(spans.values()))
