"""A 2025-11-25 session's call streams are resumable (2025-11-25 basic/transports.mdx,
"Resumability and Redelivery"), under uvicorn (``mcp_serve``) and daphne, on raw sockets: a
stream opens with a priming event (an id, ``retry``, empty data), every event carries an id,
and a connection that goes (the host's ``context.release_connection()``, or the client's
own disconnect) leaves the call running; ``GET`` with ``Last-Event-ID`` gets what followed
that event, the result last, and nothing of another stream or session.

Every test here runs again against two workers sharing sessions in Redis, each connection
to the other worker than the last, so a resume lands where the call does not run:
tests/http/test_mcphttp_shared_sessions.py.
"""

from __future__ import annotations

import json
import re
import time

from tests.http.mcphttp_support import (
    REPLY_TIMEOUT,
    Wire,
    http_request,
    wait_for_file,
)
from tests.http.test_mcphttp_legacy_sessions import (
    LEGACY,
    MODERN_HEADERS,
    legacy,
    open_session,
    read_until,
    send,
)

EVENT_ID = re.compile(rb"^id: ([A-Za-z0-9_-]+):(\d+)$", re.MULTILINE)


def session_headers(session):
    return [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]


def resume(port, session, last_event_id):
    """A raw connection resuming a stream, its request sent."""
    wire = Wire(port)
    headers = [
        ("Accept", "text/event-stream"),
        *session_headers(session),
        ("Last-Event-ID", last_event_id),
    ]
    wire.send(
        http_request(None, method="GET", drop=MODERN_HEADERS, add=headers, content_length=False)
    )
    return wire


def messages(raw: bytes) -> list[dict]:
    return [
        json.loads(line[len(b"data: ") :])
        for line in raw.splitlines()
        if line.startswith(b"data: ")
    ]


def call_with_progress(tool, arguments, request_id="r"):
    return legacy(
        request_id,
        "tools/call",
        {"name": tool, "arguments": arguments, "_meta": {"progressToken": "p"}},
    )


def test_a_released_connection_leaves_a_stream_the_client_resumes_for_the_rest(server):
    session, _ = open_session(server.port)
    call = call_with_progress("mcphttp_release", {})
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=session_headers(session)))
        answered = wire.response(REPLY_TIMEOUT)
    assert answered.status == 200 and answered.content_type == "text/event-stream"
    # The priming event, alone: an id, the retry interval, empty data; then the end.
    assert re.fullmatch(rb"id: [A-Za-z0-9_-]+:0\nretry: 1000\ndata:\n\n", answered.body)
    stream, number = EVENT_ID.search(answered.body).groups()
    assert number == b"0"
    with resume(server.port, session, f"{stream.decode()}:0") as wire:
        raw = read_until(wire, b'"id":"r"')
    events = messages(raw)
    assert [event.get("params", {}).get("progress") for event in events[:-1]] == [1, 2, 3]
    assert events[-1]["result"]["content"][0]["text"] == "released: True"
    ids = [int(found[1]) for found in EVENT_ID.findall(raw)]
    assert ids == [1, 2, 3, 4]  # every event numbered, in order, after the one resumed from


def left_mid_call(server, name, seconds):
    """A session, and a vigil call in it its client left after the first progress event:
    the session, the call's token, the stream's id and the last event id read."""
    session, _ = open_session(server.port)
    token = f"{name}-{server.kind}-{time.monotonic_ns()}"
    call = call_with_progress("mcphttp_vigil", {"token": token, "seconds": seconds})
    wire = Wire(server.port)
    wire.send(http_request(call, drop=MODERN_HEADERS, add=session_headers(session)))
    seen = read_until(wire, b"notifications/progress")
    wire.close()  # the network goes: no cancellation
    stream, last = EVENT_ID.findall(seen)[-1]
    return session, token, stream, last


def test_a_client_that_disconnects_resumes_after_the_last_event_it_read(server):
    session, token, stream, last = left_mid_call(server, "resume", 1)
    assert last == b"1"
    assert wait_for_file(server.records / f"{token}.finished", REPLY_TIMEOUT)
    assert not (server.records / f"{token}.cancelled").exists()
    with resume(server.port, session, f"{stream.decode()}:1") as again:
        raw = read_until(again, b'"id":"r"')
    assert [event.get("result", {}).get("content") for event in messages(raw)] == [
        [{"type": "text", "text": "finished"}]
    ]
    # Delivered, the stream is gone: resuming it again is refused by name. Until the server
    # has seen the first resume's connection close (a worker apart, on a loaded machine),
    # the stream is still being written there: 409, by name, then the refusal.
    deadline = time.monotonic() + REPLY_TIMEOUT
    while True:
        with resume(server.port, session, f"{stream.decode()}:1") as late:
            refused = late.response(REPLY_TIMEOUT)
        if refused.status != 409 or time.monotonic() > deadline:
            break
        assert "being written on another connection" in refused.json()["error"]["message"]
        time.sleep(0.05)
    assert refused.status == 400
    assert "names no stream of this session" in refused.json()["error"]["message"]


def test_a_stream_is_resumed_only_in_its_own_session_and_from_an_event_it_sent(server):
    session, _ = open_session(server.port)
    other, _ = open_session(server.port)
    call = call_with_progress("mcphttp_release", {})
    with Wire(server.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=session_headers(session)))
        primed = wire.response(REPLY_TIMEOUT)
    stream = EVENT_ID.search(primed.body).group(1).decode()
    for in_session, event_id, status in [
        (other, f"{stream}:0", 400),  # another session's stream: nothing to replay
        (session, f"{stream}:99", 400),  # an event it never sent
        (session, "not-an-id", 400),
    ]:
        with resume(server.port, in_session, event_id) as wire:
            refused = wire.response(REPLY_TIMEOUT)
        assert refused.status == status, (event_id, refused.body)
        assert refused.json()["error"]["code"] == -32600
    with resume(server.port, session, f"{stream}:0") as wire:
        raw = read_until(wire, b'"id":"r"')
    assert messages(raw)[-1]["result"]["content"][0]["text"] == "released: True"


def test_a_stream_resumed_on_one_connection_is_refused_on_a_second(server):
    # 5 s: the call must outlive both resumes, also with two workers on a loaded machine
    # (with 2 s, a CI run saw the call finish before the second resume arrived).
    session, _, stream_id, _ = left_mid_call(server, "twice", 5)
    stream = stream_id.decode()
    time.sleep(0.2)  # the server notices the disconnect
    with resume(server.port, session, f"{stream}:1") as first:
        read_until(first, b"\r\n\r\n")
        with resume(server.port, session, f"{stream}:1") as second:
            assert second.response(REPLY_TIMEOUT).status == 409
        assert b"finished" in read_until(first, b'"id":"r"')


def test_a_reply_with_no_stream_stays_plain_json(server):
    session, _ = open_session(server.port)
    answered = send(server.port, legacy("p", "ping"), session)
    assert answered.status == 200 and answered.content_type == "application/json"
