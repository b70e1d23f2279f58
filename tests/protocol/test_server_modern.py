"""The protocol core at 2026-07-28: per-request ``params._meta``, stateless, ``resultType``."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from beammcp_django.protocol import content, wire
from beammcp_django.protocol.catalog import Completion, ToolResult, ToolSpec
from beammcp_django.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    PartDown,
    ProtocolError,
)
from beammcp_django.protocol.request import Unanswered
from beammcp_django.protocol.revisions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN,
)
from beammcp_django.protocol.server import CacheHint

from .conftest import CatalogWithoutCompletion, MemoryCatalog, call, make_server, meta, request

SERVER_INFO = {"name": "test-server", "version": "9.9.9"}


def result_of(reply: dict[str, Any] | None) -> dict[str, Any]:
    assert reply is not None
    assert "error" not in reply, reply
    return reply["result"]


def error_of(reply: dict[str, Any] | None, code: int) -> dict[str, Any]:
    assert reply is not None
    assert "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]


def tool_call(server, name: str, arguments: Any = None, **kw: Any) -> dict[str, Any] | None:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return call(server, request("tools/call", params), **kw)


# -- server/discover and the result envelope -----------------------------------------------


def test_discover_answers_versions_capabilities_cache_hints_and_server_info(server):
    reply = call(server, request("server/discover", id="d-1"))
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == "d-1"
    result = result_of(reply)
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {
        "tools": {},
        "resources": {},
        "prompts": {},
        "completions": {},
        "logging": {},
    }
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"] == {META_SERVER_INFO: SERVER_INFO}
    assert "instructions" not in result


def test_discover_includes_instructions_and_the_title_when_configured(catalog):
    server = make_server(catalog, title="Test Server", instructions="Use add for sums.")
    result = result_of(call(server, request("server/discover")))
    assert result["instructions"] == "Use add for sums."
    assert result["_meta"][META_SERVER_INFO] == {**SERVER_INFO, "title": "Test Server"}


def test_discover_advertises_logging_because_handlers_may_send_log_messages(server):
    # logging.mdx §Capabilities: a server that emits notifications/message MUST declare it.
    assert result_of(call(server, request("server/discover")))["capabilities"]["logging"] == {}


def test_a_dual_era_server_lists_every_version_it_speaks_in_discover(catalog):
    server = make_server(catalog, legacy=True)
    result = result_of(call(server, request("server/discover")))
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18"]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
        ("resources/read", {"uri": "config://app"}),
    ],
)
def test_every_cacheable_result_carries_ttl_and_scope(server, method, params):
    result = result_of(call(server, request(method, params)))
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "private"
    assert result["_meta"][META_SERVER_INFO] == SERVER_INFO


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "n", "value": ""},
            },
        ),
    ],
)
def test_non_cacheable_results_carry_result_type_and_server_info_but_no_cache_hints(
    server, method, params
):
    result = result_of(call(server, request(method, params)))
    assert result["resultType"] == "complete"
    assert result["_meta"][META_SERVER_INFO] == SERVER_INFO
    assert "ttlMs" not in result
    assert "cacheScope" not in result


def test_configured_cache_hints_apply_only_to_their_method(catalog):
    server = make_server(catalog, cache_hints={"tools/list": CacheHint(60_000, "public")})
    tools = result_of(call(server, request("tools/list")))
    assert (tools["ttlMs"], tools["cacheScope"]) == (60_000, "public")
    prompts = result_of(call(server, request("prompts/list")))
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (0, "private")


def test_a_tool_result_meta_is_merged_with_the_server_info(server, catalog):
    catalog.oracle = ToolResult(content=[content.text("x")], meta={"example.com/trace": "t-1"})
    result = result_of(tool_call(server, "oracle", {}))
    assert result["_meta"] == {META_SERVER_INFO: SERVER_INFO, "example.com/trace": "t-1"}


def test_changing_one_results_meta_does_not_leak_into_the_next_result(server):
    first = result_of(call(server, request("tools/list")))
    first["_meta"]["io.modelcontextprotocol/subscriptionId"] = 1
    second = result_of(call(server, request("tools/list", id=2)))
    assert second["_meta"] == {META_SERVER_INFO: SERVER_INFO}


def test_a_reply_encodes_as_json(server):
    reply = call(server, request("tools/list"))
    assert wire.decode(wire.encode(reply)) == json.loads(json.dumps(reply))


# -- the request _meta ---------------------------------------------------------------------


def test_a_request_without_params_is_refused_naming_params_meta(server):
    reply = call(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    error = error_of(reply, INVALID_PARAMS)
    assert reply["id"] == 3
    assert "params._meta" in error["message"]


def test_a_request_with_params_but_no_meta_is_refused_naming_params_meta(server):
    reply = call(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})
    assert "params._meta" in error_of(reply, INVALID_PARAMS)["message"]


@pytest.mark.parametrize("missing", [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES])
def test_a_meta_missing_a_required_key_is_refused_naming_the_key(server, missing):
    message = request("tools/list")
    del message["params"]["_meta"][missing]
    error = error_of(call(server, message), INVALID_PARAMS)
    assert missing in error["message"]


@pytest.mark.parametrize("value", ["not an object", [], 5, True])
def test_a_meta_that_is_not_an_object_is_refused(server, value):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": value}}
    assert "params._meta" in error_of(call(server, message), INVALID_PARAMS)["message"]


@pytest.mark.parametrize("value", ["a list", [], 5])
def test_params_that_are_not_an_object_are_refused(server, value):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": value}
    assert "params" in error_of(call(server, message), INVALID_PARAMS)["message"]


def test_meta_at_the_top_level_of_the_message_is_refused_naming_where_it_belongs(server):
    message = request("tools/list")
    message["_meta"] = meta()
    reply = call(server, message)
    error = error_of(reply, INVALID_PARAMS)
    assert reply["id"] == 1
    assert "params._meta" in error["message"]
    assert "top level" in error["message"]


def test_an_unsupported_version_is_refused_with_the_supported_and_requested_versions(server):
    message = request("tools/list")
    message["params"]["_meta"][META_PROTOCOL_VERSION] = "2099-01-01"
    reply = call(server, message)
    error = error_of(reply, UNSUPPORTED_PROTOCOL_VERSION)
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
    assert reply["id"] == 1


@pytest.mark.parametrize("legacy", [False, True])
def test_an_unsupported_version_names_as_supported_what_discover_lists(catalog, legacy):
    # One answer whichever a client asks (versioning.mdx's example names both eras): a
    # dual-era endpoint's -32022 named only 2026-07-28 while discover listed three.
    server = make_server(catalog, legacy=legacy)
    listed = result_of(call(server, request("server/discover")))["supportedVersions"]
    message = request("tools/list")
    message["params"]["_meta"][META_PROTOCOL_VERSION] = "2099-01-01"
    error = error_of(call(server, message), UNSUPPORTED_PROTOCOL_VERSION)
    assert error["data"] == {"supported": listed, "requested": "2099-01-01"}
    assert len(listed) == (3 if legacy else 1)


def test_the_legacy_version_in_meta_is_unsupported_at_2026(server):
    message = request("tools/list")
    message["params"]["_meta"][META_PROTOCOL_VERSION] = "2025-11-25"
    error = error_of(call(server, message), UNSUPPORTED_PROTOCOL_VERSION)
    assert error["data"]["requested"] == "2025-11-25"


@pytest.mark.parametrize("version", [20260728, None, "2026-07-28\n<script>", "x" * 500])
def test_a_protocol_version_that_is_not_a_version_string_is_refused_without_echoing_it(
    server, version
):
    message = request("tools/list")
    message["params"]["_meta"][META_PROTOCOL_VERSION] = version
    error = error_of(call(server, message), INVALID_PARAMS)
    assert META_PROTOCOL_VERSION in error["message"]
    assert "script" not in json.dumps(error)
    assert "x" * 100 not in json.dumps(error)


@pytest.mark.parametrize("capabilities", [None, [], "all", 1])
def test_client_capabilities_that_are_not_an_object_are_refused(server, capabilities):
    message = request("tools/list")
    message["params"]["_meta"][META_CLIENT_CAPABILITIES] = capabilities
    error = error_of(call(server, message), INVALID_PARAMS)
    assert META_CLIENT_CAPABILITIES in error["message"]


@pytest.mark.parametrize(
    "client_info",
    ["client", {"name": "c"}, {"version": "1"}, {"name": 1, "version": "1"}, []],
)
def test_an_invalid_client_info_is_refused(server, client_info):
    message = request("tools/list", **{META_CLIENT_INFO: client_info})
    error = error_of(call(server, message), INVALID_PARAMS)
    assert META_CLIENT_INFO in error["message"]


def test_a_valid_client_info_reaches_the_host_context(server, catalog):
    info = {"name": "ExampleClient", "version": "1.0.0"}
    result_of(call(server, request("tools/call", {"name": "echo"}, **{META_CLIENT_INFO: info})))
    assert catalog.contexts[0].client_info == info


@pytest.mark.parametrize("level", ["verbose", "INFO", 3, [], {}])
def test_an_invalid_log_level_is_refused(server, level):
    message = request("tools/list", **{META_LOG_LEVEL: level})
    assert META_LOG_LEVEL in error_of(call(server, message), INVALID_PARAMS)["message"]


@pytest.mark.parametrize("token", [True, 1.5, [], {}])
def test_a_progress_token_that_is_not_a_string_or_integer_is_refused(server, token):
    message = request("tools/list", progressToken=token)
    assert "progressToken" in error_of(call(server, message), INVALID_PARAMS)["message"]


@pytest.mark.parametrize("token", ["tok-1", 7])
def test_a_string_or_integer_progress_token_is_accepted(server, token):
    result_of(call(server, request("tools/list", progressToken=token)))


def test_the_context_carries_this_requests_version_and_capabilities(server, catalog):
    capabilities = {"sampling": {}}
    message = request("tools/call", {"name": "echo"})
    message["params"]["_meta"][META_CLIENT_CAPABILITIES] = capabilities
    result_of(call(server, message))
    result_of(call(server, request("tools/call", {"name": "echo"}, id=2)))
    first, second = catalog.contexts
    assert first.protocol_version == MODERN
    assert first.client_capabilities == capabilities
    assert first.request_id == 1
    assert first.method == "tools/call"
    # Nothing is inferred from an earlier request.
    assert second.client_capabilities == {}


# -- JSON-RPC framing ----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["ping", "initialize", "logging/setLevel"])
def test_methods_removed_in_2026_are_method_not_found(server, method):
    error = error_of(call(server, request(method, {"level": "info"})), METHOD_NOT_FOUND)
    assert method in error["message"]
    assert MODERN in error["message"]


@pytest.mark.parametrize("method", ["ping", "logging/setLevel"])
def test_a_dual_era_server_also_refuses_removed_methods_sent_with_modern_meta(catalog, method):
    server = make_server(catalog, legacy=True)
    error_of(call(server, request(method, {"level": "info"})), METHOD_NOT_FOUND)


def test_an_unknown_method_with_odd_bytes_is_not_echoed(server):
    error = error_of(call(server, request("tools/\u202ecall<x>")), METHOD_NOT_FOUND)
    assert "<x>" not in error["message"]
    assert "\u202e" not in error["message"]


def test_a_batch_decoded_from_the_wire_is_refused_as_an_invalid_request():
    batch = json.dumps([request("tools/list"), request("prompts/list", id=2)]).encode()
    with pytest.raises(ProtocolError) as caught:
        wire.decode(batch)
    assert caught.value.code == INVALID_REQUEST


def test_a_batch_handed_straight_to_the_server_is_an_invalid_request_not_an_internal_error(
    server,
):
    reply = call(server, [request("tools/list"), request("prompts/list", id=2)])
    assert "id" not in reply
    error_of(reply, INVALID_REQUEST)


@pytest.mark.parametrize(
    "notification",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/something-new", "params": {}},
        {"jsonrpc": "2.0", "method": "tools/list", "params": {"_meta": meta()}},
    ],
)
def test_a_notification_gets_no_reply(server, catalog, notification):
    reply = call(server, notification)
    assert type(reply) is Unanswered
    assert reply.reason == "notification"
    assert catalog.calls == []


@pytest.mark.parametrize("request_id", [0, -1, 2**53, "", "abc", "\u00e9"])
def test_the_request_id_is_echoed_on_success(server, request_id):
    assert call(server, request("tools/list", id=request_id))["id"] == request_id


@pytest.mark.parametrize("request_id", [5, "req-5"])
def test_the_request_id_is_echoed_on_every_kind_of_error(server, request_id):
    replies = [
        call(server, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}),
        call(server, request("no/such/method", id=request_id)),
        call(server, request("tools/call", {"name": "nope"}, id=request_id)),
        call(server, request("tools/call", {"name": "crash"}, id=request_id)),
    ]
    for reply in replies:
        assert "error" in reply
        assert reply["id"] == request_id


@pytest.mark.parametrize("bad_id", [True, False, None, 1.0, 1.5, [], {}])
def test_an_id_of_the_wrong_type_is_an_invalid_request_answered_without_an_id(server, bad_id):
    # Both schemas make an error's id optional and forbid null: unreadable means absent.
    reply = call(server, request("tools/list", id=bad_id))
    error_of(reply, INVALID_REQUEST)
    assert "id" not in reply


@pytest.mark.parametrize("version", [None, "1.0", 2.0])
def test_a_message_without_jsonrpc_2_0_is_an_invalid_request_that_still_echoes_its_id(
    server, version
):
    message = request("tools/list", id=5)
    message["jsonrpc"] = version
    reply = call(server, message)
    error_of(reply, INVALID_REQUEST)
    assert reply["id"] == 5


def test_a_request_without_a_method_is_an_invalid_request(server):
    reply = call(server, {"jsonrpc": "2.0", "id": 4, "params": {"_meta": meta()}})
    error_of(reply, INVALID_REQUEST)
    assert reply["id"] == 4


def test_a_method_that_is_not_a_string_is_an_invalid_request(server):
    error_of(call(server, request(7)), INVALID_REQUEST)


@pytest.mark.parametrize(
    "response",
    [
        {"jsonrpc": "2.0", "id": 9, "result": {}},
        {"jsonrpc": "2.0", "id": "s-1", "error": {"code": -32601, "message": "no"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
    ],
)
def test_a_stray_response_gets_no_reply(server, response):
    assert call(server, response) == Unanswered("response")


# -- tools ---------------------------------------------------------------------------------


def test_tools_list_advertises_tools_in_name_order_with_their_schemas(server):
    tools = result_of(call(server, request("tools/list")))["tools"]
    names = [tool["name"] for tool in tools]
    assert names == sorted(names)
    add = tools[0]
    assert add == {
        "name": "add",
        "description": "Add two integers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    }
    weather = next(tool for tool in tools if tool["name"] == "weather")
    assert weather["outputSchema"]["required"] == ["celsius"]


def test_a_valid_call_reaches_dispatch_and_answers_its_text(server, catalog):
    result = result_of(tool_call(server, "add", {"a": 2, "b": 3}))
    assert result["content"] == [{"type": "text", "text": "5"}]
    assert "isError" not in result
    assert catalog.calls == [("dispatch", "add", {"a": 2, "b": 3})]


def test_an_unknown_tool_is_invalid_params_naming_it(server, catalog):
    error = error_of(tool_call(server, "subtract", {}), INVALID_PARAMS)
    assert "'subtract'" in error["message"]
    assert catalog.calls == []


@pytest.mark.parametrize("name", ["<img src=x>", "a\nb", "\u202eevil", "x" * 200])
def test_an_unknown_tool_with_an_odd_name_is_refused_without_echoing_the_name(server, name):
    error = error_of(tool_call(server, name, {}), INVALID_PARAMS)
    assert name not in json.dumps(error, ensure_ascii=False)
    assert "unknown tool" in error["message"]


@pytest.mark.parametrize("name", [None, 5, ["add"]])
def test_a_tool_name_that_is_not_a_string_is_invalid_params(server, name):
    error = error_of(call(server, request("tools/call", {"name": name})), INVALID_PARAMS)
    assert "params.name" in error["message"]


def test_arguments_that_are_not_an_object_are_invalid_params(server, catalog):
    error = error_of(tool_call(server, "add", [1, 2]), INVALID_PARAMS)
    assert "params.arguments" in error["message"]
    assert catalog.calls == []


def test_missing_arguments_are_validated_as_an_empty_object(server, catalog):
    result = result_of(tool_call(server, "add"))
    assert result["isError"] is True
    assert 'the required property "a"' in result["content"][0]["text"]
    assert catalog.calls == []


def test_arguments_failing_the_schema_are_a_tool_error_naming_path_and_rule_but_not_the_value(
    server, catalog
):
    secret = "sk-live-4f9a-SECRET-TOKEN"
    result = result_of(tool_call(server, "add", {"a": secret, "b": 2}))
    assert result["isError"] is True
    assert result["resultType"] == "complete"
    text = result["content"][0]["text"]
    assert "arguments/a" in text
    assert "must be of type integer" in text
    assert "'add'" in text
    assert secret not in json.dumps(result)
    assert "SECRET" not in json.dumps(result)


def test_a_nested_violation_names_the_full_path_and_the_rule(server):
    arguments = {"lines": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 0}]}
    text = result_of(tool_call(server, "order", arguments))["content"][0]["text"]
    assert "arguments/lines/1/qty" in text
    assert "must be >= 1" in text


def test_a_pattern_violation_names_the_schema_pattern_but_not_the_value(server):
    result = result_of(tool_call(server, "order", {"code": "hunter2"}))
    text = result["content"][0]["text"]
    assert "arguments/code" in text
    assert "^[A-Z]{3}$" in text
    assert "hunter2" not in json.dumps(result)


def test_an_extra_argument_is_refused_without_naming_it(server):
    result = result_of(tool_call(server, "add", {"a": 1, "b": 2, "sk-secret-key": 3}))
    assert result["isError"] is True
    assert "sk-secret-key" not in json.dumps(result)


def test_a_boolean_is_not_accepted_where_an_integer_is_required(server, catalog):
    result = result_of(tool_call(server, "add", {"a": True, "b": 2}))
    assert result["isError"] is True
    assert catalog.calls == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"a": "1", "b": 2},
        {"a": 1},
        {"a": 1, "b": 2, "c": 3},
        {"a": 1.5, "b": 2},
        {"a": None, "b": 2},
    ],
)
def test_the_hosts_dispatch_is_not_called_when_arguments_are_invalid(server, catalog, arguments):
    result = result_of(tool_call(server, "add", arguments))
    assert result["isError"] is True
    assert catalog.calls == []


def test_json_true_false_and_null_reach_dispatch_unchanged(server, catalog):
    data = json.dumps(
        request("tools/call", {"name": "echo", "arguments": {"t": True, "f": False, "n": None}})
    ).encode()
    result_of(call(server, wire.decode(data)))
    [(_, name, arguments)] = catalog.calls
    assert name == "echo"
    assert arguments["t"] is True
    assert arguments["f"] is False
    assert arguments["n"] is None
    assert arguments == {"t": True, "f": False, "n": None}


def test_a_tool_error_becomes_an_is_error_result_with_its_message(server):
    result = result_of(tool_call(server, "refuse", {}))
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "the warehouse is closed on Sundays"}]


def test_a_host_exception_is_an_internal_error_with_the_id_and_none_of_its_text(server, caplog):
    with caplog.at_level(logging.ERROR, logger="beammcp_django"):
        reply = call(server, request("tools/call", {"name": "crash", "arguments": {}}, id="c-1"))
    error = error_of(reply, INTERNAL_ERROR)
    assert reply["id"] == "c-1"
    assert "hunter2" not in json.dumps(reply)
    assert "RuntimeError" not in error["message"]
    assert "hunter2" in caplog.text  # the server's own log keeps the detail


def test_a_part_down_goes_through_to_the_transport_to_answer_as_unavailable(catalog, caplog):
    """``PartDown`` (a shared part that did not answer) is no host fault: the core neither
    answers it -32603 nor logs a traceback; the transport answers it 503 naming the part."""

    def database_down(arguments: dict[str, Any], context: Any) -> Any:
        raise PartDown("the database")

    catalog.handlers["crash"] = database_down
    server = make_server(catalog)
    with caplog.at_level(logging.ERROR, logger="beammcp_django"), pytest.raises(PartDown) as down:
        call(server, request("tools/call", {"name": "crash", "arguments": {}}, id="c-2"))
    assert down.value.message == "the database is unavailable; send the request again later"
    assert caplog.records == []


def test_structured_content_matching_the_output_schema_is_served_with_a_text_block(server):
    result = result_of(tool_call(server, "weather", {}))
    assert result["structuredContent"] == {"celsius": 21.5}
    assert result["content"] == [{"type": "text", "text": '{"celsius": 21.5}'}]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_structured_content_breaking_the_output_schema_is_an_internal_error_without_detail(
    server,
):
    reply = tool_call(server, "weather", {"mode": "broken"})
    error = error_of(reply, INTERNAL_ERROR)
    assert error == {"code": INTERNAL_ERROR, "message": "internal error; the server logged it"}
    assert "scorching" not in json.dumps(reply)
    assert "celsius" not in json.dumps(reply)


def test_a_tool_with_an_output_schema_that_returns_no_structured_content_is_an_internal_error(
    server,
):
    error_of(tool_call(server, "weather", {"mode": "missing"}), INTERNAL_ERROR)


def test_an_error_result_skips_the_output_schema(server, catalog):
    catalog.handlers["weather"] = lambda arguments, context: ToolResult(
        content=[content.text("sensor offline")], is_error=True
    )
    result = result_of(tool_call(server, "weather", {}))
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "sensor offline"}]


def test_structured_content_without_content_gets_a_text_block(server, catalog):
    catalog.oracle = ToolResult(structured={"ok": True, "items": [1, 2]})
    result = result_of(tool_call(server, "oracle", {}))
    assert result["structuredContent"] == {"ok": True, "items": [1, 2]}
    [block] = result["content"]
    assert block["type"] == "text"
    assert json.loads(block["text"]) == {"ok": True, "items": [1, 2]}


@pytest.mark.parametrize("structured", [[1, 2], "plain", 3, None])
def test_structured_content_that_is_not_an_object_is_allowed_at_2026(server, catalog, structured):
    catalog.oracle = ToolResult(structured=structured)
    result = result_of(tool_call(server, "oracle", {}))
    assert result["structuredContent"] == structured
    assert json.loads(result["content"][0]["text"]) == structured


def test_structured_content_keeps_the_content_the_tool_gave(server, catalog):
    catalog.oracle = ToolResult(content=[content.text("21.5 C")], structured={"c": 21.5})
    result = result_of(tool_call(server, "oracle", {}))
    assert result["content"] == [{"type": "text", "text": "21.5 C"}]


@pytest.mark.parametrize(
    "value",
    [
        [content.text("a"), content.image(b"\x89PNG", "image/png")],
        (content.resource_link("file:///x", "x"),),
        ToolResult(content=[content.embedded_text("file:///y", "y")]),
        ToolResult(),
    ],
)
def test_content_blocks_are_served_as_given(server, catalog, value):
    catalog.oracle = value
    result = result_of(tool_call(server, "oracle", {}))
    expected = value.content if isinstance(value, ToolResult) else value
    assert result["content"] == list(expected)


@pytest.mark.parametrize(
    "value",
    [
        None,
        42,
        b"bytes",
        {"type": "text", "text": "a dict, not a list"},
        ["plain string in a list"],
        [{"type": "video", "url": "x"}],
        [{"text": "no type"}],
        ToolResult(content="a string is not a list of blocks"),
        ToolResult(content=[{"type": "bogus"}]),
    ],
    ids=[
        "none",
        "int",
        "bytes",
        "bare-block",
        "list-of-str",
        "unknown-type",
        "untyped",
        "result-str-content",
        "result-bad-block",
    ],
)
def test_an_off_contract_return_value_is_an_internal_error(server, catalog, value):
    catalog.oracle = value
    reply = tool_call(server, "oracle", {})
    error = error_of(reply, INTERNAL_ERROR)
    assert error["message"] == "internal error; the server logged it"


# -- resources -----------------------------------------------------------------------------


def test_resources_list_and_templates_list_are_sorted_and_split(server):
    resources = result_of(call(server, request("resources/list")))["resources"]
    assert [item["uri"] for item in resources] == [
        "config://app",
        "config://binary",
        "config://empty",
    ]
    assert resources[0] == {
        "uri": "config://app",
        "name": "app-config",
        "mimeType": "application/json",
    }
    templates = result_of(call(server, request("resources/templates/list")))["resourceTemplates"]
    assert [item["uriTemplate"] for item in templates] == [
        "file:///docs/{name}",
        "users://{user_id}/profile",
    ]


def test_reading_a_listed_uri_answers_text_contents_with_its_mime_type(server, catalog):
    result = result_of(call(server, request("resources/read", {"uri": "config://app"})))
    assert result["contents"] == [
        {"uri": "config://app", "mimeType": "application/json", "text": '{"debug": false}'}
    ]
    assert catalog.calls == [("read_resource", "config://app", {})]


def test_reading_bytes_answers_base64_blob_contents(server):
    result = result_of(call(server, request("resources/read", {"uri": "config://binary"})))
    assert result["contents"] == [
        {"uri": "config://binary", "mimeType": "image/png", "blob": "iVBORw=="}
    ]


def test_a_uri_matching_a_template_reaches_the_reader_with_decoded_variables(server, catalog):
    uri = "file:///docs/read%20me.md"
    result = result_of(call(server, request("resources/read", {"uri": uri})))
    assert result["contents"] == [{"uri": uri, "mimeType": "text/markdown", "text": "# read me.md"}]
    assert catalog.calls == [("read_resource", uri, {"name": "read me.md"})]


def test_a_reader_may_return_resource_contents(server):
    uri = "users://42/profile"
    result = result_of(call(server, request("resources/read", {"uri": uri})))
    assert result["contents"] == [{"uri": uri, "text": "user 42"}]


@pytest.mark.parametrize(
    "uri",
    [
        "config://missing",
        "file:///docs/a/b",
        "file:///docs/..",
        "file:///docs/%2e%2e",
        "file:///docs/..%2Fsecret",
        "users:///profile",
    ],
)
def test_a_uri_that_matches_nothing_is_invalid_params_with_the_uri_at_2026(server, catalog, uri):
    error = error_of(call(server, request("resources/read", {"uri": uri})), INVALID_PARAMS)
    assert error["data"] == {"uri": uri}
    assert catalog.calls == []


def test_resource_not_found_from_the_reader_is_invalid_params_with_the_uri_at_2026(server):
    uri = "users://7/profile"
    error = error_of(call(server, request("resources/read", {"uri": uri})), INVALID_PARAMS)
    assert error["data"] == {"uri": uri}


def test_an_empty_contents_from_the_reader_is_an_internal_error_not_an_empty_result(server):
    reply = call(server, request("resources/read", {"uri": "config://empty"}))
    error_of(reply, INTERNAL_ERROR)


@pytest.mark.parametrize("uri", [None, 5, {"uri": "config://app"}])
def test_a_uri_that_is_not_a_string_is_invalid_params(server, uri):
    error = error_of(call(server, request("resources/read", {"uri": uri})), INVALID_PARAMS)
    assert "params.uri" in error["message"]


# -- prompts -------------------------------------------------------------------------------


def test_prompts_list_advertises_arguments(server):
    prompts = result_of(call(server, request("prompts/list")))["prompts"]
    assert prompts == [
        {
            "name": "greet",
            "description": "Greet someone",
            "arguments": [{"name": "name", "required": True}, {"name": "tone"}],
        },
        {"name": "summary"},
    ]


def test_a_prompt_is_rendered_with_its_arguments(server, catalog):
    params = {"name": "greet", "arguments": {"name": "Ada", "tone": "warm"}}
    result = result_of(call(server, request("prompts/get", params)))
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello Ada"}}
    ]
    assert result["description"] == "A greeting"
    assert catalog.calls == [("get_prompt", "greet", {"name": "Ada", "tone": "warm"})]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "required"),
        ({"tone": "warm"}, "required"),
        ({"name": "Ada", "mood": "x"}, "does not allow"),
        ({"name": 5}, "must be of type string"),
        ({"name": None}, "must be of type string"),
        ({"name": ["Ada"]}, "must be of type string"),
    ],
    ids=["nothing", "missing-required", "extra", "int", "null", "list"],
)
def test_prompt_arguments_off_the_declaration_are_invalid_params(
    server, catalog, arguments, expected
):
    params = {"name": "greet", "arguments": arguments}
    error = error_of(call(server, request("prompts/get", params)), INVALID_PARAMS)
    assert expected in error["message"]
    assert catalog.calls == []


def test_an_unknown_prompt_is_invalid_params_naming_it(server):
    error = error_of(call(server, request("prompts/get", {"name": "farewell"})), INVALID_PARAMS)
    assert "'farewell'" in error["message"]


def test_a_prompt_answering_off_contract_is_an_internal_error(server):
    error_of(call(server, request("prompts/get", {"name": "summary"})), INTERNAL_ERROR)


# -- pagination ----------------------------------------------------------------------------


def named_tool(name: str) -> ToolSpec:
    return ToolSpec(name, {"type": "object"})


def page(server, method: str, cursor: str | None = None, field: str = "tools"):
    params = {} if cursor is None else {"cursor": cursor}
    result = result_of(call(server, request(method, params)))
    return [item["name"] for item in result[field]], result.get("nextCursor"), result


def walk(server, method: str = "tools/list", field: str = "tools") -> list[list[str]]:
    pages, cursor = [], None
    while True:
        names, cursor, _ = page(server, method, cursor, field)
        pages.append(names)
        if cursor is None:
            return pages


def test_five_tools_in_pages_of_two_are_walked_in_name_order(catalog):
    catalog.tools = tuple(
        named_tool(name) for name in ("echo", "bravo", "delta", "alpha", "charlie")
    )
    server = make_server(catalog, page_size=2)
    assert walk(server) == [["alpha", "bravo"], ["charlie", "delta"], ["echo"]]


def test_every_page_carries_the_same_cache_scope(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcde")
    server = make_server(catalog, page_size=2, cache_hints={"tools/list": CacheHint(5, "public")})
    _, cursor, first = page(server, "tools/list")
    _, _, second = page(server, "tools/list", cursor)
    assert (first["cacheScope"], second["cacheScope"]) == ("public", "public")
    assert (first["ttlMs"], second["ttlMs"]) == (5, 5)


def test_the_last_page_has_no_next_cursor_even_when_it_is_full(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcd")
    server = make_server(catalog, page_size=2)
    assert walk(server) == [["a", "b"], ["c", "d"]]


def test_an_empty_cursor_is_the_first_page(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abc")
    server = make_server(catalog, page_size=2)
    assert page(server, "tools/list", "")[0] == ["a", "b"]


def test_prompts_and_resources_paginate_too(catalog):
    server = make_server(catalog, page_size=1)
    assert walk(server, "prompts/list", "prompts") == [["greet"], ["summary"]]
    assert walk(server, "resources/list", "resources") == [["app-config"], ["binary"], ["empty"]]


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "AAAAAAAAAAAAAAAAWyJ0b29scy9saXN0IiwiYiJd",
        "\u00e9\u00e9\u00e9",
        "a",
        "====",
    ],
)
def test_a_forged_cursor_is_invalid_params(catalog, cursor):
    catalog.tools = tuple(named_tool(name) for name in "abcde")
    server = make_server(catalog, page_size=2)
    error = error_of(call(server, request("tools/list", {"cursor": cursor})), INVALID_PARAMS)
    assert "cursor" in error["message"]


def test_an_edited_cursor_is_invalid_params(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcde")
    server = make_server(catalog, page_size=2)
    cursor = page(server, "tools/list")[1]
    edited = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
    error_of(call(server, request("tools/list", {"cursor": edited})), INVALID_PARAMS)


def test_a_cursor_from_another_list_is_invalid_params(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcde")
    server = make_server(catalog, page_size=2)
    cursor = page(server, "tools/list")[1]
    error = error_of(call(server, request("prompts/list", {"cursor": cursor})), INVALID_PARAMS)
    assert "prompts/list" in error["message"]


def test_a_cursor_from_another_server_key_is_invalid_params(catalog):
    from beammcp_django.protocol.server import Server, ServerOptions

    catalog.tools = tuple(named_tool(name) for name in "abcde")
    other = Server(catalog, ServerOptions("x", "1", page_size=2), cursor_key=b"another key")
    cursor = page(other, "tools/list")[1]
    server = make_server(catalog, page_size=2)
    error_of(call(server, request("tools/list", {"cursor": cursor})), INVALID_PARAMS)


@pytest.mark.parametrize("cursor", [5, ["x"], {"k": "v"}])
def test_a_cursor_that_is_not_a_string_is_invalid_params(server, cursor):
    error = error_of(call(server, request("tools/list", {"cursor": cursor})), INVALID_PARAMS)
    assert "params.cursor" in error["message"]


def test_a_tool_inserted_before_the_cursor_between_pages_skips_and_repeats_nothing(catalog):
    original = ("b", "d", "f", "h", "j")
    catalog.tools = tuple(named_tool(name) for name in original)
    server = make_server(catalog, page_size=2)
    first, cursor, _ = page(server, "tools/list")
    assert first == ["b", "d"]
    catalog.tools = (named_tool("a"), named_tool("c"), *catalog.tools)
    seen = list(first)
    while cursor is not None:
        names, cursor, _ = page(server, "tools/list", cursor)
        seen.extend(names)
    assert [name for name in seen if name in original] == list(original)
    assert len(seen) == len(set(seen))


def test_a_tool_removed_before_the_cursor_between_pages_skips_nothing(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcdef")
    server = make_server(catalog, page_size=2)
    first, cursor, _ = page(server, "tools/list")
    assert first == ["a", "b"]
    catalog.tools = tuple(named_tool(name) for name in "bcdef")
    second, cursor, _ = page(server, "tools/list", cursor)
    assert second == ["c", "d"]


def test_the_tool_named_by_the_cursor_may_itself_be_removed(catalog):
    catalog.tools = tuple(named_tool(name) for name in "abcdef")
    server = make_server(catalog, page_size=2)
    _, cursor, _ = page(server, "tools/list")
    catalog.tools = tuple(named_tool(name) for name in "acdef")
    assert page(server, "tools/list", cursor)[0] == ["c", "d"]


def test_a_replaced_catalog_list_is_served_on_the_next_request(server, catalog):
    catalog.tools = (*catalog.tools, named_tool("zeta"))
    names = [tool["name"] for tool in result_of(call(server, request("tools/list")))["tools"]]
    assert names[-1] == "zeta"
    result_of(tool_call(server, "add", {"a": 1, "b": 1}))


# -- completion ----------------------------------------------------------------------------


def completion_request(ref: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ref": ref or {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "A"},
    }
    body.update(params)
    return request("completion/complete", body)


def test_completion_is_served_when_the_catalog_can_complete(server, catalog):
    result = result_of(call(server, completion_request(context={"arguments": {"tone": "warm"}})))
    assert result["completion"] == {"values": ["alpha", "beta"]}
    assert catalog.calls == [
        (
            "complete",
            {"type": "ref/prompt", "name": "greet"},
            {"name": "name", "value": "A"},
            {"tone": "warm"},
        )
    ]


def test_completion_for_a_resource_template_is_served(server):
    ref = {"type": "ref/resource", "uri": "file:///docs/{name}"}
    result_of(call(server, completion_request(ref)))


def test_completion_is_neither_served_nor_advertised_without_a_completer():
    server = make_server(CatalogWithoutCompletion())
    capabilities = result_of(call(server, request("server/discover")))["capabilities"]
    assert "completions" not in capabilities
    error_of(call(server, completion_request()), METHOD_NOT_FOUND)


def test_more_than_100_completion_values_are_cut_to_100_with_has_more(server, catalog):
    catalog.completion = [f"v{number}" for number in range(250)]
    completion = result_of(call(server, completion_request()))["completion"]
    assert completion["values"] == [f"v{number}" for number in range(100)]
    assert completion["hasMore"] is True


def test_exactly_100_completion_values_are_not_flagged_as_more(server, catalog):
    catalog.completion = [f"v{number}" for number in range(100)]
    completion = result_of(call(server, completion_request()))["completion"]
    assert len(completion["values"]) == 100
    assert "hasMore" not in completion


def test_a_completion_total_and_has_more_are_passed_on(server, catalog):
    catalog.completion = Completion(values=["a"], total=40, has_more=True)
    completion = result_of(call(server, completion_request()))["completion"]
    assert completion == {"values": ["a"], "total": 40, "hasMore": True}


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": "nope"},
        {"type": "ref/resource", "uri": "config://nope"},
        {"type": "ref/tool", "name": "add"},
        {"name": "greet"},
    ],
)
def test_a_completion_ref_naming_nothing_of_this_server_is_invalid_params(server, catalog, ref):
    error_of(call(server, completion_request(ref)), INVALID_PARAMS)
    assert catalog.calls == []


def test_a_completion_argument_without_string_name_and_value_is_invalid_params(server):
    message = completion_request(argument={"name": "name", "value": 5})
    error_of(call(server, message), INVALID_PARAMS)


@pytest.mark.parametrize("values", [[1, 2], "abc", None])
def test_a_completer_answering_off_contract_is_an_internal_error(server, catalog, values):
    catalog.completion = values
    error_of(call(server, completion_request()), INTERNAL_ERROR)


# -- progress and log notifications through the context ------------------------------------


def report(server, **meta_extra: Any) -> list[dict[str, Any]]:
    emitted: list[dict[str, Any]] = []
    reply = call(
        server, request("tools/call", {"name": "report"}, **meta_extra), emit=emitted.append
    )
    assert result_of(reply)["content"] == [{"type": "text", "text": "reported"}]
    return emitted


def test_progress_is_emitted_only_when_the_request_has_a_progress_token(server):
    emitted = report(server, progressToken="p-1")
    assert emitted == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p-1", "progress": 1, "total": 2, "message": "half way"},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p-1", "progress": 2, "total": 2},
        },
    ]


def test_no_notification_is_emitted_without_a_progress_token_or_log_level(server):
    assert report(server) == []


def test_log_messages_are_emitted_only_at_or_above_the_requested_level(server):
    emitted = report(server, **{META_LOG_LEVEL: "info"})
    assert emitted == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "data": {"disk": "nearly full"}, "logger": "storage"},
        }
    ]


def test_the_debug_level_lets_every_log_message_through(server):
    emitted = report(server, **{META_LOG_LEVEL: "debug"})
    assert [item["params"]["level"] for item in emitted] == ["debug", "warning"]


def test_a_level_above_every_message_emits_none(server):
    assert report(server, **{META_LOG_LEVEL: "error"}) == []


def test_progress_and_log_levels_combine(server):
    emitted = report(server, progressToken=3, **{META_LOG_LEVEL: "warning"})
    assert [item["method"] for item in emitted] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
    ]
    assert emitted[0]["params"]["progressToken"] == 3


def test_a_call_without_an_emitter_still_succeeds(server):
    message = request(
        "tools/call", {"name": "report"}, progressToken="p", **{META_LOG_LEVEL: "debug"}
    )
    assert result_of(call(server, message))["content"][0]["text"] == "reported"


def test_nothing_is_emitted_after_the_request_is_cancelled(server, catalog):
    import threading

    cancelled = threading.Event()
    cancelled.set()
    emitted: list[dict[str, Any]] = []
    message = request(
        "tools/call", {"name": "report"}, progressToken="p", **{META_LOG_LEVEL: "debug"}
    )
    call(server, message, emit=emitted.append, cancelled=cancelled)
    assert emitted == []
    assert catalog.contexts[0].cancelled is True


# -- host code and the transport's thread runner -------------------------------------------


def test_sync_host_code_goes_through_run_sync_and_async_host_code_is_awaited():
    from beammcp_django.protocol.server import Server, ServerOptions

    ran: list[str] = []

    async def run_sync(function, *args):
        ran.append(function.__name__)
        return function(*args)

    catalog = MemoryCatalog()
    server = Server(catalog, ServerOptions("t", "1"), cursor_key=b"k", run_sync=run_sync)
    result_of(call(server, request("resources/read", {"uri": "config://app"})))
    result_of(call(server, request("tools/call", {"name": "report"})))
    assert ran == ["read_resource"]
