"""What a correct client gets from a real uvicorn and a real daphne: JSON answers, 405 for
GET/DELETE, 202 for a notification, SSE once a call emits a notification, and cancellation
when the client goes away."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.http.mcphttp_support import (
    META_LOG_LEVEL,
    MODERN,
    close_mid_call,
    discover_works,
    exchange,
    http_request,
    message,
    post,
)


def assert_complete_json(response, request_id):
    assert response.status == 200, response.body
    assert response.content_type == "application/json"
    assert response.header("x-accel-buffering") is None
    payload = response.json()
    assert payload["jsonrpc"] == "2.0"
    assert payload["id"] == request_id
    assert "error" not in payload
    assert payload["result"]["resultType"] == "complete"
    return payload["result"]


def test_server_discover_answers_200_json_with_a_complete_cacheable_result(server):
    response = post(server.port, message("d-1", "server/discover"))
    result = assert_complete_json(response, "d-1")
    assert result["supportedVersions"] == [MODERN, "2025-11-25", "2025-06-18"]  # both eras served
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["ttlMs"] == 60_000
    assert result["cacheScope"] == "public"
    server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert server_info["name"] == "beammcp-sample-weather"


def test_a_session_id_or_last_event_id_is_ignored_and_never_minted(server):
    response = post(
        server.port,
        message("d-2", "server/discover"),
        add=[("Mcp-Session-Id", "client-made-up"), ("Last-Event-ID", "42")],
    )
    assert_complete_json(response, "d-2")
    assert response.header("mcp-session-id") is None


def test_tools_list_answers_200_json_listing_the_sample_and_test_tools(server):
    result = assert_complete_json(post(server.port, message(2, "tools/list")), 2)
    names = {tool["name"] for tool in result["tools"]}
    assert {"echo", "get_forecast", "record_observation", "mcphttp_vigil"} <= names
    # delete_observation is shown only to permitted users: the list depends on who asks.
    assert "delete_observation" not in names
    assert result["cacheScope"] == "private"


def test_tools_call_echo_answers_200_json_with_the_text_unchanged(server):
    text = "hello over real HTTP, ünïcødé included"
    call = message("e-1", "tools/call", {"name": "echo", "arguments": {"text": text}})
    result = assert_complete_json(post(server.port, call), "e-1")
    assert result["content"] == [{"type": "text", "text": text}]
    assert "isError" not in result


def test_tools_call_get_forecast_answers_structured_content(server):
    call = message(3, "tools/call", {"name": "get_forecast", "arguments": {"city": "oslo"}})
    result = assert_complete_json(post(server.port, call), 3)
    assert result["structuredContent"]["city"] == "Oslo"
    assert [day["day"] for day in result["structuredContent"]["days"]] == [1, 2, 3]


def test_resources_read_answers_200_json_with_the_stations_and_cache_hints(server):
    read = message(4, "resources/read", {"uri": "weather://stations"})
    result = assert_complete_json(post(server.port, read), 4)
    (contents,) = result["contents"]
    assert contents["uri"] == "weather://stations"
    assert contents["mimeType"] == "application/json"
    assert "oslo" in json.loads(contents["text"])
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "private"


def test_prompts_get_answers_200_json_with_the_briefing(server):
    get = message(5, "prompts/get", {"name": "forecast_briefing", "arguments": {"city": "lisbon"}})
    result = assert_complete_json(post(server.port, get), 5)
    assert result["description"] == "Briefing for Lisbon"
    assert "weather briefing for Lisbon" in result["messages"][0]["content"]["text"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_naming_no_session_answer_405_with_allow(server, method):
    response = exchange(server.port, http_request(method=method, content_length=False))
    assert response.status == 405
    assert response.header("allow") == "GET, POST, DELETE, OPTIONS"
    assert response.body == b""


def test_a_notification_post_answers_202_with_an_empty_body(server):
    notification = {
        "jsonrpc": "2.0",
        "method": "notifications/initialized",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
    }
    response = post(server.port, notification)
    assert response.status == 202
    assert response.body == b""
    assert response.header("content-type") is None


# -- streaming ----------------------------------------------------------------------------


def assert_stream(response):
    assert response.status == 200, response.body
    assert response.content_type == "text/event-stream"
    assert response.header("x-accel-buffering") == "no"
    assert response.header("content-length") is None
    return response.events()


@pytest.mark.parametrize("tool", ["fault_progress", "fault_progress_async"])
def test_a_call_with_a_progress_token_streams_progress_before_the_final_response(server, tool):
    call = message("p-1", "tools/call", {"name": tool, "arguments": {}}, progressToken="tok-7")
    events = assert_stream(post(server.port, call))
    *notifications, final = events
    assert [event["method"] for event in notifications] == ["notifications/progress"] * 3
    assert all("id" not in event for event in notifications)
    assert [(n["params"]["progress"], n["params"]["total"]) for n in notifications] == [
        (1, 3),
        (2, 3),
        (3, 3),
    ]
    assert {n["params"]["progressToken"] for n in notifications} == {"tok-7"}
    assert final["id"] == "p-1"
    assert final["result"]["content"] == [{"type": "text", "text": "progressed"}]
    assert final["result"]["resultType"] == "complete"


def test_the_same_progress_call_without_a_token_answers_plain_json(server):
    call = message("p-2", "tools/call", {"name": "fault_progress", "arguments": {}})
    response = post(server.port, call)
    result = assert_complete_json(response, "p-2")
    assert result["content"] == [{"type": "text", "text": "progressed"}]
    assert b"notifications/" not in response.body


@pytest.mark.orm
def test_a_call_that_logs_at_the_requested_level_streams_the_log_message(server):
    call = message(
        "l-1",
        "tools/call",
        {"name": "record_observation", "arguments": {"city": "nairobi", "temperature_c": 21.5}},
        **{META_LOG_LEVEL: "info"},
    )
    notification, final = assert_stream(post(server.port, call))
    assert notification["method"] == "notifications/message"
    assert notification["params"]["level"] == "info"
    assert notification["params"]["logger"] == "demo"
    assert isinstance(notification["params"]["data"]["recorded"], int)
    assert final["id"] == "l-1"
    assert final["result"]["content"][0]["text"] == "Recorded 21.5 °C for Nairobi."


@pytest.mark.orm
@pytest.mark.parametrize(
    "extra_meta",
    [{}, {"progressToken": "only-progress"}, {META_LOG_LEVEL: "warning"}],
    ids=["no-opt-in", "progress-token-only", "level-above-info"],
)
def test_a_log_notification_is_never_sent_without_a_log_level_at_or_below_it(server, extra_meta):
    call = message(
        "l-2",
        "tools/call",
        {"name": "record_observation", "arguments": {"city": "oslo", "temperature_c": -3}},
        **extra_meta,
    )
    response = post(server.port, call)
    result = assert_complete_json(response, "l-2")
    assert result["content"][0]["text"] == "Recorded -3 °C for Oslo."
    assert b"notifications/message" not in response.body


# -- a client that goes away --------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
def test_closing_the_connection_mid_call_cancels_the_call_and_the_server_keeps_serving(
    server, streamed
):
    assert close_mid_call(server, streamed=streamed) == "cancelled"
    assert discover_works(server.port)


def test_a_call_on_a_connection_kept_open_runs_to_completion(server):
    token = f"vigil-done-{server.kind}-{uuid.uuid4().hex[:12]}"
    call = message(
        "v-2",
        "tools/call",
        {"name": "mcphttp_vigil", "arguments": {"token": token, "seconds": 0.3}},
    )
    result = assert_complete_json(post(server.port, call), "v-2")
    assert result["content"] == [{"type": "text", "text": "finished"}]
    assert (server.records / f"{token}.finished").exists()
    assert not (server.records / f"{token}.cancelled").exists()
