"""2025-11-25 sessions beside stateless 2026-07-28 on the one endpoint, under uvicorn
(``mcp_serve``) and daphne, byte by byte on raw sockets: ``initialize`` opens a session whose
id comes back in ``Mcp-Session-Id``; every later request names it and the negotiated
``MCP-Protocol-Version``; JSON-RPC errors in a session are answered 200 (404 there means the
session is gone); ``DELETE`` ends one; a session is bound to the principal that opened it.
"""

from __future__ import annotations

import contextlib
import json
import string
import time

import pytest

from tests.http.mcphttp_support import (
    REPLY_TIMEOUT,
    NoResponse,
    Wire,
    discover_works,
    http_request,
    message,
    post,
    wait_for_file,
)

LEGACY = "2025-11-25"
# The 2026-07-28 headers mcp_headers() adds; a 2025-11-25 client sends none of them.
MODERN_HEADERS = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
VISIBLE_ASCII = set(string.printable[:94])


def legacy(request_id, method, params=None):
    body = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        body["id"] = request_id
    if params is not None:
        body["params"] = params
    return body


def send(port, body, session=None, *, version=LEGACY, principal=None, method="POST"):
    headers = []
    if session is not None:
        headers.append(("Mcp-Session-Id", session))
    if version is not None and session is not None:
        headers.append(("MCP-Protocol-Version", version))
    if principal is not None:
        headers.append(("X-Mcphttp-Authorize", f"principal:{principal}"))
    return post(port, body, drop=MODERN_HEADERS, add=headers, method=method)


def open_session(port, principal=None, capabilities=None):
    response = send(
        port,
        legacy(
            "init",
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "legacy-http-test", "version": "1"},
            },
        ),
        principal=principal,
    )
    assert response.status == 200, (response.status, response.body)
    session = response.header("mcp-session-id")
    assert session is not None
    assert (
        send(port, legacy(None, "notifications/initialized"), session, principal=principal).status
        == 202
    )
    return session, response.json()


def test_initialize_opens_a_session_whose_requests_are_served_at_2025_11_25(server):
    session, initialized = open_session(server.port)
    assert set(session) <= VISIBLE_ASCII and len(session) >= 32
    result = initialized["result"]
    assert result["protocolVersion"] == LEGACY
    assert "resultType" not in result
    assert {"tools", "resources", "prompts", "logging"} <= set(result["capabilities"])
    called = send(
        server.port,
        legacy(2, "tools/call", {"name": "echo", "arguments": {"text": "old times"}}),
        session,
    )
    assert called.status == 200
    assert called.json()["result"] == {"content": [{"type": "text", "text": "old times"}]}
    assert send(server.port, legacy(3, "ping"), session).json() == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {},
    }
    # The modern era is served beside it, on the same endpoint.
    assert discover_works(server.port)


def test_a_whole_float_for_an_integer_reaches_a_session_tool_as_an_integer(server):
    session, _ = open_session(server.port)
    answered = call(server.port, session, "get_forecast", {"city": "oslo", "days": 2.0})
    assert "isError" not in answered["result"], answered
    assert len(answered["result"]["structuredContent"]["days"]) == 2


def test_each_initialize_opens_its_own_session(server):
    assert open_session(server.port)[0] != open_session(server.port)[0]


def test_a_json_rpc_error_in_a_session_is_answered_200_not_404(server):
    session, _ = open_session(server.port)
    unknown = send(server.port, legacy(4, "no/such/method"), session)
    assert unknown.status == 200
    assert unknown.json()["error"]["code"] == -32601


def test_a_session_the_server_does_not_hold_is_404_and_a_deleted_one_too(server):
    unknown = send(server.port, legacy(5, "ping"), "no-such-session-0123456789abcdef")
    assert unknown.status == 404
    assert unknown.json()["error"]["code"] == -32600
    session, _ = open_session(server.port)
    ended = send(server.port, None, session, method="DELETE")
    assert ended.status == 204 and ended.body == b""
    gone = send(server.port, legacy(6, "ping"), session)
    assert gone.status == 404
    assert gone.json()["error"]["message"] == unknown.json()["error"]["message"]
    assert send(server.port, None, session, method="DELETE").status == 404


@pytest.mark.parametrize(
    ("version", "says"),
    [
        (None, "MCP-Protocol-Version is missing"),
        ("2026-07-28", "not the version this session negotiated (2025-11-25)"),
        ("1999-01-01", "not the version this session negotiated (2025-11-25)"),
    ],
)
def test_a_request_in_a_session_without_its_negotiated_version_is_400(server, version, says):
    session, _ = open_session(server.port)
    headers = [("Mcp-Session-Id", session)]
    if version is not None:
        headers.append(("MCP-Protocol-Version", version))
    refused = post(server.port, legacy(7, "ping"), drop=MODERN_HEADERS, add=headers)
    assert refused.status == 400
    assert says in refused.json()["error"]["message"]
    assert send(server.port, legacy(8, "ping"), session).status == 200  # the session lives on


def test_a_request_that_establishes_no_era_is_refused_400_with_a_modern_error(server):
    refused = post(server.port, legacy(9, "tools/list"), drop=MODERN_HEADERS)
    assert refused.status == 400
    error = refused.json()["error"]
    assert error["code"] == -32602
    assert "params._meta is required at 2026-07-28" in error["message"]


def test_a_modern_request_is_served_statelessly_even_beside_a_session_header(server):
    session, _ = open_session(server.port)
    modern = post(server.port, message("m-1", "tools/list"), add=[("Mcp-Session-Id", session)])
    assert modern.status == 200
    assert modern.json()["result"]["resultType"] == "complete"
    initialize = post(server.port, message("m-2", "initialize", {"protocolVersion": LEGACY}))
    assert initialize.status == 404  # modern _meta makes it a 2026-07-28 request
    assert initialize.json()["error"]["code"] == -32601


def test_initialize_inside_a_session_is_refused(server):
    session, _ = open_session(server.port)
    again = send(server.port, legacy(10, "initialize", {"protocolVersion": LEGACY}), session)
    assert again.status == 400
    assert "initialized already" in again.json()["error"]["message"]


def test_a_session_is_served_only_to_the_principal_that_opened_it(server):
    session, _ = open_session(server.port, principal="ada")
    whoami = legacy(11, "tools/call", {"name": "principal_whoami", "arguments": {}})
    served = send(server.port, whoami, session, principal="ada")
    assert served.json()["result"]["content"][0]["text"] == "caller:ada"
    stranger = send(server.port, whoami, session, principal="grace")
    anonymous = send(server.port, whoami, session)
    unknown = send(server.port, whoami, "no-such-session-0123456789abcdef", principal="grace")
    # Another principal's session is answered exactly as one that does not exist.
    assert stranger.status == anonymous.status == unknown.status == 404
    assert stranger.body == anonymous.body == unknown.body
    assert send(server.port, None, session, principal="grace", method="DELETE").status == 404
    assert send(server.port, whoami, session, principal="ada").status == 200


def test_progress_in_a_session_streams_before_the_result(server):
    session, _ = open_session(server.port)
    call = legacy(
        12,
        "tools/call",
        {"name": "fault_progress", "arguments": {}, "_meta": {"progressToken": "p"}},
    )
    streamed = send(server.port, call, session)
    assert streamed.status == 200
    events = streamed.events()
    assert [event.get("method") for event in events[:-1]] == ["notifications/progress"] * 3
    assert events[-1]["id"] == 12 and "result" in events[-1]


def test_get_or_delete_naming_no_session_is_405_as_at_2026_07_28(server):
    for method in ("GET", "DELETE"):
        refused = post(server.port, None, method=method, drop=MODERN_HEADERS)
        assert refused.status == 405
        assert refused.header("allow") == "GET, POST, DELETE, OPTIONS"


# -- the session's GET stream ------------------------------------------------------------------


def open_stream(port, session, principal=None):
    """A raw connection holding the session's GET stream, its head read."""
    headers = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", LEGACY),
    ]
    if principal is not None:
        headers.append(("X-Mcphttp-Authorize", f"principal:{principal}"))
    wire = Wire(port)
    wire.send(
        http_request(None, method="GET", drop=MODERN_HEADERS, add=headers, content_length=False)
    )
    return wire


def read_until(wire, needle, timeout=REPLY_TIMEOUT):
    """The bytes of the stream so far, once ``needle`` is among them."""
    deadline = time.monotonic() + timeout
    while needle not in wire.buffer:
        wire._fill(deadline)
    return bytes(wire.buffer)


def call(port, session, tool, arguments):
    body = legacy(f"c-{time.monotonic_ns()}", "tools/call", {"name": tool, "arguments": arguments})
    answered = send(port, body, session)
    assert answered.status == 200, answered.body
    return answered.json()


def test_a_sessions_get_stream_carries_list_changes_and_its_subscribed_updates(server):
    session, initialized = open_session(server.port)
    capabilities = initialized["result"]["capabilities"]
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["tools"] == {"listChanged": True}
    subscribed = send(
        server.port, legacy("s", "resources/subscribe", {"uri": "weather://stations"}), session
    )
    assert subscribed.json()["result"] == {}
    with open_stream(server.port, session) as wire:
        head = read_until(wire, b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head.lower()
        call(server.port, session, "mcphttp_touch", {"uri": "weather://elsewhere"})
        call(server.port, session, "mcphttp_touch", {"uri": "weather://stations"})
        updated = read_until(wire, b"notifications/resources/updated")
        assert b'"uri":"weather://stations"' in updated
        assert b"weather://elsewhere" not in updated  # not subscribed: not sent
        call(server.port, session, "mcphttp_announce", {})
        read_until(wire, b"notifications/tools/list_changed")
        # A second stream of the same session is refused: a message goes on one stream.
        with open_stream(server.port, session) as second:
            assert b"409" in read_until(second, b"\r\n")
        # Unsubscribed, the resource's updates stop; ending the session ends the stream.
        unsubscribe = legacy("u", "resources/unsubscribe", {"uri": "weather://stations"})
        assert send(server.port, unsubscribe, session).json()["result"] == {}
        seen = len(wire.buffer)
        call(server.port, session, "mcphttp_touch", {"uri": "weather://stations"})
        call(server.port, session, "mcphttp_announce", {})
        after = read_until(wire, b"notifications/tools/list_changed")[seen:]
        assert b"resources/updated" not in after
        assert send(server.port, None, session, method="DELETE").status == 204
        read_until(wire, b"\r\n0\r\n\r\n")  # the stream's last chunk: it ended


def test_subscribing_to_a_uri_the_catalog_does_not_serve_is_refused(server):
    session, _ = open_session(server.port)
    refused = send(server.port, legacy("s", "resources/subscribe", {"uri": "nowhere://x"}), session)
    assert refused.status == 200
    assert refused.json()["error"]["code"] == -32002


def test_another_principals_get_stream_of_a_session_is_404(server):
    session, _ = open_session(server.port, principal="ada")
    with open_stream(server.port, session, principal="grace") as wire:
        assert b" 404 " in read_until(wire, b"\r\n")


# -- input from the client: server-to-client requests ---------------------------------------------


def test_an_answer_reaches_only_the_call_of_its_own_session_that_asked(server):
    asking, _ = open_session(server.port, capabilities={"elicitation": {}})
    other, _ = open_session(server.port, capabilities={"elicitation": {}})
    call = legacy("ask", "tools/call", {"name": "mcphttp_ask_user", "arguments": {}})
    headers = [("Mcp-Session-Id", asking), ("MCP-Protocol-Version", LEGACY)]
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        streamed = read_until(wire, b"elicitation/create")
        request = json.loads(streamed.split(b"data: ", 1)[1].split(b"\n", 1)[0])
        assert request["method"] == "elicitation/create" and request["id"].startswith("beammcp-")
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"city": "Quito"}},
        }
        # Posted in another session, or for an id nobody asked, it is accepted and dropped.
        assert send(server.port, answer, other).status == 202
        assert send(server.port, {**answer, "id": "beammcp-never-sent"}, asking).status == 202
        assert b'"id":"ask"' not in bytes(wire.buffer)
        assert send(server.port, answer, asking).status == 202
        finished = read_until(wire, b'"id":"ask"')
        assert b'"text":"Quito"' in finished
        # Answered once, the id is no longer waited on: a second answer changes nothing.
        assert send(server.port, answer, asking).status == 202
    assert discover_works(server.port)


def test_input_the_sessions_client_cannot_answer_is_refused_by_name(server):
    session, _ = open_session(server.port)  # no elicitation capability declared
    call = legacy("ask", "tools/call", {"name": "mcphttp_ask_user", "arguments": {}})
    refused = send(server.port, call, session)
    assert refused.status == 200
    error = refused.json()["error"]
    assert error["code"] == -32600
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def asked_ids(wire, count):
    """The ids of the first ``count`` server-to-client requests on a call's stream."""
    streamed = read_until_count(wire, b"elicitation/create", count)
    return [
        json.loads(line)["id"]
        for line in streamed.split(b"data: ")[1:]
        for line in [line.split(b"\n", 1)[0]]
        if b"elicitation/create" in line
    ]


def read_until_count(wire, needle, count, timeout=REPLY_TIMEOUT):
    deadline = time.monotonic() + timeout
    while wire.buffer.count(needle) < count:
        wire._fill(deadline)
    return bytes(wire.buffer)


def accept(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "result": {"action": "accept", "content": {}}}


def test_a_host_that_never_stops_asking_is_stopped_after_8_rounds(server):
    session, _ = open_session(server.port, capabilities={"elicitation": {}})
    call = legacy("forever", "tools/call", {"name": "mcphttp_ask_forever", "arguments": {}})
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        for round_number in range(1, 9):
            request_id = asked_ids(wire, round_number)[-1]
            assert send(server.port, accept(request_id), session).status == 202
        ended = read_until(wire, b'"id":"forever"')
    reply = json.loads(ended.rsplit(b"data: ", 1)[1].split(b"\n", 1)[0])
    assert reply["error"]["code"] == -32603  # a host fault: logged, nothing of it sent
    assert ended.count(b"elicitation/create") == 8


def test_at_most_16_server_to_client_requests_of_a_session_wait_at_once(server):
    session, _ = open_session(server.port, capabilities={"elicitation": {}})
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    wires = [Wire(server.port) for _ in range(17)]
    try:
        for number, wire in enumerate(wires):
            call = legacy(
                f"w-{number}", "tools/call", {"name": "mcphttp_ask_user", "arguments": {}}
            )
            wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        seen = []
        deadline = time.monotonic() + REPLY_TIMEOUT
        while len(seen) < 17:
            for wire in wires:
                if wire not in seen and (
                    b"elicitation/create" in wire.buffer
                    or b"MCP error" in wire.buffer
                    or b'"error"' in wire.buffer
                ):
                    seen.append(wire)
                elif wire not in seen:
                    with contextlib.suppress(NoResponse):
                        wire._fill(min(deadline, time.monotonic() + 0.05))
            assert time.monotonic() < deadline, "not every call was asked or refused"
        refused = [wire for wire in wires if b'"error"' in wire.buffer]
        assert len(refused) == 1
        assert b"already waits for 16 answers" in refused[0].buffer
    finally:
        for wire in wires:
            wire.close()
    assert send(server.port, None, session, method="DELETE").status == 204


def test_a_session_holds_at_most_256_resource_subscriptions(server):
    session, _ = open_session(server.port)
    for number in range(256):
        uri = f"weather://observations/c{number}"
        reply = send(server.port, legacy(number, "resources/subscribe", {"uri": uri}), session)
        assert reply.json()["result"] == {}
    again = send(
        server.port,
        legacy("again", "resources/subscribe", {"uri": "weather://observations/c0"}),
        session,
    )
    assert again.json()["result"] == {}  # already held: not counted twice
    refused = send(
        server.port,
        legacy("one-more", "resources/subscribe", {"uri": "weather://observations/c256"}),
        session,
    )
    assert refused.json()["error"]["code"] == -32602
    assert "at most 256" in refused.json()["error"]["message"]


def test_a_2025_06_18_session_is_served_at_its_own_revision(server):
    opened = send(
        server.port,
        legacy(
            "init-0618",
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}},
        ),
    )
    assert opened.json()["result"]["protocolVersion"] == "2025-06-18"
    session = opened.header("mcp-session-id")
    # Its requests carry the version it negotiated, not 2025-11-25.
    assert send(server.port, legacy("p", "ping"), session, version="2025-06-18").status == 200
    assert send(server.port, legacy("p", "ping"), session).status == 400
    # Its input requests are 2025-06-18's: elicitation/create without 2025-11-25's mode.
    call = legacy("ask", "tools/call", {"name": "mcphttp_ask_user", "arguments": {}})
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-06-18")]
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        streamed = read_until(wire, b"elicitation/create")
        request = json.loads(streamed.split(b"data: ", 1)[1].split(b"\n", 1)[0])
        assert "mode" not in request["params"]
        assert set(request["params"]) == {"message", "requestedSchema"}
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"city": "Bern"}},
        }
        assert send(server.port, answer, session, version="2025-06-18").status == 202
        assert b'"text":"Bern"' in read_until(wire, b'"id":"ask"')


def test_notifications_cancelled_stops_the_sessions_request_and_ends_its_response(server):
    session, _ = open_session(server.port)
    token = f"cancel-{server.kind}-{time.monotonic_ns()}"
    call = legacy(
        "long",
        "tools/call",
        {"name": "mcphttp_vigil", "arguments": {"token": token, "seconds": 30}},
    )
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        assert wait_for_file(server.records / f"{token}.started", REPLY_TIMEOUT)
        # Another session's cancellation, or one naming no running request, stops nothing.
        other, _ = open_session(server.port)
        cancel = legacy(None, "notifications/cancelled", {"requestId": "long"})
        assert send(server.port, cancel, other).status == 202
        assert not (server.records / f"{token}.cancelled").exists()
        assert send(server.port, cancel, session).status == 202
        assert wait_for_file(server.records / f"{token}.cancelled", REPLY_TIMEOUT)
        ended = wire.response(REPLY_TIMEOUT)
    assert ended.status == 204 and ended.body == b""  # no JSON-RPC response for it
    assert send(server.port, legacy("after", "ping"), session).status == 200


def test_a_session_that_ends_releases_the_call_waiting_for_its_answer(server):
    session, _ = open_session(server.port, capabilities={"elicitation": {}})
    call = legacy("waits", "tools/call", {"name": "mcphttp_ask_user", "arguments": {}})
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        read_until(wire, b"elicitation/create")
        started = time.monotonic()
        assert send(server.port, None, session, method="DELETE").status == 204
        ended = read_until(wire, b'"id":"waits"')
    assert time.monotonic() - started < REPLY_TIMEOUT  # not the 300 s answer deadline
    assert b'"code":-32603' in ended.rsplit(b"data: ", 1)[1]


def test_a_subscribed_uri_over_2048_characters_is_refused(server):
    session, _ = open_session(server.port)
    uri = "weather://observations/" + "c" * 2048
    refused = send(server.port, legacy("long", "resources/subscribe", {"uri": uri}), session)
    assert refused.json()["error"]["code"] == -32602
    assert "at most 2048 characters" in refused.json()["error"]["message"]
