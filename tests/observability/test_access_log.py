"""The access log: one line per MCP request on the ``beammcp_django.access`` logger, read
from the log of a real uvicorn process (``tests.observability.settings`` enables the logger
at INFO on stderr).

Each line names the JSON-RPC method and what it acts on, the HTTP request and status, how
the request ended and how long it took; never an argument value, never a byte a client
could use to forge a line.
"""

from __future__ import annotations

import re

import pytest

from tests.http.mcphttp_support import (
    ServerProcess,
    exchange,
    http_request,
    message,
    post,
)
from tests.observability.conftest import AccessLog, call_tool, new_span_id, new_trace_id

pytestmark = pytest.mark.slow

LINE = re.compile(
    r'^transport=http request="POST /mcp" status=(?P<status>\d+|-) method=(?P<method>\S+) '
    r"target=(?P<target>\S+) outcome=(?P<outcome>\S+)(?: code=(?P<code>-?\d+))? "
    r"duration_ms=(?P<ms>\d+\.\d{3})(?: trace_id=(?P<trace>[0-9a-f]{32}))?$"
)


def parsed(line: str) -> dict[str, str | None]:
    fields = AccessLog.fields(line)
    found = LINE.match(fields["message"])
    assert found, fields["message"]
    return {**found.groupdict(), "structured": fields}


def log_of(server: ServerProcess) -> AccessLog:
    return AccessLog(lambda: server.log_path.read_bytes().decode(errors="replace"))


def test_a_tool_call_is_one_line_naming_method_tool_status_and_duration_never_arguments(
    observed_server: ServerProcess,
) -> None:
    log = log_of(observed_server)
    secret = f"argument-value-{new_span_id()}"
    trace_id = new_trace_id()
    response = call_tool(
        observed_server.port,
        "probe_current_span",
        {"secret": secret},
        meta={"traceparent": f"00-{trace_id}-{new_span_id()}-01"},
    )
    assert response.status == 200
    (line,) = log.wait_for(1)
    entry = parsed(line)
    assert entry["status"] == "200"
    assert entry["method"] == "tools/call"
    assert entry["target"] == "probe_current_span"
    assert entry["outcome"] == "ok"
    assert entry["code"] is None
    assert float(entry["ms"]) > 0
    assert entry["trace"] == trace_id
    assert entry["structured"] == {
        "transport": "http",
        "method": "tools/call",
        "target": "probe_current_span",
        "status": "200",
        "outcome": "ok",
        "code": "None",
        "ms": entry["structured"]["ms"],
        "trace": trace_id,
        "message": line.partition("ACCESS ")[2].partition(" ")[2],
    }
    assert float(entry["structured"]["ms"]) == pytest.approx(float(entry["ms"]), abs=0.001)
    assert secret not in observed_server.log_path.read_bytes().decode(errors="replace")


def test_refusals_errors_and_notifications_each_get_their_line(
    observed_server: ServerProcess,
) -> None:
    log = log_of(observed_server)
    port = observed_server.port
    assert exchange(port, http_request(None, method="GET", close=True)).status == 405
    assert post(port, None, body=b'{"jsonrpc": "2.0", "id": 1, ', close=True).status == 400
    assert call_tool(port, "no_such_tool").status == 400
    assert call_tool(port, "fault_explode").status == 500
    assert call_tool(port, "probe_tool_error").status == 200
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(port, notification).status == 202
    lines = log.wait_for(6)
    assert len(lines) == 6
    refused, undecodable, unknown, fault, tool_error, notified = map(AccessLog.fields, lines)
    assert refused["message"].startswith('transport=http request="GET /mcp" status=405 method=-')
    assert undecodable["status"] == "400"
    assert undecodable["method"] == "None"
    for entry, status, outcome, code in (
        (unknown, "400", "error", "-32602"),
        (fault, "500", "error", "-32603"),
        (tool_error, "200", "tool_error", "None"),
        (notified, "202", "None", "None"),
    ):
        assert (entry["status"], entry["outcome"], entry["code"]) == (status, outcome, code)
    assert parsed(lines[2])["target"] == "?"  # not the catalog's: the client's own bytes
    assert parsed(lines[2])["code"] == "-32602"
    assert notified["method"] == "notifications/initialized"


def test_a_templated_read_is_logged_under_its_template_never_the_uri_asked_for(
    observed_server: ServerProcess,
) -> None:
    log = log_of(observed_server)
    uri = "weather://observations/lisbon"
    response = post(observed_server.port, message("read-log", "resources/read", {"uri": uri}))
    assert response.status == 200, response.body
    (line,) = log.wait_for(1)
    assert parsed(line)["target"] == "weather://observations/{city}"
    assert "lisbon" not in line


def test_a_client_cannot_write_a_line_of_its_own_into_the_log(
    observed_server: ServerProcess,
) -> None:
    log = log_of(observed_server)
    forged = 'x target=y outcome=ok\nACCESS http|tools/call|forged|200|ok|None|1|None "forged'
    # Without the mirroring headers, which could not carry a newline in the first place.
    response = post(observed_server.port, message("forge-1", forged, {}), drop=["Mcp-Method"])
    assert response.status == 404
    response = call_tool(observed_server.port, forged, drop=["Mcp-Name"])
    assert response.status == 400
    lines = log.wait_for(2)
    assert len(lines) == 2
    assert [parsed(line)["method"] for line in lines] == ["?", "tools/call"]
    assert [parsed(line)["target"] for line in lines] == ["-", "?"]
    assert "forged" not in observed_server.log_path.read_bytes().decode(errors="replace")
