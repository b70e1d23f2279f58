"""The headers that mirror the body, and each JSON-RPC error code's HTTP status, through a
real uvicorn and a real daphne (duplicate headers written on a raw socket)."""

from __future__ import annotations

import json

import pytest

from tests.http.mcphttp_support import (
    FAULT_SECRET,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN,
    encode,
    exchange,
    http_request,
    message,
    post,
    sentinel,
)

# A value no server would make up: it must never come back in an answer.
DISTINCT = "zq9x-distinct-caller-value"

ECHO = message("h-1", "tools/call", {"name": "echo", "arguments": {"text": "mirror"}})
PROMPT = message("h-2", "prompts/get", {"name": "forecast_briefing", "arguments": {"city": "oslo"}})
READ = message("h-3", "resources/read", {"uri": "weather://stations"})
NAMED = {"tools/call": ECHO, "prompts/get": PROMPT, "resources/read": READ}


def assert_error(response, status, code, request_id):
    assert response.status == status, (response.status, response.body)
    assert response.content_type == "application/json"
    payload = response.json()
    assert payload["jsonrpc"] == "2.0"
    if request_id is None:  # unreadable: left out, never "id": null
        assert "id" not in payload
    else:
        assert payload["id"] == request_id
    assert "result" not in payload
    assert payload["error"]["code"] == code
    return payload["error"]


def assert_header_mismatch(response, request_id, header):
    error = assert_error(response, 400, -32020, request_id)
    assert header in error["message"]
    return error


# -- MCP-Protocol-Version -----------------------------------------------------------------


def test_a_missing_protocol_version_header_is_400_header_mismatch_naming_it(server):
    response = post(server.port, message(10, "tools/list"), drop=["MCP-Protocol-Version"])
    error = assert_header_mismatch(response, 10, "MCP-Protocol-Version")
    assert "missing" in error["message"]


def test_a_protocol_version_header_unlike_the_meta_version_is_400_header_mismatch(server):
    response = post(
        server.port, message(11, "tools/list"), replace={"MCP-Protocol-Version": "2025-11-25"}
    )
    assert_header_mismatch(response, 11, "MCP-Protocol-Version")


def test_two_disagreeing_protocol_version_headers_are_400_header_mismatch(server):
    response = post(
        server.port, message(12, "tools/list"), add=[("MCP-Protocol-Version", "2025-11-25")]
    )
    error = assert_header_mismatch(response, 12, "MCP-Protocol-Version")
    assert "twice" in error["message"]


def test_a_repeated_identical_protocol_version_header_is_accepted(server):
    response = post(server.port, message(13, "tools/list"), add=[("MCP-Protocol-Version", MODERN)])
    assert response.status == 200
    assert response.json()["id"] == 13


# -- Mcp-Method ---------------------------------------------------------------------------


def test_a_missing_mcp_method_header_is_400_header_mismatch_naming_it(server):
    response = post(server.port, message(14, "tools/list"), drop=["Mcp-Method"])
    error = assert_header_mismatch(response, 14, "Mcp-Method")
    assert "missing" in error["message"]


def test_an_mcp_method_header_unlike_the_body_method_is_400_header_mismatch(server):
    response = post(server.port, message(15, "tools/list"), replace={"Mcp-Method": "prompts/list"})
    assert_header_mismatch(response, 15, "Mcp-Method")


def test_two_disagreeing_mcp_method_headers_are_400_header_mismatch(server):
    response = post(server.port, message(16, "tools/list"), add=[("Mcp-Method", "prompts/list")])
    assert_header_mismatch(response, 16, "Mcp-Method")


# -- Mcp-Name -----------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(NAMED))
def test_a_missing_mcp_name_header_is_400_header_mismatch_naming_it(server, method):
    request = NAMED[method]
    error = assert_header_mismatch(
        post(server.port, request, drop=["Mcp-Name"]), request["id"], "Mcp-Name"
    )
    assert "missing" in error["message"]


@pytest.mark.parametrize("method", sorted(NAMED))
def test_an_mcp_name_header_unlike_the_body_name_is_400_header_mismatch(server, method):
    request = NAMED[method]
    other = "weather://observations/oslo" if method == "resources/read" else "get_forecast"
    response = post(server.port, request, replace={"Mcp-Name": other})
    assert_header_mismatch(response, request["id"], "Mcp-Name")


@pytest.mark.parametrize("method", sorted(NAMED))
def test_an_mcp_name_header_in_base64_sentinel_form_is_decoded_and_accepted(server, method):
    request = NAMED[method]
    named = request["params"]["uri" if method == "resources/read" else "name"]
    response = post(server.port, request, replace={"Mcp-Name": sentinel(named)})
    assert response.status == 200, response.body
    assert response.json()["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    "value",
    ["=?base64?abc?=", "=?base64?!!!?=", sentinel("weather://observations/oslo")],
    ids=["bad-padding", "not-base64", "decodes-to-another-uri"],
)
def test_an_mcp_name_sentinel_that_is_bad_base64_or_decodes_elsewhere_is_refused(server, value):
    response = post(server.port, READ, replace={"Mcp-Name": value})
    assert_header_mismatch(response, READ["id"], "Mcp-Name")


def test_a_plain_mcp_name_with_bytes_outside_visible_ascii_is_refused(server):
    request = message("h-4", "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    data = http_request(request, drop=["Mcp-Name"], add=[("Mcp-Name", "ech\u00f6")])
    response = exchange(server.port, data)
    error = assert_header_mismatch(response, "h-4", "Mcp-Name")
    assert "characters a header value must not carry" in error["message"]


@pytest.mark.parametrize(
    ("header", "request_"),
    [
        ("MCP-Protocol-Version", message(17, "tools/list")),
        ("Mcp-Method", message(17, "tools/list")),
        ("Mcp-Name", ECHO),
    ],
)
def test_header_mismatch_messages_never_contain_the_callers_header_value(server, header, request_):
    for value in (DISTINCT, sentinel(DISTINCT)):
        response = post(server.port, request_, replace={header: value})
        assert response.status == 400
        assert DISTINCT.encode() not in response.body
        assert sentinel(DISTINCT).encode() not in response.body
        assert all(DISTINCT not in value for _, value in response.headers)
    repeated = post(server.port, request_, add=[(header, DISTINCT)])
    assert repeated.status == 400
    assert DISTINCT.encode() not in repeated.body


# -- Mcp-Param-* (x-mcp-header) ---------------------------------------------------------


def region_call(**arguments):
    return message("param-1", "tools/call", {"name": "mcphttp_region", "arguments": {**arguments}})


@pytest.mark.parametrize(
    ("arguments", "headers", "answer"),
    [
        (
            {"region": "eu-west", "count": 3},
            [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Count", "3")],
            "eu-west:3",
        ),
        (
            {"region": "eu-west", "count": 3},
            [("mcp-param-region", "eu-west"), ("MCP-PARAM-COUNT", "3.0")],
            "eu-west:3",
        ),
        ({"region": "eu-west"}, [("Mcp-Param-Region", "eu-west")], "eu-west:None"),
        ({"region": "Zürich"}, [("Mcp-Param-Region", sentinel("Zürich"))], "Zürich:None"),
        ({"region": " padded "}, [("Mcp-Param-Region", sentinel(" padded "))], " padded :None"),
    ],
    ids=["plain", "case-and-numeric", "count-absent", "sentinel-unicode", "sentinel-spaces"],
)
def test_mcp_param_headers_that_mirror_the_arguments_are_accepted(
    server, arguments, headers, answer
):
    response = post(server.port, region_call(**arguments), add=headers)
    assert response.status == 200, response.body
    assert response.json()["result"]["content"] == [{"type": "text", "text": answer}]


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu-west"}, []),
        ({"region": "eu-west"}, [("Mcp-Param-Region", "us-east")]),
        ({"region": "eu-west", "count": 3}, [("Mcp-Param-Region", "eu-west")]),
        (
            {"region": "eu-west", "count": 3},
            [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Count", "4")],
        ),
        (
            {"region": "eu-west", "count": 3},
            [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Count", "3.5")],
        ),
        ({"region": "eu-west"}, [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Count", "3")]),
        ({"region": "eu-west"}, [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Region", "us-east")]),
        ({"region": "Zürich"}, [("Mcp-Param-Region", "Zürich")]),
        ({"region": "eu-west"}, [("Mcp-Param-Region", "=?base64?abc?=")]),
    ],
    ids=[
        "missing",
        "different",
        "count-missing",
        "count-different",
        "count-not-integer",
        "count-sent-for-absent-argument",
        "twice-disagreeing",
        "plain-non-ascii",
        "bad-base64",
    ],
)
def test_mcp_param_headers_that_do_not_mirror_the_arguments_are_400_header_mismatch(
    server, arguments, headers
):
    response = post(server.port, region_call(**arguments), add=headers)
    error = assert_header_mismatch(response, "param-1", "Mcp-Param")
    assert "us-east" not in error["message"]
    assert "Zürich" not in error["message"]


def test_two_disagreeing_mcp_param_headers_are_refused_naming_the_header(server):
    response = post(
        server.port,
        region_call(region="eu-west"),
        add=[("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Region", "us-east")],
    )
    error = assert_header_mismatch(response, "param-1", "Mcp-Param-Region")
    assert "us-east" not in error["message"]


def test_a_tool_needing_an_undeclared_client_capability_is_400_with_the_capability(server):
    call = message("cap-1", "tools/call", {"name": "mcphttp_needs_sampling", "arguments": {}})
    error = assert_error(post(server.port, call), 400, -32021, "cap-1")
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    call["params"]["_meta"][META_CLIENT_CAPABILITIES] = {"sampling": {}}
    served = post(server.port, call)
    assert served.status == 200
    assert served.json()["result"]["content"][0]["text"] == "the client can sample"


# -- each error code's HTTP status --------------------------------------------------------


def test_a_malformed_body_is_400_parse_error(server):
    response = post(server.port, None, body=b'{"jsonrpc": "2.0", "id": 20, "method": ')
    assert_error(response, 400, -32700, None)


def test_a_body_that_is_not_utf8_is_400_parse_error(server):
    body = encode(message(21, "tools/list")).replace(b"tools/list", b"tools/\xff")
    assert_error(post(server.port, None, body=body), 400, -32700, None)


def test_an_array_body_is_400_invalid_request(server):
    body = encode([message(22, "tools/list")])
    error = assert_error(post(server.port, None, body=body), 400, -32600, None)
    assert "array" in error["message"]


def nested(depth: int) -> dict:
    """A discover request whose whole message nests exactly ``depth`` levels."""
    request = message(23, "server/discover")
    # message -> params -> "x" adds 2 levels above the innermost list chain.
    chain: list = []
    for _ in range(depth - 3):
        chain = [chain]
    request["params"]["x"] = chain
    assert nesting(request) == depth
    return request


def nesting(value: object) -> int:
    """How many levels of arrays and objects ``value`` nests (the test's own count)."""
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


def test_a_body_nesting_65_levels_is_400_invalid_request_and_64_levels_is_served(server):
    too_deep = post(server.port, nested(65))
    error = assert_error(too_deep, 400, -32600, None)
    assert "64" in error["message"]
    at_limit = post(server.port, nested(64))
    assert at_limit.status == 200, at_limit.body
    assert at_limit.json()["id"] == 23


def test_a_body_repeating_a_key_is_400_invalid_request(server):
    body = encode(message(24, "tools/list")).replace(b'"id":24', b'"id":24,"id":25')
    error = assert_error(post(server.port, None, body=body), 400, -32600, None)
    assert "repeats" in error["message"]


def test_a_request_without_meta_is_400_invalid_params_echoing_the_id(server):
    request = {"jsonrpc": "2.0", "id": "no-meta", "method": "tools/list", "params": {}}
    response = post(server.port, request)
    error = assert_error(response, 400, -32602, "no-meta")
    assert "_meta" in error["message"]


def test_a_request_missing_client_capabilities_is_400_invalid_params(server):
    request = message(25, "tools/list")
    del request["params"]["_meta"][META_CLIENT_CAPABILITIES]
    assert_error(post(server.port, request), 400, -32602, 25)


def test_an_unknown_tool_is_400_invalid_params_echoing_the_id(server):
    request = message("unknown-tool", "tools/call", {"name": "no_such_tool", "arguments": {}})
    error = assert_error(post(server.port, request), 400, -32602, "unknown-tool")
    assert "no_such_tool" in error["message"]


def test_an_unsupported_version_in_header_and_meta_is_400_with_supported_and_requested(server):
    request = message(26, "tools/list", **{META_PROTOCOL_VERSION: "v999"})
    response = post(server.port, request)
    assert response.status == 400
    error = assert_error(response, 400, -32022, 26)
    discovered = post(server.port, message("versions", "server/discover")).json()["result"]
    supported = discovered["supportedVersions"]
    assert error["data"] == {"supported": supported, "requested": "v999"}
    assert supported == [MODERN, "2025-11-25", "2025-06-18"]  # this endpoint serves both eras


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("ping", {}),
        ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/subscribe", {"uri": "weather://stations"}),
        ("resources/unsubscribe", {"uri": "weather://stations"}),
        ("unknown/method", {}),
    ],
)
def test_a_method_this_endpoint_does_not_serve_is_404_method_not_found(server, method, params):
    request = message(f"nf-{method}", method, params)
    assert_error(post(server.port, request), 404, -32601, f"nf-{method}")


@pytest.mark.parametrize("tool", ["fault_explode", "fault_explode_async"])
def test_a_host_fault_is_500_internal_error_without_the_exception_text(server, tool):
    request = message(f"fault-{tool}", "tools/call", {"name": tool, "arguments": {}})
    response = post(server.port, request)
    error = assert_error(response, 500, -32603, f"fault-{tool}")
    assert "data" not in error
    assert FAULT_SECRET.encode() not in response.body
    assert b"Error" not in response.body
    assert b"Traceback" not in response.body


def test_a_bad_argument_is_a_tool_error_result_with_200(server):
    request = message(27, "tools/call", {"name": "echo", "arguments": {"text": 5}})
    response = post(server.port, request)
    assert response.status == 200
    assert response.json()["result"]["isError"] is True


def test_a_posted_response_is_400_invalid_request(server):
    body = json.dumps({"jsonrpc": "2.0", "id": 28, "result": {}}).encode()
    assert_error(post(server.port, None, body=body), 400, -32600, 28)
