"""Host, Origin, the authorize hook and the body's bounds, written byte by byte on raw
sockets to a real uvicorn and a real daphne.

Refusals that come before the body (method, Host, Origin, the hook, declared size, chunked
framing, the deadline) carry ``Connection: close``; a refusal after the body was read leaves
the connection usable. Under daphne, which reads the whole body before the application runs,
the "before the body" cases are expected to fail (strict xfail, see the support module).
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.http.mcphttp_support import (
    BODY_TIMEOUT,
    HOOK_SECRET,
    MAX_BODY,
    RESOURCE_METADATA,
    NoResponse,
    Wire,
    daphne_reads_the_body_first,
    discover_works,
    encode,
    exchange,
    http_request,
    message,
    post,
    servers,
)

DISCOVER = message("b-1", "server/discover")
# How long a "before the body" refusal may take; uvicorn answers in milliseconds.
PRE_BODY_WAIT = 2.5

daphne_keeps_the_connection = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "daphne (Twisted) decides persistence from the request alone: it sends the "
        "application's Connection: close header but keeps the connection open"
    ),
)


def assert_refused(response, status, *, close=True):
    assert response.status == status, (response.status, response.body)
    if close:
        assert response.says_close, response.headers
    return response


# -- Host ---------------------------------------------------------------------------------


def test_a_host_this_server_does_not_serve_is_refused_4xx(server):
    response = post(server.port, DISCOVER, host="evil.example.com")
    assert 400 <= response.status < 500
    assert response.says_close
    assert b"evil.example.com" not in response.body


@servers(daphne=daphne_reads_the_body_first())
def test_a_bad_host_is_refused_before_the_body_is_read(server):
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, host="evil.example.com", body=b"", content_length=512))
        response = wire.response(PRE_BODY_WAIT)
    assert 400 <= response.status < 500
    assert response.says_close


# Each disagreeing pair in both orders: a server that took the first value, or the last, would
# pass one order and fail the other.
HOSTILE_FIRST_AND_LAST = pytest.mark.parametrize(
    "hostile_first", [True, False], ids=["hostile-first", "hostile-last"]
)


def in_order(allowed: tuple[str, str], hostile: tuple[str, str], hostile_first: bool):
    return [hostile, allowed] if hostile_first else [allowed, hostile]


@HOSTILE_FIRST_AND_LAST
def test_two_disagreeing_host_headers_are_refused_4xx(server, hostile_first):
    pair = in_order(("Host", "127.0.0.1"), ("Host", "evil.example.com"), hostile_first)
    response = post(server.port, DISCOVER, host=None, add=pair)
    assert 400 <= response.status < 500


# -- Origin -------------------------------------------------------------------------------


def test_a_disallowed_origin_is_403(server):
    response = post(server.port, DISCOVER, add=[("Origin", "http://evil.example.com")])
    assert_refused(response, 403)
    assert b"evil.example.com" not in response.body
    assert "id" not in response.json()


@HOSTILE_FIRST_AND_LAST
def test_two_disagreeing_origin_headers_are_403(server, hostile_first):
    allowed, hostile = ("Origin", "http://127.0.0.1:8000"), ("Origin", "http://evil.example.com")
    response = post(server.port, DISCOVER, add=in_order(allowed, hostile, hostile_first))
    assert_refused(response, 403)


@pytest.mark.parametrize(
    "origin", [None, "http://127.0.0.1:8000", "http://localhost:8000"], ids=str
)
def test_an_allowed_origin_or_no_origin_is_served(server, origin):
    extra = [("Origin", origin)] if origin else []
    response = post(server.port, DISCOVER, add=extra)
    assert response.status == 200
    assert response.json()["result"]["resultType"] == "complete"


# -- the authorize hook -------------------------------------------------------------------


@pytest.mark.parametrize("verdict", ["deny", "refuse-403"])
def test_a_hook_refusal_is_403_with_no_reason_in_the_answer(server, verdict):
    response = post(server.port, DISCOVER, add=[("X-Mcphttp-Authorize", verdict)])
    assert_refused(response, 403)
    assert response.body == b""
    assert response.header("www-authenticate") is None
    assert all(HOOK_SECRET not in value for _, value in response.headers)


def test_a_hook_refusal_401_carries_the_hooks_www_authenticate(server):
    response = post(server.port, DISCOVER, add=[("X-Mcphttp-Authorize", "refuse-401")])
    assert_refused(response, 401)
    assert response.all("www-authenticate") == [RESOURCE_METADATA]
    assert response.body == b""
    assert all(HOOK_SECRET not in value for _, value in response.headers)


def test_a_hook_that_raises_is_500_internal_error_with_nothing_leaked(server):
    response = post(server.port, DISCOVER, add=[("X-Mcphttp-Authorize", "raise")])
    assert_refused(response, 500)
    payload = response.json()
    assert payload["error"]["code"] == -32603
    assert "data" not in payload["error"]
    assert HOOK_SECRET.encode() not in response.body
    assert b"RuntimeError" not in response.body


def test_the_hook_sees_the_client_address_the_path_and_every_header_value(server):
    token = f"hook-{server.kind}-{uuid.uuid4().hex[:12]}"
    with Wire(server.port) as wire:
        wire.send(
            http_request(
                DISCOVER,
                host=server.host,
                add=[
                    ("X-Mcphttp-Record", token),
                    ("X-Mcphttp-Probe", "first value"),
                    ("X-Mcphttp-Probe", "second value"),
                ],
            )
        )
        response = wire.response()
        client_port = wire.local_port
    assert response.status == 200
    seen = json.loads((server.records / f"{token}.hook").read_text())
    assert seen["method"] == "POST"
    assert seen["path"] == "/mcp"
    assert seen["client"] == ["127.0.0.1", client_port]
    headers = seen["headers"]
    assert headers["x-mcphttp-probe"] == ["first value", "second value"]
    assert headers["host"] == [server.host]
    assert headers["mcp-method"] == ["server/discover"]
    assert headers["mcp-protocol-version"] == ["2026-07-28"]
    assert headers["content-length"] == [str(len(encode(DISCOVER)))]


# -- bounds -------------------------------------------------------------------------------


@servers(daphne=daphne_reads_the_body_first())
def test_a_declared_length_over_1_mib_is_413_with_close_before_any_body_byte(server):
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, body=b"", content_length=MAX_BODY + 1))
        response = wire.response(PRE_BODY_WAIT)
    assert_refused(response, 413)
    assert response.json()["error"]["code"] == -32600
    assert str(MAX_BODY).encode() in response.body


def test_a_body_over_1_mib_sent_in_full_is_413(server):
    body = encode(DISCOVER).ljust(MAX_BODY + 1, b" ")
    response = post(server.port, DISCOVER, body=body)
    assert_refused(response, 413)


def test_a_body_of_exactly_1_mib_is_accepted(server):
    body = encode(DISCOVER).ljust(MAX_BODY, b" ")
    assert len(body) == MAX_BODY
    response = post(server.port, DISCOVER, body=body)
    assert response.status == 200, response.body
    assert response.json()["id"] == "b-1"


@servers(
    daphne=pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=(
            "daphne (Twisted) answers 100 Continue as soon as the headers arrive and then "
            "waits for the body, so the refusal cannot come first"
        ),
    )
)
def test_an_oversized_expect_100_continue_request_is_refused_without_100_continue(server):
    with Wire(server.port) as wire:
        wire.send(
            http_request(
                DISCOVER,
                body=b"",
                content_length=MAX_BODY + 1,
                add=[("Expect", "100-continue")],
            )
        )
        first = wire.response(PRE_BODY_WAIT)
        assert first.status != 100, "the server asked for the body it is about to refuse"
    assert_refused(first, 413)


def test_an_expect_100_continue_request_gets_100_continue_then_its_answer(server):
    body = encode(DISCOVER)
    with Wire(server.port) as wire:
        wire.send(
            http_request(
                DISCOVER, body=b"", content_length=len(body), add=[("Expect", "100-continue")]
            )
        )
        interim = wire.response()
        assert interim.status == 100
        wire.send(body)
        final = wire.response()
    assert final.status == 200
    assert final.json()["id"] == "b-1"


def test_two_disagreeing_content_lengths_are_refused_400(server):
    body = encode(DISCOVER)
    data = http_request(DISCOVER, body=body, add=[("Content-Length", str(len(body) + 1))])
    with Wire(server.port) as wire:
        wire.send(data)
        response = wire.response()
    assert response.status == 400


def test_a_chunked_body_is_411_with_connection_close(server):
    body = encode(DISCOVER)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    data = http_request(
        DISCOVER, body=chunked, content_length=False, add=[("Transfer-Encoding", "chunked")]
    )
    response = exchange(server.port, data)
    assert_refused(response, 411)
    assert response.json()["error"]["code"] == -32600


@servers(daphne=daphne_reads_the_body_first())
def test_a_chunked_request_is_411_before_any_chunk_is_sent(server):
    """The refusal comes from the head alone: no chunk has been written when it arrives."""
    head = http_request(
        DISCOVER, body=b"", content_length=False, add=[("Transfer-Encoding", "chunked")]
    )
    with Wire(server.port) as wire:
        wire.send(head)
        # Within the body deadline: a server that waited for the body would answer 408.
        response = wire.response(timeout=BODY_TIMEOUT * 0.9)
    assert_refused(response, 411)


@servers(daphne=daphne_reads_the_body_first())
@pytest.mark.parametrize("pace", ["drip", "stall"])
def test_a_body_that_never_completes_is_408_at_the_deadline_on_one_clock(server, pace):
    body = encode(DISCOVER)
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, body=b"", content_length=len(body)))
        started = time.monotonic()
        sent = 0
        if pace == "stall":
            wire.send(body[:10])
        # Drip one byte every 0.3 s: each read is quick, only the whole-body clock can fire.
        while not wire.has_data(0.3):
            if time.monotonic() - started > BODY_TIMEOUT + PRE_BODY_WAIT:
                raise NoResponse("no 408 while the body dripped")
            if pace == "drip" and sent < len(body) - 1:
                wire.send(body[sent : sent + 1])
                sent += 1
        response = wire.response(PRE_BODY_WAIT)
        elapsed = time.monotonic() - started
    assert_refused(response, 408)
    assert response.json()["error"]["code"] == -32600
    assert BODY_TIMEOUT * 0.9 <= elapsed < BODY_TIMEOUT + 0.6, elapsed


def test_a_content_length_shorter_than_the_body_is_400_parse_error_for_the_cut(server):
    body = encode(DISCOVER)
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, body=body, content_length=len(body) - 5))
        response = wire.response()
    assert response.status == 400
    assert response.json()["error"]["code"] == -32700


def test_a_client_that_goes_away_mid_body_gets_nothing_and_the_server_keeps_serving(server):
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, body=encode(DISCOVER)[:10], content_length=400))
    assert discover_works(server.port)


# -- keep-alive after refusals ------------------------------------------------------------


def test_after_a_refusal_issued_after_the_body_the_connection_serves_a_second_request(server):
    bad = http_request(DISCOVER, replace={"Mcp-Method": "tools/list"})
    with Wire(server.port) as wire:
        wire.send(bad)
        first = wire.response()
        assert first.status == 400
        assert first.json()["error"]["code"] == -32020
        assert not first.says_close
        wire.send(http_request(message("b-2", "server/discover")))
        second = wire.response()
    assert second.status == 200
    assert second.json()["id"] == "b-2"


def test_after_a_streamed_answer_the_connection_serves_a_second_request(server):
    call = message("s-1", "tools/call", {"name": "fault_progress"}, progressToken="keep")
    with Wire(server.port) as wire:
        wire.send(http_request(call))
        streamed = wire.response()
        assert streamed.content_type == "text/event-stream"
        assert streamed.events()[-1]["id"] == "s-1"
        wire.send(http_request(message("s-2", "server/discover")))
        second = wire.response()
    assert second.status == 200
    assert second.json()["id"] == "s-2"


def test_a_request_pipelined_after_a_post_body_refusal_is_answered_in_order(server):
    requests = (
        http_request(message("pipe-1", "server/discover"), drop=["Mcp-Method"])
        + http_request({"jsonrpc": "2.0", "id": "pipe-2", "method": "tools/list"})
        + http_request(message("pipe-3", "server/discover"))
    )
    with Wire(server.port) as wire:
        wire.send(requests)
        answers = [wire.response() for _ in range(3)]
    assert [answer.status for answer in answers] == [400, 400, 200]
    assert [answer.json()["id"] for answer in answers] == ["pipe-1", "pipe-2", "pipe-3"]
    assert [answer.json().get("error", {}).get("code") for answer in answers] == [
        -32020,
        -32602,
        None,
    ]


@pytest.mark.parametrize(
    ("status", "options"),
    [
        (405, {"method": "GET", "content_length": False}),
        (400, {"host": "evil.example.com"}),
        (403, {"add": [("Origin", "http://evil.example.com")]}),
        (403, {"add": [("X-Mcphttp-Authorize", "deny")]}),
        (401, {"add": [("X-Mcphttp-Authorize", "refuse-401")]}),
        (500, {"add": [("X-Mcphttp-Authorize", "raise")]}),
    ],
    ids=["method", "host", "origin", "hook-deny", "hook-401", "hook-raise"],
)
def test_every_pre_body_refusal_carries_connection_close(server, status, options):
    response = post(server.port, DISCOVER, **options)
    assert_refused(response, status, close=True)


@servers(daphne=daphne_keeps_the_connection)
def test_after_a_pre_body_refusal_the_server_closes_the_connection(server):
    pipelined = http_request(DISCOVER, add=[("Origin", "http://evil.example.com")])
    pipelined += http_request(message("never", "server/discover"))
    with Wire(server.port) as wire:
        wire.send(pipelined)
        assert_refused(wire.response(), 403)
        assert wire.closed_by_server(PRE_BODY_WAIT), "the connection stayed open"
        assert b'"never"' not in bytes(wire.buffer)


def test_the_server_keeps_serving_after_a_run_of_every_refusal(server):
    refusals = [
        http_request(method="GET", content_length=False),
        http_request(method="DELETE", content_length=False),
        http_request(DISCOVER, host="evil.example.com"),
        http_request(DISCOVER, add=[("Origin", "http://evil.example.com")]),
        http_request(DISCOVER, add=[("X-Mcphttp-Authorize", "raise")]),
        http_request(DISCOVER, body=encode(DISCOVER).ljust(MAX_BODY + 1, b" ")),
        http_request(DISCOVER, drop=["MCP-Protocol-Version"]),
        http_request(None, body=b"{nope"),
        http_request(message("x", "tools/call", {"name": "fault_explode", "arguments": {}})),
        http_request(message("y", "unknown/method")),
    ]
    statuses = [exchange(server.port, data).status for data in refusals]
    assert statuses == [405, 405, 400, 403, 500, 413, 400, 400, 500, 404]
    assert discover_works(server.port)


# -- the after-read hook (AUTHORIZE_BODY) ----------------------------------------------------


def test_the_body_hook_sees_the_exact_bytes_as_sent_before_any_decoding(server):
    token = f"body-{server.kind}-{uuid.uuid4().hex[:12]}"
    # Spacing, key order and a \u escape that decoding and re-encoding would all change.
    raw = (
        b'{ "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {},'
        b' "io.modelcontextprotocol/protocolVersion": "2026-07-28"}},\n'
        b'  "method": "server/discover", "id": "b-1", "jsonrpc": "2.0", "note": "\\u00e9" }'
    )
    response = post(server.port, DISCOVER, body=raw, add=[("X-Mcphttp-Record", token)])
    assert response.status == 200, response.body
    seen = (server.records / f"{token}.body").read_text(encoding="utf-8").encode("latin-1")
    assert seen == raw


def test_a_body_signed_over_the_exact_bytes_is_served_and_a_bad_signature_is_401(server):
    import hashlib
    import hmac

    from tests.http.mcphttp_app.hooks import SIGNING_KEY

    body = json.dumps(DISCOVER).encode()
    good = hmac.new(SIGNING_KEY, body, hashlib.sha256).hexdigest()
    signed = [("X-Mcphttp-Body", "signed"), ("X-Mcphttp-Signature", good)]
    assert post(server.port, DISCOVER, body=body, add=signed).status == 200
    forged = [("X-Mcphttp-Body", "signed"), ("X-Mcphttp-Signature", "0" * 64)]
    response = post(server.port, DISCOVER, body=body, add=forged)
    assert response.status == 401
    assert response.all("www-authenticate") == ["Signature"]
    assert response.body == b""
    assert HOOK_SECRET.encode() not in response.body


def test_a_body_hook_refusal_comes_after_the_read_and_keeps_the_connection(server):
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, add=[("X-Mcphttp-Body", "deny")]))
        refused = wire.response()
        assert refused.status == 403
        assert not refused.says_close
        wire.send(http_request(message("after", "server/discover")))
        assert wire.response().json()["id"] == "after"


def test_a_body_hook_that_raises_is_500_with_nothing_leaked(server):
    response = post(server.port, DISCOVER, add=[("X-Mcphttp-Body", "raise")])
    assert response.status == 500
    assert response.json()["error"]["code"] == -32603
    assert HOOK_SECRET.encode() not in response.body
