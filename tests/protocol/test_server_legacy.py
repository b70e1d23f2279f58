"""The 2025-11-25 handshake era, served beside 2026-07-28 when ``legacy=True`` (stdio)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from beammcp_django.protocol.catalog import ToolResult
from beammcp_django.protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND_LEGACY,
)
from beammcp_django.protocol.request import LegacySession, Unanswered
from beammcp_django.protocol.revisions import LEGACY, META_LOG_LEVEL, META_SERVER_INFO, MODERN

from .conftest import call, legacy_request, make_server, request

SERVER_INFO = {"name": "test-server", "version": "9.9.9"}
CLIENT_INFO = {"name": "OldClient", "version": "0.9"}


def initialize(
    server, session: LegacySession | None, version: str = LEGACY, **params: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": {"roots": {}},
        "clientInfo": CLIENT_INFO,
    }
    body.update(params)
    reply = call(server, legacy_request("initialize", body, id=0), session=session)
    assert reply is not None
    return reply


def handshake(server, session: LegacySession) -> None:
    assert "result" in initialize(server, session)
    assert call(
        server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session
    ) == Unanswered("notification")


def result_of(reply: dict[str, Any] | None) -> dict[str, Any]:
    assert reply is not None
    assert "error" not in reply, reply
    return reply["result"]


def error_of(reply: dict[str, Any] | None, code: int) -> dict[str, Any]:
    assert reply is not None
    assert "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]


# -- initialize ----------------------------------------------------------------------------


def test_initialize_negotiates_2025_11_25(legacy_server, session):
    reply = initialize(legacy_server, session)
    assert reply["id"] == 0
    result = result_of(reply)
    assert result == {
        "protocolVersion": LEGACY,
        "capabilities": {
            "tools": {},
            "resources": {},
            "prompts": {},
            "completions": {},
            "logging": {},
        },
        "serverInfo": SERVER_INFO,
    }
    assert session.version == LEGACY
    assert session.client_capabilities == {"roots": {}}
    assert session.client_info == CLIENT_INFO


def test_the_initialize_result_has_no_2026_envelope(legacy_server, session):
    result = result_of(initialize(legacy_server, session))
    for key in ("resultType", "ttlMs", "cacheScope", "_meta"):
        assert key not in result


@pytest.mark.parametrize("requested", ["2025-11-25", "2025-06-18"])
def test_initialize_answers_a_requested_version_it_speaks_with_that_version(
    legacy_server, session, requested
):
    result = result_of(initialize(legacy_server, session, requested))
    assert result["protocolVersion"] == requested
    assert session.version == requested


@pytest.mark.parametrize("requested", ["2024-11-05", "2025-03-26", "1999-01-01", MODERN])
def test_initialize_answers_2025_11_25_for_any_other_requested_version(
    legacy_server, session, requested
):
    result = result_of(initialize(legacy_server, session, requested))
    assert result["protocolVersion"] == LEGACY
    assert session.version == LEGACY


def test_initialize_includes_instructions_when_configured(catalog, session):
    server = make_server(catalog, legacy=True, instructions="Be brief.")
    assert result_of(initialize(server, session))["instructions"] == "Be brief."


def test_initialize_without_a_protocol_version_is_invalid_params(legacy_server, session):
    reply = call(legacy_server, legacy_request("initialize", {"capabilities": {}}), session=session)
    assert "protocolVersion" in error_of(reply, INVALID_PARAMS)["message"]
    assert session.version is None


@pytest.mark.parametrize("client_info", ["x", {"name": "x"}, {"name": "x", "version": 1}])
def test_initialize_with_an_invalid_client_info_is_invalid_params(
    legacy_server, session, client_info
):
    reply = initialize(legacy_server, session, clientInfo=client_info)
    assert "clientInfo" in error_of(reply, INVALID_PARAMS)["message"]


def test_initialize_with_capabilities_that_are_not_an_object_is_invalid_params(
    legacy_server, session
):
    error_of(initialize(legacy_server, session, capabilities=[]), INVALID_PARAMS)


def test_the_initialized_notification_gets_no_reply_and_the_session_keeps_its_version(
    legacy_server, session
):
    handshake(legacy_server, session)  # asserts the notification is answered with nothing
    assert session.version == LEGACY


def test_initialize_without_a_session_to_open_is_method_not_found(legacy_server):
    # A transport with no session (HTTP's 2026-07-28 path) cannot open one: nothing to serve.
    error_of(initialize(legacy_server, None), METHOD_NOT_FOUND)


# -- after the handshake -------------------------------------------------------------------


def test_after_initialize_requests_without_meta_are_served_at_2025_11_25(
    legacy_server, session, catalog
):
    handshake(legacy_server, session)
    result = result_of(call(legacy_server, legacy_request("tools/list", id=2), session=session))
    assert result["tools"][0]["name"] == "add"
    for key in ("resultType", "ttlMs", "cacheScope", "_meta"):
        assert key not in result


def test_a_legacy_tool_call_has_no_result_type_and_sees_the_session_in_its_context(
    legacy_server, session, catalog
):
    handshake(legacy_server, session)
    params = {"name": "add", "arguments": {"a": 1, "b": 1}}
    result = result_of(call(legacy_server, legacy_request("tools/call", params), session=session))
    assert result == {"content": [{"type": "text", "text": "2"}]}
    [context] = catalog.contexts
    assert context.protocol_version == LEGACY
    assert context.client_capabilities == {"roots": {}}
    assert context.client_info == CLIENT_INFO


def test_ping_answers_an_empty_result(legacy_server, session):
    handshake(legacy_server, session)
    reply = call(legacy_server, legacy_request("ping", id="p"), session=session)
    assert reply == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_set_level_stores_the_level_and_log_messages_then_flow(legacy_server, session):
    handshake(legacy_server, session)
    emitted: list[dict[str, Any]] = []
    message = legacy_request("tools/call", {"name": "report"})
    call(legacy_server, message, session=session, emit=emitted.append)
    assert emitted == []

    reply = call(
        legacy_server, legacy_request("logging/setLevel", {"level": "info"}), session=session
    )
    assert result_of(reply) == {}
    assert session.log_level == "info"

    call(legacy_server, message, session=session, emit=emitted.append)
    assert emitted == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "data": {"disk": "nearly full"}, "logger": "storage"},
        }
    ]


@pytest.mark.parametrize("level", ["loud", None, 3])
def test_set_level_with_an_unknown_level_is_invalid_params(legacy_server, session, level):
    handshake(legacy_server, session)
    reply = call(
        legacy_server, legacy_request("logging/setLevel", {"level": level}), session=session
    )
    error_of(reply, INVALID_PARAMS)
    assert session.log_level is None


def test_a_progress_token_in_a_legacy_request_opts_into_progress(legacy_server, session):
    handshake(legacy_server, session)
    emitted: list[dict[str, Any]] = []
    message = legacy_request("tools/call", {"name": "report", "_meta": {"progressToken": "t"}})
    call(legacy_server, message, session=session, emit=emitted.append)
    assert [item["params"]["progressToken"] for item in emitted] == ["t", "t"]


def test_an_invalid_progress_token_in_a_legacy_request_is_invalid_params(legacy_server, session):
    handshake(legacy_server, session)
    message = legacy_request("tools/list", {"_meta": {"progressToken": 1.5}})
    error_of(call(legacy_server, message, session=session), INVALID_PARAMS)


def test_resource_not_found_is_32002_with_the_uri_at_2025_11_25(legacy_server, session):
    handshake(legacy_server, session)
    for uri in ("config://missing", "users://7/profile"):
        reply = call(legacy_server, legacy_request("resources/read", {"uri": uri}), session=session)
        error = error_of(reply, RESOURCE_NOT_FOUND_LEGACY)
        assert error["data"] == {"uri": uri}


def test_server_discover_is_not_a_legacy_method(legacy_server, session):
    handshake(legacy_server, session)
    reply = call(legacy_server, legacy_request("server/discover"), session=session)
    assert LEGACY in error_of(reply, METHOD_NOT_FOUND)["message"]


def test_non_object_structured_content_is_json_text_alone_at_2025_11_25(
    legacy_server, session, catalog
):
    # 2025-11-25's structuredContent is an object: the value goes as text (legacy_tools.py).
    handshake(legacy_server, session)
    catalog.oracle = ToolResult(structured=[1, 2, 3])
    reply = call(legacy_server, legacy_request("tools/call", {"name": "oracle"}), session=session)
    assert result_of(reply) == {"content": [{"type": "text", "text": "[1, 2, 3]"}]}


def test_an_argument_violation_is_still_a_tool_error_at_2025_11_25(legacy_server, session):
    handshake(legacy_server, session)
    params = {"name": "add", "arguments": {"a": "secret-value", "b": 1}}
    result = result_of(call(legacy_server, legacy_request("tools/call", params), session=session))
    assert result["isError"] is True
    assert "secret-value" not in json.dumps(result)
    assert "resultType" not in result


# -- mixing the eras -----------------------------------------------------------------------


def test_a_request_with_modern_meta_on_a_legacy_session_is_served_as_modern(
    legacy_server, session, catalog
):
    handshake(legacy_server, session)
    result = result_of(
        call(legacy_server, request("tools/call", {"name": "echo"}), session=session)
    )
    assert result["resultType"] == "complete"
    assert result["_meta"] == {META_SERVER_INFO: SERVER_INFO}
    [context] = catalog.contexts
    assert context.protocol_version == MODERN
    assert context.client_capabilities == {}


def test_a_modern_request_on_a_legacy_session_does_not_use_the_session_log_level(
    legacy_server, session
):
    handshake(legacy_server, session)
    call(legacy_server, legacy_request("logging/setLevel", {"level": "debug"}), session=session)
    emitted: list[dict[str, Any]] = []
    call(
        legacy_server,
        request("tools/call", {"name": "report"}),
        session=session,
        emit=emitted.append,
    )
    assert emitted == []
    call(
        legacy_server,
        request("tools/call", {"name": "report"}, **{META_LOG_LEVEL: "warning"}),
        session=session,
        emit=emitted.append,
    )
    assert [item["params"]["level"] for item in emitted] == ["warning"]


def test_a_modern_not_found_on_a_legacy_session_is_invalid_params(legacy_server, session):
    handshake(legacy_server, session)
    reply = call(legacy_server, request("resources/read", {"uri": "config://x"}), session=session)
    error_of(reply, INVALID_PARAMS)


def test_without_a_handshake_a_request_without_meta_is_invalid_params(legacy_server, session):
    reply = call(legacy_server, legacy_request("tools/list"), session=session)
    error = error_of(reply, INVALID_PARAMS)
    assert "params._meta" in error["message"]
    assert "initialize" in error["message"]


def test_without_a_session_a_request_without_meta_is_invalid_params_even_after_initialize(
    legacy_server, session
):
    handshake(legacy_server, session)
    error_of(call(legacy_server, legacy_request("tools/list")), INVALID_PARAMS)


def test_one_sessions_handshake_does_not_serve_another_session(legacy_server, session):
    handshake(legacy_server, session)
    other = LegacySession()
    error_of(call(legacy_server, legacy_request("tools/list"), session=other), INVALID_PARAMS)


def test_a_session_is_ignored_by_a_server_without_legacy(server, session):
    session.version = LEGACY
    error_of(call(server, legacy_request("tools/list"), session=session), INVALID_PARAMS)


# -- a server that serves 2026-07-28 only --------------------------------------------------


def test_a_modern_only_server_refuses_initialize_naming_the_version_it_supports(server, session):
    error = initialize(server, session)["error"]
    assert MODERN in error["message"]
    assert session.version is None


def test_a_modern_only_server_answers_initialize_with_method_not_found(server, session):
    error_of(initialize(server, session), METHOD_NOT_FOUND)


def test_a_modern_only_server_answers_initialize_with_modern_meta_with_method_not_found(server):
    error_of(call(server, request("initialize", {"protocolVersion": LEGACY})), METHOD_NOT_FOUND)


def test_subscriptions_listen_in_a_2025_11_25_session_is_not_found_naming_that_revision(
    legacy_server, session
):
    handshake(legacy_server, session)
    reply = call(legacy_server, legacy_request("subscriptions/listen", {}), session=session)
    error = error_of(reply, METHOD_NOT_FOUND)
    assert error["message"] == "method 'subscriptions/listen' is not served at 2025-11-25"
