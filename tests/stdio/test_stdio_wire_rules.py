"""The JSON-RPC rules of stdio held on a real ``manage.py mcp_stdio`` process.

A notification (no ``id``) is never answered, whatever it holds; an error carries the
request's id when it can be read and no ``id`` at all when it cannot; each request is served
under the session as it stood when its line arrived; an interrupt ends the process through
the loop; and the connectome's counts are written before the process leaves.
"""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

from tests.databases import rows
from tests.support import message as modern_request

from .conftest import LEGACY, encode, legacy_request

pytestmark = pytest.mark.slow

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

MALFORMED_NOTIFICATIONS = [
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": 1}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1.5}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": []},
    {"jsonrpc": "2.0", "method": "notifications/cancelled"},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "_meta": {}},
    {"jsonrpc": "2.0", "method": "notifications/x", "params": []},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": "nope"},
    {"jsonrpc": "1.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": 7},
    {"jsonrpc": "2.0"},
    {"method": "tools/list"},
]


def echo(request_id: Any, text: str = "after") -> dict[str, Any]:
    return modern_request(request_id, "tools/call", {"name": "echo", "arguments": {"text": text}})


def test_no_notification_is_answered_however_malformed_and_the_next_request_is_served(server):
    server.send_raw(b"".join(encode(notification) for notification in MALFORMED_NOTIFICATIONS))
    reply = server.request(echo("after-notifications"))
    assert reply["result"]["content"] == [{"type": "text", "text": "after"}]
    # The reply is the first and only line the process wrote.
    assert server.history == [reply]


def test_a_malformed_cancellation_leaves_the_call_it_might_have_meant_running(shared_server):
    nap = {"name": "fault_nap", "arguments": {"seconds": 0.3}}
    shared_server.send(modern_request(1, "tools/call", nap))
    shared_server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}
    )
    reply = shared_server.response(1)
    assert reply["result"]["content"] == [{"type": "text", "text": "woke up"}]


def test_a_request_with_an_unreadable_id_is_answered_without_an_id(server):
    for bad_id in (None, [1], {"a": 1}, 1.5, True):
        before = len(server.errors_without_id())
        server.send({"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"})
        refusal = server.next_error_without_id(before)
        assert "id" not in refusal
        assert refusal["error"]["code"] == INVALID_REQUEST
    assert all("id" in item or "error" in item for item in server.history)
    assert b'"id":null' not in bytes(server.stdout_bytes)


@pytest.mark.parametrize("method", [[1], {"a": 1}, 7, None, True])
def test_a_method_of_another_type_is_an_invalid_request_and_the_next_is_served(
    shared_server, method
):
    server, tag = shared_server, repr(method)  # the module's server: ids of this case's own
    refusal = server.request({"jsonrpc": "2.0", "id": f"m-{tag}", "method": method})
    assert refusal["error"]["code"] == INVALID_REQUEST
    after = server.request(echo(f"after-method-{tag}"))
    assert after["result"]["content"][0]["text"] == "after"


def test_a_readable_id_is_echoed_on_a_request_refused_for_its_envelope(shared_server):
    refusal = shared_server.request({"jsonrpc": "1.0", "id": 5, "method": "tools/list"})
    assert refusal["id"] == 5
    assert refusal["error"]["code"] == INVALID_REQUEST


def test_a_request_that_arrives_before_initialize_is_served_without_the_session_it_made(server):
    # One write: the handshake is read after the first request and before the last one.
    server.send_raw(
        encode(legacy_request(1, "tools/list"))
        + encode(
            legacy_request(
                2,
                "initialize",
                {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        )
        + encode(legacy_request(3, "tools/list"))
    )
    before = server.response(1)
    assert before["error"]["code"] == INVALID_PARAMS, before
    assert server.response(2)["result"]["protocolVersion"] == LEGACY
    after = server.response(3)
    assert "tools" in after["result"]
    assert "resultType" not in after["result"]  # served at 2025-11-25, under the session


def test_a_log_level_set_after_a_request_arrived_does_not_apply_to_it(server):
    server.send_raw(
        encode(
            legacy_request(
                0,
                "initialize",
                {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        )
        + encode(
            legacy_request(
                1, "tools/call", {"name": "fault_log_off_contract", "arguments": {"token": "t"}}
            )
        )
        + encode(legacy_request(2, "logging/setLevel", {"level": "debug"}))
        + encode(
            legacy_request(
                3, "tools/call", {"name": "fault_log_off_contract", "arguments": {"token": "u"}}
            )
        )
    )
    for request_id in (0, 1, 2, 3):
        server.response(request_id)
    tokens = [
        item["params"]["data"]["token"]
        for item in server.history
        if item.get("method") == "notifications/message"
    ]
    assert tokens == ["u"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_ends_the_process_with_128_plus_the_signal_even_inside_async_host_code(
    server, signum
):
    server.request(echo("up"))  # the loop runs: its signal handlers are installed
    server.send(
        modern_request(1, "tools/call", {"name": "fault_nap", "arguments": {"seconds": 30}})
    )
    server.send(
        modern_request(2, "tools/call", {"name": "fault_doze", "arguments": {"seconds": 30}})
    )
    time.sleep(0.3)  # both calls are running
    server.proc.send_signal(signum)
    assert server.wait_exit(timeout=5) == 128 + signum
    assert server.responses_to(1) == []


def test_a_second_interrupt_ends_the_process_when_a_call_swallows_its_cancellation(server):
    server.request(echo("up"))
    server.send(modern_request(1, "tools/call", {"name": "fault_unstoppable", "arguments": {}}))
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert server.proc.poll() is None  # the first waits for the call, which will not end
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait_exit(timeout=5) == 128 + signal.SIGTERM


def observed_rows(env: dict[str, str]) -> dict[str, int]:
    found = rows(
        env["DATABASE_URL"],
        "SELECT target, SUM(count) FROM beammcp_django_observededge "
        "WHERE kind = 'invoke' AND source LIKE '%/server' GROUP BY target",
    )
    return {target: int(count) for target, count in found}


@pytest.mark.orm
def test_the_counts_of_a_stdio_process_are_written_when_it_ends(spawn, server_env):
    before = observed_rows(server_env)
    server = spawn(BEAMMCP_TEST_FLUSH_SECONDS="3600")  # only the exit flush can write them
    for request_id in range(3):
        server.request(echo(request_id))
    assert server.finish() == 0
    after = observed_rows(server_env)
    echoed = [target for target in after if target.endswith("/tool/echo")]
    assert echoed, after
    assert after[echoed[0]] - before.get(echoed[0], 0) == 3
