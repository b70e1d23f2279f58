"""``manage.py mcp_stdio`` as a client sees it: a real subprocess, bytes in and bytes out.

The server runs with ``tests.stdio_settings`` (the sample catalog plus ``tests.faultapp``)
against a fresh SQLite database. Tests that only need distinct request ids share one
process; tests about stdout as a whole, the legacy handshake, memory or exit get their own.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support import MODERN, REPO_ROOT, manage
from tests.support import message as modern_request

from .conftest import (
    FAULT_SETTINGS,
    LEGACY,
    REPLY_TIMEOUT,
    SERVER_COMMAND,
    StdioProcess,
    encode,
    legacy_request,
    memory_kib,
)

pytestmark = pytest.mark.slow

MAX_LINE = 1_048_576
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# Kept in step with tests/faultapp/mcp.py (not imported: that module registers on the site).
SECRET = "fault-secret-7f3a9c-do-not-leak"
MARKER = "FAULTAPP-STRAY-OUTPUT"


def padded_line(message: dict, length: int) -> bytes:
    """``message`` as JSON followed by spaces, exactly ``length`` bytes (newline excluded)."""
    body = json.dumps(message, separators=(",", ":")).encode()
    assert len(body) <= length
    return body + b" " * (length - len(body))


def echo_line_of_length(request_id: str, length: int) -> tuple[bytes, str]:
    """A modern echo call whose line is exactly ``length`` bytes; also the text it carries."""
    empty = json.dumps(
        modern_request(request_id, "tools/call", {"name": "echo", "arguments": {"text": ""}}),
        separators=(",", ":"),
    ).encode()
    text = "x" * (length - len(empty))
    line = json.dumps(
        modern_request(request_id, "tools/call", {"name": "echo", "arguments": {"text": text}}),
        separators=(",", ":"),
    ).encode()
    assert len(line) == length
    return line, text


def echo(request_id: str | int, text: str = "still serving") -> dict:
    return modern_request(request_id, "tools/call", {"name": "echo", "arguments": {"text": text}})


def assert_served(server: StdioProcess, request_id: str, text: str = "still serving") -> None:
    reply = server.request(echo(request_id, text))
    assert reply["result"]["content"] == [{"type": "text", "text": text}]


# -- 2026-07-28 requests ------------------------------------------------------------------


class TestModernRequests:
    def test_server_discover_lists_both_revisions_with_result_type_complete(self, shared_server):
        reply = shared_server.request(modern_request("discover-1", "server/discover"))

        result = reply["result"]
        assert reply["jsonrpc"] == "2.0"
        assert result["resultType"] == "complete"
        assert result["supportedVersions"] == [MODERN, LEGACY, "2025-06-18"]
        assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
        assert result["ttlMs"] == 60_000
        assert result["cacheScope"] == "public"
        server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert server_info["name"] == "beammcp-sample-weather"

    def test_tools_list_names_the_demo_and_fault_tools_with_cache_hints(self, shared_server):
        reply = shared_server.request(modern_request("list-1", "tools/list"))

        result = reply["result"]
        names = {tool["name"] for tool in result["tools"]}
        assert {"echo", "get_forecast", "record_observation", "fault_explode"} <= names
        assert result["resultType"] == "complete"
        # delete_observation is shown only to permitted users: the list depends on who asks.
        assert "delete_observation" not in names
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "private")

    def test_tools_call_echo_answers_the_text_with_result_type_complete(self, shared_server):
        reply = shared_server.request(echo("echo-1", "héllo, wörld ☀"))

        assert reply["result"]["content"] == [{"type": "text", "text": "héllo, wörld ☀"}]
        assert reply["result"]["resultType"] == "complete"
        assert "isError" not in reply["result"]

    def test_get_forecast_answers_structured_content_matching_its_output_schema(
        self, shared_server
    ):
        reply = shared_server.request(
            modern_request(
                "forecast-1", "tools/call", {"name": "get_forecast", "arguments": {"city": "oslo"}}
            )
        )

        structured = reply["result"]["structuredContent"]
        assert structured["city"] == "Oslo"
        assert [day["day"] for day in structured["days"]] == [1, 2, 3]
        assert json.loads(reply["result"]["content"][0]["text"]) == structured

    def test_resources_read_weather_stations_answers_json_text_with_cache_hints(
        self, shared_server
    ):
        reply = shared_server.request(
            modern_request("read-1", "resources/read", {"uri": "weather://stations"})
        )

        result = reply["result"]
        assert result["resultType"] == "complete"
        assert "ttlMs" in result
        assert result["cacheScope"] in ("public", "private")
        (contents,) = result["contents"]
        assert contents["uri"] == "weather://stations"
        assert contents["mimeType"] == "application/json"
        assert set(json.loads(contents["text"])) == {
            "amsterdam",
            "lisbon",
            "nairobi",
            "oslo",
            "sydney",
        }

    def test_prompts_get_forecast_briefing_answers_messages_with_result_type_complete(
        self, shared_server
    ):
        reply = shared_server.request(
            modern_request(
                "prompt-1",
                "prompts/get",
                {"name": "forecast_briefing", "arguments": {"city": "lisbon", "tone": "dry"}},
            )
        )

        result = reply["result"]
        assert result["resultType"] == "complete"
        assert result["description"] == "Briefing for Lisbon"
        first, second = result["messages"]
        assert first["role"] == "user"
        assert "dry weather briefing for Lisbon" in first["content"]["text"]
        assert second["content"]["type"] == "resource_link"

    @pytest.mark.orm
    def test_a_tool_writing_through_the_orm_is_read_back_by_a_resource_template(
        self, shared_server
    ):
        recorded = shared_server.request(
            modern_request(
                "record-1",
                "tools/call",
                {
                    "name": "record_observation",
                    "arguments": {"city": "nairobi", "temperature_c": 23.5},
                },
            )
        )
        assert recorded["result"]["content"][0]["text"] == "Recorded 23.5 °C for Nairobi."

        read = shared_server.request(
            modern_request("record-2", "resources/read", {"uri": "weather://observations/nairobi"})
        )
        observations = json.loads(read["result"]["contents"][0]["text"])["observations"]
        assert 23.5 in [row["temperature_c"] for row in observations]

    def test_ping_is_not_a_2026_method(self, shared_server):
        reply = shared_server.request(modern_request("ping-modern", "ping"))

        assert reply["error"]["code"] == METHOD_NOT_FOUND


# -- 2025-11-25: the handshake era --------------------------------------------------------


def test_a_legacy_client_initializes_then_calls_tools_and_pings_without_result_type(server):
    before = server.request(legacy_request("early", "tools/list"))
    assert before["error"]["code"] == INVALID_PARAMS  # no _meta and no handshake yet

    initialized = server.request(
        legacy_request(
            "init",
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "legacy-test-client", "version": "1.0"},
            },
        )
    )
    result = initialized["result"]
    assert result["protocolVersion"] == LEGACY
    assert result["serverInfo"]["name"] == "beammcp-sample-weather"
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "logging"}
    assert "resultType" not in result

    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    called = server.request(
        legacy_request("call", "tools/call", {"name": "echo", "arguments": {"text": "old times"}})
    )
    assert called["result"] == {"content": [{"type": "text", "text": "old times"}]}

    pong = server.request(legacy_request("ping", "ping"))
    assert pong["result"] == {}

    # A 2026-07-28 request on the same process is still answered in its own revision.
    modern = server.request(echo("modern-after-legacy"))
    assert modern["result"]["resultType"] == "complete"

    # The notification got no reply: every line so far answers one of the five requests.
    assert [message.get("id") for message in server.history] == [
        "early",
        "init",
        "call",
        "ping",
        "modern-after-legacy",
    ]


def test_a_legacy_ping_before_initialize_is_answered_with_an_empty_result(server):
    # 2025-11-25 lifecycle: a client may ping before the server answered initialize.
    pong = server.request(legacy_request("early-ping", "ping"))

    assert pong["result"] == {}


# -- stdout carries protocol messages only ------------------------------------------------


def test_every_stdout_line_is_one_json_rpc_message_even_when_tools_write_to_stdout(server):
    modes = ("print", "fd", "dunder", "partial")
    for number, mode in enumerate(modes):
        server.send(
            modern_request(
                f"stray-{number}",
                "tools/call",
                {"name": "fault_stray_output", "arguments": {"mode": mode}},
            )
        )
        server.send(echo(f"after-stray-{number}"))
    server.send_raw(b"this line is not json\n")
    for number in range(len(modes)):
        server.response(f"stray-{number}")
        server.response(f"after-stray-{number}")
    server.stderr_contains(f"{MARKER}-partial".encode())

    assert server.finish() == 0

    stdout = bytes(server.stdout_bytes)
    assert stdout.endswith(b"\n")
    lines = stdout[:-1].split(b"\n")
    assert len(lines) == 2 * len(modes) + 1
    for line in lines:
        message = json.loads(line)  # each line is exactly one JSON value...
        assert type(message) is dict  # ...and that value is one JSON-RPC message
        assert message["jsonrpc"] == "2.0"
        assert ("result" in message) != ("error" in message)
    assert MARKER.encode() not in stdout
    assert b"forged" not in stdout
    stderr = bytes(server.stderr_bytes)
    for mode in modes:
        assert f"{MARKER}-{mode}".encode() in stderr
    assert b'"id":"forged"' in stderr


# -- the line-length bound ----------------------------------------------------------------


class TestLineBound:
    def test_an_echo_line_of_exactly_one_mebibyte_is_served_in_full(self, shared_server):
        line, text = echo_line_of_length("cap-echo", MAX_LINE)

        shared_server.send_raw(line + b"\n")

        reply = shared_server.response("cap-echo")
        assert reply["result"]["content"] == [{"type": "text", "text": text}]

    def test_a_request_padded_with_spaces_to_exactly_one_mebibyte_is_served(self, shared_server):
        line = padded_line(modern_request("cap-padded", "server/discover"), MAX_LINE)

        shared_server.send_raw(line + b"\n")

        assert shared_server.response("cap-padded")["result"]["resultType"] == "complete"

    def test_a_line_one_byte_over_the_bound_is_refused_once_without_an_id_and_the_next_is_served(
        self, shared_server
    ):
        seen = len(shared_server.errors_without_id())
        line = padded_line(modern_request("cap-plus-one", "server/discover"), MAX_LINE + 1)

        shared_server.send_raw(line + b"\n")

        refusal = shared_server.next_error_without_id(seen)
        assert "id" not in refusal
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert_served(shared_server, "after-cap-plus-one")
        assert shared_server.responses_to("cap-plus-one") == []
        assert len(shared_server.errors_without_id()) == seen + 1

    def test_the_tail_of_an_overlong_line_is_discarded_not_served_as_a_request(self, shared_server):
        seen = len(shared_server.errors_without_id())
        smuggled = encode(echo("smuggled-tail"))[:-1]
        # The first MAX_LINE bytes are blanks; a server that cut the line there and read on
        # would find a whole request in the tail.
        shared_server.send_raw(b" " * MAX_LINE + smuggled + b"\n")

        assert shared_server.next_error_without_id(seen)["error"]["code"] == INVALID_REQUEST
        assert_served(shared_server, "after-smuggle")
        assert shared_server.responses_to("smuggled-tail") == []
        assert len(shared_server.errors_without_id()) == seen + 1

    def test_a_fifty_mebibyte_line_is_never_buffered_past_the_bound(self, server):
        assert server.request(modern_request("warm", "server/discover"))["result"]
        # The first call compiles the catalog and starts a worker thread: not this test's.
        assert_served(server, "warm-call")
        pid = server.pid
        try:  # reset the peak (VmHWM) to the current RSS, so VmHWM measures this test only
            Path(f"/proc/{pid}/clear_refs").write_text("5")
            peak_is_fresh = True
        except OSError:
            peak_is_fresh = False
        rss_before = memory_kib(pid, "VmRSS")
        peak_before = memory_kib(pid, "VmHWM")
        sampled = [rss_before]
        sending = threading.Event()
        sending.set()

        def sample() -> None:
            while sending.is_set():
                sampled.append(memory_kib(pid, "VmRSS"))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            server.send_raw(b'{"jsonrpc":"2.0","id":"huge","method":"x","params":{"p":"')
            chunk = b"y" * (1 << 20)
            for _ in range(50):
                server.send_raw(chunk, timeout=30)
            server.send_raw(b'"}}\n')
            refusal = server.next_error_without_id(0, timeout=30)
            assert_served(server, "after-huge")
        finally:
            sending.clear()
            sampler.join(5)

        rss_after = memory_kib(pid, "VmRSS")
        peak_after = memory_kib(pid, "VmHWM")
        limit_kib = 4 * 1024
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert server.responses_to("huge") == []
        assert rss_after - rss_before < limit_kib, (rss_before, rss_after)
        assert max(sampled) - rss_before < limit_kib, (rss_before, max(sampled))
        growth_of_peak = peak_after - (rss_before if peak_is_fresh else peak_before)
        assert growth_of_peak < limit_kib, (rss_before, peak_before, peak_after)


# -- malformed input ----------------------------------------------------------------------


class TestMalformedInput:
    def test_a_malformed_json_line_gets_a_parse_error_without_an_id_that_echoes_nothing(
        self, shared_server
    ):
        seen = len(shared_server.errors_without_id())
        secret_input = b"UNIQUE-INPUT-BYTES-4411"
        shared_server.send_raw(
            b'{"jsonrpc":"2.0","id":"broken","method":"tools/call","params":' + secret_input + b"\n"
        )

        refusal = shared_server.next_error_without_id(seen)
        assert "id" not in refusal
        assert refusal["error"]["code"] == PARSE_ERROR
        assert secret_input.decode() not in json.dumps(refusal)
        assert "tools/call" not in json.dumps(refusal)
        assert_served(shared_server, "after-malformed")

    def test_a_line_that_is_not_utf8_gets_a_parse_error_without_an_id(self, shared_server):
        seen = len(shared_server.errors_without_id())
        shared_server.send_raw(b'{"jsonrpc":"2.0","id":"latin","method":"ping\xff\xfe"}\n')

        refusal = shared_server.next_error_without_id(seen)
        assert refusal["error"]["code"] == PARSE_ERROR
        assert_served(shared_server, "after-not-utf8")

    def test_a_batch_array_is_refused_with_invalid_request_without_an_id(self, shared_server):
        seen = len(shared_server.errors_without_id())
        shared_server.send_raw(encode([echo("batched-1"), echo("batched-2")]))

        refusal = shared_server.next_error_without_id(seen)
        assert "id" not in refusal
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert_served(shared_server, "after-batch")
        assert shared_server.responses_to("batched-1") == []
        assert shared_server.responses_to("batched-2") == []

    def test_blank_lines_and_crlf_endings_are_tolerated(self, shared_server):
        shared_server.send_raw(b"\n\r\n   \n")
        shared_server.send_raw(encode(echo("crlf"))[:-1] + b"\r\n")

        assert shared_server.response("crlf")["result"]["resultType"] == "complete"


# -- host faults --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "logged"),
    [
        ("fault_explode", f"RuntimeError: host fault carrying {SECRET}"),
        ("fault_explode_async", f"ValueError: async host fault carrying {SECRET}"),
    ],
)
def test_a_raising_tool_gets_internal_error_with_its_id_and_the_traceback_goes_to_stderr(
    shared_server, tool, logged
):
    reply = shared_server.request(
        modern_request(f"{tool}-1", "tools/call", {"name": tool, "arguments": {}})
    )

    assert reply["id"] == f"{tool}-1"
    assert reply["error"]["code"] == INTERNAL_ERROR
    answered = json.dumps(reply)
    assert SECRET not in answered
    assert "fault-secret" not in answered
    assert "Error" not in reply["error"]["message"]  # no exception class name either
    assert "Traceback" not in answered
    shared_server.stderr_contains(logged.encode())
    stderr = bytes(shared_server.stderr_bytes)
    assert stderr.rfind(b"Traceback (most recent call last)", 0, stderr.find(logged.encode())) >= 0
    assert SECRET.encode() not in shared_server.stdout_bytes
    assert_served(shared_server, f"after-{tool}")


# -- cancellation -------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["fault_nap", "fault_doze", "fault_stubborn"])
def test_a_cancelled_call_gets_no_response_and_later_requests_are_served(shared_server, tool):
    sleep_for = 1.0
    call_id = f"cancel-{tool}"
    started = time.monotonic()
    shared_server.send(
        modern_request(call_id, "tools/call", {"name": tool, "arguments": {"seconds": sleep_for}})
    )
    time.sleep(0.3)  # the call is running in the server by now
    shared_server.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call_id, "reason": "the user gave up"},
        }
    )
    # Cancelling an id that is not running is ignored.
    shared_server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "nope"}}
    )

    assert_served(shared_server, f"after-{call_id}")
    # Had the call not been cancelled, its answer would be out by `sleep_for`: wait past it.
    time.sleep(max(0.0, started + sleep_for + 0.8 - time.monotonic()))
    assert_served(shared_server, f"later-{call_id}")
    assert shared_server.responses_to(call_id) == []
    assert shared_server.responses_to("nope") == []


def test_a_cancellation_is_honoured_while_every_concurrency_slot_is_busy(spawn):
    server = spawn(BEAMMCP_TEST_MAX_CONCURRENT="2")
    # Started first: the 1.5 s window below measures the freed slot, not the process start
    # (1.3 to 2.3 s on a loaded machine, 2026-12-01).
    assert_served(server, "started")
    for number in (1, 2):
        server.send(
            modern_request(
                f"busy-{number}", "tools/call", {"name": "fault_nap", "arguments": {"seconds": 2.5}}
            )
        )
    server.send(echo("waiting-for-a-slot"))
    time.sleep(0.3)
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "busy-1"}}
    )

    # Cancelling busy-1 frees its slot: the waiting echo is served long before busy-2 ends.
    assert server.response("waiting-for-a-slot", timeout=1.5)["result"]
    assert server.responses_to("busy-1") == []


# -- progress -----------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["fault_progress", "fault_progress_async"])
def test_progress_notifications_carry_the_token_and_precede_the_response(shared_server, tool):
    token = f"progress-token-{tool}"
    reply = shared_server.request(
        modern_request(
            f"{tool}-call", "tools/call", {"name": tool, "arguments": {}}, progressToken=token
        )
    )
    assert reply["result"]["content"] == [{"type": "text", "text": "progressed"}]

    history = list(shared_server.history)
    response_at = history.index(reply)
    progress = [
        (position, message["params"])
        for position, message in enumerate(history)
        if message.get("method") == "notifications/progress"
        and message["params"].get("progressToken") == token
    ]
    assert len(progress) >= 3
    assert all(position < response_at for position, _ in progress)
    assert [params["progress"] for _, params in progress] == [1, 2, 3]
    assert all(params["total"] == 3 for _, params in progress)
    assert all("id" not in history[position] for position, _ in progress)


def test_a_call_without_a_progress_token_gets_no_progress_notifications(shared_server):
    def progress_count() -> int:
        return sum(m.get("method") == "notifications/progress" for m in shared_server.history)

    before = progress_count()
    reply = shared_server.request(
        modern_request("no-token", "tools/call", {"name": "fault_progress", "arguments": {}})
    )

    assert reply["result"]["content"][0]["text"] == "progressed"
    assert_served(shared_server, "after-no-token")
    assert progress_count() == before


def test_progress_reaches_a_legacy_client_that_sent_a_token(server):
    server.request(legacy_request("init", "initialize", {"protocolVersion": LEGACY}))
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    reply = server.request(
        legacy_request(
            "legacy-progress",
            "tools/call",
            {"name": "fault_progress", "arguments": {}, "_meta": {"progressToken": 7}},
        )
    )

    assert "resultType" not in reply["result"]
    tokens = [
        m["params"]["progressToken"]
        for m in server.history[: server.history.index(reply)]
        if m.get("method") == "notifications/progress"
    ]
    assert tokens == [7, 7, 7]


# -- end of input -------------------------------------------------------------------------


def test_end_of_input_makes_an_idle_server_exit_with_status_zero_promptly(server):
    assert_served(server, "before-eof")
    started = time.monotonic()

    status = server.finish(timeout=5)

    assert status == 0
    assert time.monotonic() - started < 5


def test_end_of_input_before_any_request_exits_with_status_zero_and_empty_stdout(server):
    assert server.finish(timeout=REPLY_TIMEOUT) == 0
    assert bytes(server.stdout_bytes) == b""


def test_end_of_input_after_a_final_line_without_newline_still_answers_it(server):
    server.send_raw(encode(echo("unterminated"))[:-1])

    assert server.finish(timeout=5) == 0
    assert server.response("unterminated", timeout=1)["result"]["resultType"] == "complete"


def test_end_of_input_lets_a_running_call_finish_within_the_grace_period(server):
    server.send(
        modern_request(
            "graceful", "tools/call", {"name": "fault_nap", "arguments": {"seconds": 0.5}}
        )
    )
    time.sleep(0.2)

    assert server.finish(timeout=5) == 0
    assert server.response("graceful", timeout=1)["result"]["content"][0]["text"] == "woke up"


GRACE_SECONDS = 2.0  # STDIO_SHUTDOWN_GRACE_SECONDS, the default the sample keeps


@pytest.mark.parametrize(
    "tool",
    [
        "fault_nap",
        "fault_doze",
        "fault_stubborn",
    ],
)
def test_end_of_input_during_an_endless_call_exits_with_status_zero_after_the_grace_period(
    server, tool
):
    call_id = f"endless-{tool}"
    assert_served(server, "started")  # the window below times the grace, not the start
    server.send(modern_request(call_id, "tools/call", {"name": tool, "arguments": {"seconds": 60}}))
    time.sleep(0.3)
    started = time.monotonic()
    try:
        status = server.finish(timeout=GRACE_SECONDS + 3.0)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()  # a failing run must not wait for the 60 s call

    assert status == 0
    assert time.monotonic() - started < GRACE_SECONDS + 3.0
    assert server.responses_to(call_id) == []


# -- refusing to start --------------------------------------------------------------------


def test_a_broken_catalog_makes_mcp_stdio_refuse_to_start_naming_the_check_ids(server_env):
    env = {**server_env, "BEAMMCP_TEST_CATALOG": "tests.broken_catalog.catalog"}
    assert env["DJANGO_SETTINGS_MODULE"] == FAULT_SETTINGS

    completed = subprocess.run(
        SERVER_COMMAND,
        cwd=REPO_ROOT,
        env=env,
        input=encode(echo("never")),
        capture_output=True,
        timeout=30,
        check=False,
    )

    assert completed.returncode != 0
    assert completed.stdout == b""
    stderr = completed.stderr.decode()
    assert "beammcp.E002" in stderr
    assert "beammcp.E010" in stderr
    assert "'prompts'" in stderr
    assert "bad name" in stderr


def test_the_http_routing_warning_is_not_printed_by_the_stdio_server(spawn, server_env):
    """W002 is about serving HTTP; over stdio it means nothing, so mcp_stdio silences it (the
    same settings make ``manage.py check`` warn)."""
    server = spawn(BEAMMCP_TEST_PLAIN_ASGI="1")
    assert_served(server, "after-checks")
    assert b"W002" not in bytes(server.stderr_bytes)
    checked = manage({**server_env, "BEAMMCP_TEST_PLAIN_ASGI": "1"}, "check")
    assert b"beammcp.W002" in checked.stderr
