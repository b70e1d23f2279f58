"""Fault survival: host code that raises, hangs past CALL_TIMEOUT_SECONDS, answers off
contract or writes to stdout, a resource reader or a prompt that raises, and an authorization
hook that raises are each answered as documented (docs/transports.md), with nothing of the
exception's text, and the next request is served normally: over uvicorn, daphne and stdio.

On HTTP the next request goes over the same connection unless the refusal closed it, as the
documented pre-body refusals do. On stdio, standard output carries JSON-RPC lines only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import pytest

from tests.http.mcphttp_app.hooks import SECRET as HOOK_SECRET
from tests.http.mcphttp_support import (
    FAULT_SECRET,
    META_LOG_LEVEL,
    SERVER_KINDS,
    Response,
    ServerProcess,
    Wire,
    http_request,
    message,
)
from tests.stdio.conftest import StdioProcess
from tests.threat.threat_settings import CALL_TIMEOUT

pytestmark = pytest.mark.slow

INTERNAL_ERROR = {"code": -32603, "message": "internal error; the server logged it"}
DEADLINE_ERROR = {"code": -32603, "message": f"the host did not answer within {CALL_TIMEOUT:g} s"}
SECRETS = (FAULT_SECRET.encode(), HOOK_SECRET.encode())
CARRIERS = (*SERVER_KINDS, "stdio")
_SERIAL = itertools.count()


def fresh_id(label: str) -> str:
    """A request id no other request to the shared servers carries."""
    return f"{label}-{next(_SERIAL)}"


@dataclass
class Answer:
    """One reply as the client received it: the HTTP status (None on stdio), the JSON-RPC
    message, and every byte that carried it (to look for leaked text)."""

    status: int | None
    reply: dict[str, Any]
    raw: bytes
    notifications: list[dict[str, Any]]
    closes: bool = False


class Client(Protocol):
    def ask(self, value: dict[str, Any], add: tuple[tuple[str, str], ...] = ()) -> Answer: ...

    def log(self) -> bytes: ...


class HttpClient:
    """A keep-alive connection to a real server, reopened only when a response said close."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.wire: Wire | None = None
        self.log_start = server.log_path.stat().st_size

    def ask(self, value: dict[str, Any], add: tuple[tuple[str, str], ...] = ()) -> Answer:
        if self.wire is None:
            self.wire = Wire(self.server.port)
        self.wire.send(http_request(value, add=add))
        response = self.wire.response(timeout=CALL_TIMEOUT + 10)
        if response.says_close:
            self.close()
        messages = _json_rpc(response)
        return Answer(
            response.status, messages[-1], _raw(response), messages[:-1], response.says_close
        )

    def log(self) -> bytes:
        """What the server logged since this client was made."""
        return self.server.log_path.read_bytes()[self.log_start :]

    def close(self) -> None:
        if self.wire is not None:
            self.wire.close()
            self.wire = None


class StdioClient:
    """A ``manage.py mcp_stdio`` process shared by the module's tests."""

    def __init__(self, process: StdioProcess) -> None:
        self.process = process
        self.log_start = len(process.stderr_bytes)

    def ask(self, value: dict[str, Any], add: tuple[tuple[str, str], ...] = ()) -> Answer:
        start = len(self.process.history)
        reply = self.process.request(value, timeout=CALL_TIMEOUT + 10)
        # The tests ask one thing at a time: what arrived meanwhile belongs to this request.
        notifications = [item for item in self.process.history[start:] if "method" in item]
        return Answer(None, reply, json.dumps(reply).encode(), notifications)

    def log(self) -> bytes:
        return bytes(self.process.stderr_bytes[self.log_start :])


def logged(client: Client, needle: bytes, timeout: float = 10.0) -> bool:
    """Whether the server logs ``needle`` within ``timeout``: its log is read by another
    thread (stdio) or written beside the reply (HTTP), so it may land just after the reply."""
    deadline = time.monotonic() + timeout
    while needle not in client.log():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _json_rpc(response: Response) -> list[dict[str, Any]]:
    """The notifications a stream carried, then the reply."""
    if response.content_type == "text/event-stream":
        return response.events()
    return [response.json()]


def _raw(response: Response) -> bytes:
    head = "".join(f"{name}: {value}\n" for name, value in response.headers)
    return head.encode("latin-1") + response.body


@contextlib.contextmanager
def connected(server: ServerProcess) -> Iterator[HttpClient]:
    """A client of ``server`` for one test; the server must be alive afterwards."""
    http = HttpClient(server)
    try:
        yield http
    finally:
        http.close()
    assert server.alive(), f"{server.kind} died:\n{server.log_tail()}"


@pytest.fixture(params=CARRIERS)
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    if request.param == "stdio":
        process: StdioProcess = request.getfixturevalue("stdio_server")
        yield StdioClient(process)
        _assert_stdout_is_protocol_only(process)
        return
    with connected(request.getfixturevalue(f"threat_{request.param}")) as http:
        yield http


@pytest.fixture(params=SERVER_KINDS)
def http_client(request: pytest.FixtureRequest) -> Iterator[HttpClient]:
    with connected(request.getfixturevalue(f"threat_{request.param}")) as http:
        yield http


def _assert_stdout_is_protocol_only(process: StdioProcess) -> None:
    stdout = bytes(process.stdout_bytes)
    assert stdout.endswith(b"\n"), stdout[-200:]
    for line in stdout.split(b"\n")[:-1]:
        parsed = json.loads(line)
        assert parsed.get("jsonrpc") == "2.0", line[:200]
        assert "result" in parsed or "error" in parsed or "method" in parsed, line[:200]
    for secret in SECRETS:
        assert secret not in stdout


def call(request_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    return message(request_id, "tools/call", {"name": tool, "arguments": arguments})


def assert_next_request_is_served(client: Client, label: str) -> None:
    text = f"still serving after {label}"
    request_id = fresh_id(f"next-{label}")
    answer = client.ask(call(request_id, "echo", text=text))
    assert answer.status in (None, 200)
    assert answer.reply["id"] == request_id
    assert answer.reply["result"]["content"] == [{"type": "text", "text": text}]


def assert_internal_error(answer: Answer, request_id: str | None, error: dict[str, Any]) -> None:
    assert answer.status in (None, 500)
    expected = {"jsonrpc": "2.0", "error": error}
    if request_id is not None:  # refused before the body was read: no id to answer with
        expected["id"] = request_id
    assert answer.reply == expected
    for secret in SECRETS:
        assert secret not in answer.raw


@pytest.mark.parametrize("tool", ["fault_explode", "fault_explode_async"])
def test_a_raising_tool_gets_internal_error_without_its_text_and_the_next_call_is_served(
    client, tool
):
    request_id = fresh_id(tool)
    assert_internal_error(client.ask(call(request_id, tool)), request_id, INTERNAL_ERROR)
    assert logged(client, FAULT_SECRET.encode()), "the exception goes to the server's log"
    assert_next_request_is_served(client, tool)


@pytest.mark.parametrize(
    "tool", ["fault_stubborn", "fault_nap"], ids=["sync-thread", "async-coroutine"]
)
def test_a_tool_hanging_past_the_call_timeout_gets_internal_error_naming_the_limit(client, tool):
    request_id = fresh_id(tool)
    # The sync tool's worker thread sleeps on after the deadline; the caller is released.
    answer = client.ask(call(request_id, tool, seconds=CALL_TIMEOUT + 3))
    assert_internal_error(answer, request_id, DEADLINE_ERROR)
    assert_next_request_is_served(client, tool)


@pytest.mark.parametrize("mode", ["object", "unencodable", "nan", "cycle"])
def test_an_off_contract_tool_answer_gets_internal_error_and_the_next_call_is_served(client, mode):
    request_id = fresh_id(f"off-contract-{mode}")
    answer = client.ask(call(request_id, "fault_off_contract", mode=mode))
    assert_internal_error(answer, request_id, INTERNAL_ERROR)
    assert_next_request_is_served(client, f"off-contract-{mode}")


def test_a_notification_json_cannot_carry_is_dropped_and_the_call_answers_normally(client):
    request_id = fresh_id("log-off-contract")
    answer = client.ask(
        message(
            request_id,
            "tools/call",
            {"name": "fault_log_off_contract", "arguments": {"token": request_id}},
            **{META_LOG_LEVEL: "info"},
        )
    )
    assert answer.status in (None, 200)
    assert answer.reply["result"]["content"] == [{"type": "text", "text": "logged"}]
    logged = [
        item["params"]["data"]
        for item in answer.notifications
        if item["method"] == "notifications/message"
    ]
    assert logged == [{"token": request_id}]
    assert_next_request_is_served(client, "log-off-contract")


@pytest.mark.parametrize("mode", ["print", "fd", "dunder", "partial"])
def test_a_tool_writing_to_stdout_is_answered_normally_and_the_next_call_is_served(client, mode):
    request_id = fresh_id(f"stray-{mode}")
    answer = client.ask(call(request_id, "fault_stray_output", mode=mode))
    assert answer.status in (None, 200)
    assert answer.reply["result"]["content"] == [{"type": "text", "text": f"wrote {mode}"}]
    assert b"FAULTAPP-STRAY-OUTPUT" not in answer.raw
    assert_next_request_is_served(client, f"stray-{mode}")


def test_a_raising_resource_reader_gets_internal_error_and_the_next_call_is_served(client):
    request_id = fresh_id("read")
    answer = client.ask(message(request_id, "resources/read", {"uri": "fault://explode"}))
    assert_internal_error(answer, request_id, INTERNAL_ERROR)
    assert logged(client, FAULT_SECRET.encode())
    assert_next_request_is_served(client, "resource")


def test_a_raising_prompt_gets_internal_error_and_the_next_call_is_served(client):
    request_id = fresh_id("prompt")
    answer = client.ask(message(request_id, "prompts/get", {"name": "fault_explode"}))
    assert_internal_error(answer, request_id, INTERNAL_ERROR)
    assert logged(client, FAULT_SECRET.encode())
    assert_next_request_is_served(client, "prompt")


def test_a_raising_authorize_hook_gets_500_internal_error_and_closes_the_connection(
    http_client,
):
    answer = http_client.ask(
        call("hook", "echo", text="never reaches the tool"),
        add=(("X-Mcphttp-Authorize", "raise"),),
    )
    assert_internal_error(answer, None, INTERNAL_ERROR)
    assert answer.closes, "a refusal before the body is read closes the connection"
    assert logged(http_client, HOOK_SECRET.encode())
    assert_next_request_is_served(http_client, "authorize-hook")


def test_a_raising_body_hook_gets_500_internal_error_and_keeps_the_connection(http_client):
    answer = http_client.ask(
        call("body-hook", "echo", text="never reaches the tool"),
        add=(("X-Mcphttp-Body", "raise"),),
    )
    assert_internal_error(answer, None, INTERNAL_ERROR)
    assert not answer.closes, "a refusal after the body is read keeps the connection"
    assert logged(http_client, HOOK_SECRET.encode())
    assert_next_request_is_served(http_client, "body-hook")


ESCAPING_KINDS = [
    "StopIteration",
    "StopAsyncIteration",
    "GeneratorExit",
    "KeyboardInterrupt",
    "SystemExit",
]


@pytest.mark.parametrize(
    ("tool", "kind"),
    # A worker thread: StopIteration is refused by asyncio futures (the call was never
    # answered), and a BaseException rising out of the thread would end it; nothing cancels
    # a thread, so a CancelledError there is the host's too. The event loop: SystemExit and
    # KeyboardInterrupt rising out of a task would stop it.
    [("fault_raise", kind) for kind in (*ESCAPING_KINDS, "CancelledError")]
    + [("fault_raise_async", kind) for kind in ESCAPING_KINDS],
)
def test_every_exception_host_code_raises_is_internal_error_and_the_server_serves_on(
    client, tool, kind
):
    request_id = fresh_id(f"{tool}-{kind}")
    answer = client.ask(call(request_id, tool, kind=kind))
    assert_internal_error(answer, request_id, INTERNAL_ERROR)
    assert_next_request_is_served(client, f"{tool}-{kind}")


def test_a_call_cut_off_by_its_deadline_sends_nothing_after_its_answer_and_sees_cancelled(
    client,
):
    token = fresh_id("late")
    request_id = fresh_id("late-call")
    answer = client.ask(
        message(
            request_id,
            "tools/call",
            {
                "name": "fault_late_reports",
                "arguments": {"seconds": CALL_TIMEOUT + 0.5, "token": token},
            },
            progressToken=token,
            **{META_LOG_LEVEL: "debug"},
        )
    )
    # Over HTTP the progress before the deadline made the answer a stream (200).
    assert answer.reply == {"jsonrpc": "2.0", "id": request_id, "error": DEADLINE_ERROR}
    assert [item["params"]["progress"] for item in answer.notifications] == [1]
    # The worker thread goes on past the answer; what it then reports is dropped.
    assert logged(client, f"FAULTAPP-LATE-REPORTS {token} cancelled=True".encode())
    time.sleep(0.3)
    assert_next_request_is_served(client, "late-reports")
    if isinstance(client, StdioClient):
        late = [
            item
            for item in client.process.history
            if item.get("params", {}).get("progressToken") == token
            or item.get("params", {}).get("data") == "after the deadline"
        ]
        assert [item["params"].get("progress") for item in late] == [1]
    assert b"never retrieved" not in client.log()
    assert b"Traceback" not in client.log().split(b"FAULTAPP-LATE-REPORTS")[-1]
