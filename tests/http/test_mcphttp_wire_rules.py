"""JSON-RPC envelope rules and the body's declared type, through a real uvicorn and daphne.

A notification POST is accepted (202, no body) when it is a JSON-RPC 2.0 notification,
whatever its params, and refused 400 with an error carrying no ``id`` otherwise; an error
echoes a readable request id and leaves an unreadable one out; a body not declared
``application/json`` is 415 before it is read. The README's tour is run as written.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from tests.http.mcphttp_support import (
    MODERN,
    REPO_ROOT,
    Wire,
    daphne_reads_the_body_first,
    encode,
    http_request,
    message,
    post,
    servers,
)

pytestmark = pytest.mark.slow

DISCOVER = message("w-1", "server/discover")


@pytest.mark.parametrize(
    "notification",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]},
        {"jsonrpc": "2.0", "method": "notifications/initialized", "_meta": {}},
        {"jsonrpc": "2.0", "method": "notifications/x", "params": []},
        {"jsonrpc": "2.0", "method": "notifications/x"},
    ],
)
def test_a_json_rpc_notification_is_202_with_no_body_whatever_its_params(server, notification):
    response = post(server.port, notification)
    assert response.status == 202, response.body
    assert response.body == b""


@pytest.mark.parametrize(
    "notification",
    [
        {"jsonrpc": "1.0", "method": "notifications/initialized"},
        {"method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": 7},
        {"jsonrpc": "2.0"},
    ],
)
def test_a_message_without_an_id_that_is_not_a_notification_is_400_with_no_id(server, notification):
    response = post(server.port, notification)
    assert response.status == 400
    reply = response.json()
    assert "id" not in reply
    assert reply["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", [None, [1], {"a": 1}, 1.5, True])
def test_an_unreadable_id_is_left_out_of_the_error(server, bad_id):
    request = message("ignored", "tools/list")
    request["id"] = bad_id
    response = post(server.port, request)
    assert response.status == 400
    reply = response.json()
    assert "id" not in reply
    assert reply["error"]["code"] == -32600
    assert b'"id":null' not in response.body


def test_a_readable_id_is_echoed_when_the_envelope_is_refused(server):
    request = message(5, "tools/list")
    request["jsonrpc"] = "1.0"
    response = post(server.port, request)
    assert response.status == 400
    assert response.json()["id"] == 5


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json ;x=1",
    ],
)
def test_a_body_declared_json_is_served(server, content_type):
    response = post(server.port, DISCOVER, replace={"Content-Type": content_type})
    assert response.status == 200, response.body
    assert response.json()["result"]["capabilities"]["logging"] == {}


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        "",
    ],
)
def test_a_body_not_declared_json_is_415(server, content_type):
    response = post(server.port, DISCOVER, replace={"Content-Type": content_type})
    if server.kind == "daphne" and content_type.startswith("multipart/"):
        # Twisted parses a multipart body itself and answers 400 before the app runs.
        assert (response.status, response.body) == (400, b"")
        return
    assert response.status == 415
    assert response.says_close
    assert response.json()["error"]["code"] == -32600
    assert "id" not in response.json()


def test_a_body_without_a_content_type_is_415(server):
    response = post(server.port, DISCOVER, drop=["Content-Type"])
    assert response.status == 415


def test_two_disagreeing_content_types_are_415(server):
    response = post(server.port, DISCOVER, add=[("Content-Type", "text/plain")])
    assert response.status == 415


@servers(daphne=daphne_reads_the_body_first())
def test_a_body_not_declared_json_is_refused_before_it_is_read(server):
    with Wire(server.port) as wire:
        wire.send(
            http_request(
                DISCOVER, body=b"", content_length=512, replace={"Content-Type": "text/plain"}
            )
        )
        response = wire.response(2.5)
    assert response.status == 415
    assert response.says_close


# -- the README's tour, as written ----------------------------------------------------------


def tour_command(port: int) -> str:
    """The README's curl command, pointed at the test server's port."""
    readme = (REPO_ROOT / "README.md").read_text()
    tour = readme.split("## A five-minute tour", 1)[1]
    command = re.search(r"```sh\n(curl .*?)\n```", tour, re.S)
    assert command is not None, "the tour has no curl command"
    return command.group(1).replace("127.0.0.1:8000", f"127.0.0.1:{port}")


def run(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command + " -w '\\n%{http_code}'"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )


def answer(command: str) -> tuple[int, dict]:
    body, _, status = run(command).stdout.rpartition("\n")
    return int(status), json.loads(body) if body else {}


@servers()
def test_the_tours_curl_command_answers_the_forecast_as_structured_content(server):
    status, reply = answer(tour_command(server.port))
    assert status == 200
    result = reply["result"]
    assert result["structuredContent"]["city"].lower() == "oslo"
    assert len(result["structuredContent"]["days"]) == 2
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


@servers()
def test_the_tours_variations_answer_what_the_readme_says(server):
    command = tour_command(server.port)
    status, reply = answer(command.replace('"days":2', '"days":9'))
    assert status == 200
    assert reply["result"]["isError"] is True
    assert "arguments/days: must be <= 7" in reply["result"]["content"][0]["text"]
    status, reply = answer(command.replace("Mcp-Name: get_forecast", "Mcp-Name: other"))
    assert (status, reply["error"]["code"]) == (400, -32020)
    assert "Mcp-Name" in reply["error"]["message"]
    status, _ = answer(command.replace(" -H 'Content-Type: application/json'", ""))
    assert status == 415
    arguments = shlex.split(command)
    assert run(f"curl -s {shlex.quote(arguments[2])} -o /dev/null").stdout.strip() == "405"
    assert MODERN in command


def test_the_tours_days_written_as_a_whole_float_reach_the_tool_as_an_integer(server):
    # JSON Schema counts 2.0 and 1e0 as integers; the tool's range() was handed a float and
    # answered 500 before whole numbers were converted (protocol/whole_numbers.py).
    command = tour_command(server.port)
    for literal, days in (("2.0", 2), ("1e0", 1), ("3.000", 3)):
        status, reply = answer(command.replace('"days":2', f'"days":{literal}'))
        assert status == 200, (literal, reply)
        assert len(reply["result"]["structuredContent"]["days"]) == days


# -- the =?base64?...?= sentinel ----------------------------------------------------------

ECHO = message("w-2", "tools/call", {"name": "echo", "arguments": {"text": "s"}})


@pytest.mark.parametrize(
    ("mcp_name", "served"),
    [
        ("=?base64?ZWNobw==?=", True),  # "echo", canonically
        ("=?base64?ZWNobx==?=", False),  # "echo" too, with padding bits set
        ("=?base64?!!!?=", False),  # not base64: never taken as the literal "=?base64?!!!?="
        ("=?base64?ZWNobw?=", False),  # unpadded
    ],
)
def test_an_mcp_name_in_the_sentinel_form_is_decoded_only_when_canonical(server, mcp_name, served):
    response = post(server.port, ECHO, replace={"Mcp-Name": mcp_name})
    if served:
        assert response.status == 200
        assert response.json()["result"]["content"] == [{"type": "text", "text": "s"}]
        return
    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert "Mcp-Name" in error["message"]
    assert "not canonical base64" in error["message"]
    assert mcp_name.encode() not in response.body


# -- numbers, paths ------------------------------------------------------------------------


def call_halves(port: int, literal: str):
    body = (
        b'{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"fault_halves",'
        b'"arguments":{"n":' + literal.encode() + b'},"_meta":{"io.modelcontextprotocol/'
        b'protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    value = message("n", "tools/call", {"name": "fault_halves", "arguments": {}})
    return post(port, value, body=body)


@pytest.mark.parametrize(
    ("literal", "named"),
    [
        ("1e400", "outside the range of a 64-bit float"),
        ("-1e400", "outside the range"),
        ("9" * 5001, "more than 4300 digits"),
    ],
)
def test_a_number_no_float_or_integer_can_hold_is_refused_naming_why(server, literal, named):
    response = call_halves(server.port, literal)
    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == -32600
    assert named in error["message"]


@pytest.mark.parametrize(
    ("literal", "served"), [("1" + "0" * 400, True), ("2.5", True), ("0.3", False)]
)
def test_multiple_of_a_fraction_is_decided_exactly_for_any_number(server, literal, served):
    response = call_halves(server.port, literal)
    assert response.status == 200
    result = response.json()["result"]
    if served:
        assert result["content"] == [{"type": "text", "text": "a multiple of a half"}]
    else:
        assert result["isError"] is True
        assert "arguments/n: must be a multiple of 0.5" in result["content"][0]["text"]


@pytest.mark.parametrize(
    "uri",
    [
        "fault://files//etc/passwd",
        "fault://files/%2Fetc/passwd",
        "fault://files/a/../../etc/passwd",
        "fault://files/%252e%252e/x",
        "fault://files/a%00b",
        "fault://files/..%5c..%5cx",
        "fault://files/C:..",
    ],
)
def test_a_resource_uri_built_to_leave_the_directory_names_no_resource(server, uri):
    request = message("t", "resources/read", {"uri": uri})
    response = post(server.port, request)
    assert response.status == 400, response.body
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (-32602, "resource not found")
    assert b"read " not in response.body


def test_a_relative_path_under_the_template_is_read(server):
    uri = "fault://files/reports/2026/q4.txt"
    response = post(server.port, message("t", "resources/read", {"uri": uri}))
    assert response.json()["result"]["contents"][0]["text"] == "read reports/2026/q4.txt"


def test_a_request_without_a_method_is_named_as_such_not_as_a_response(server):
    response = post(server.port, {"jsonrpc": "2.0", "id": 9}, body=b'{"jsonrpc":"2.0","id":9}')
    assert response.status == 400
    reply = response.json()
    assert reply["id"] == 9
    assert reply["error"]["message"] == "message has no method"


def test_a_lone_surrogate_in_the_body_is_refused_by_name(server):
    body = encode(message("s", "tools/call", {"name": "echo", "arguments": {"text": "\ud800"}}))
    response = post(server.port, ECHO, body=body)
    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "lone surrogate" in error["message"]
