"""An internal error under ``DEBUG`` (``ServerOptions.debug``): its ``data`` names the cause
and the host's line, as Django's error pages do for a view; never a traceback or a repr, and
nothing at all without ``DEBUG``."""

from __future__ import annotations

import inspect
import json
from typing import Any

from beammcp_django.protocol.echo import MAX_ECHO
from beammcp_django.protocol.errors import INTERNAL_ERROR
from beammcp_django.protocol.jsonrpc import LOGGED
from beammcp_django.protocol.task_wire import TaskCall

from .conftest import MemoryCatalog, _crash, call, make_server, request


def fault_of(reply: dict[str, Any] | None) -> dict[str, Any]:
    assert reply is not None
    error = reply["error"]
    assert error["code"] == INTERNAL_ERROR
    assert error["message"] == LOGGED
    return error


def line_of(function: Any, text: str) -> int:
    """The line of ``function`` whose source holds ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(n for n, line in enumerate(lines) if text in line)


def test_without_debug_an_internal_error_says_only_that_the_server_logged_it(catalog):
    reply = call(make_server(catalog), request("tools/call", {"name": "crash", "arguments": {}}))
    assert "data" not in fault_of(reply)


def test_with_debug_a_raised_exception_is_named_with_the_host_line_that_raised_it(catalog):
    reply = call(
        make_server(catalog, debug=True), request("tools/call", {"name": "crash", "arguments": {}})
    )
    assert fault_of(reply)["data"] == {
        "cause": "RuntimeError: database password is hunter2",
        "where": f"{_crash.__module__}._crash:{line_of(_crash, 'raise RuntimeError')}",
    }


def test_with_debug_an_answer_off_contract_is_placed_at_the_handler_that_gave_it(catalog):
    arguments = {"mode": "broken"}
    reply = call(
        make_server(catalog, debug=True),
        request("tools/call", {"name": "weather", "arguments": arguments}),
    )
    data = fault_of(reply)["data"]
    assert data["cause"].startswith("HostContractError: tool 'weather' broke its outputSchema")
    dispatch = MemoryCatalog.dispatch
    assert data["where"] == (
        f"{dispatch.__module__}.MemoryCatalog.dispatch:{dispatch.__code__.co_firstlineno}"
    )


def test_with_debug_a_library_s_exception_is_placed_where_the_host_called_it(catalog):
    def parse(arguments: dict[str, Any], context: Any) -> Any:
        return json.loads("{not json")

    catalog.handlers["crash"] = parse
    reply = call(
        make_server(catalog, debug=True), request("tools/call", {"name": "crash", "arguments": {}})
    )
    data = fault_of(reply)["data"]
    assert data["cause"].startswith("JSONDecodeError: Expecting property name")
    assert data["where"] == (f"{__name__}.{parse.__qualname__}:{line_of(parse, 'json.loads')}")


def test_with_debug_the_message_is_one_line_cut_to_the_bounded_echo(catalog):
    def shout(arguments: dict[str, Any], context: Any) -> Any:
        raise ValueError("line one\nline two\r\n" + "x" * 2000)

    catalog.handlers["crash"] = shout
    reply = call(
        make_server(catalog, debug=True), request("tools/call", {"name": "crash", "arguments": {}})
    )
    cause = fault_of(reply)["data"]["cause"]
    assert cause.startswith("ValueError: line one line two xxx")
    assert len(cause) == MAX_ECHO and cause.endswith("...")
    assert "\n" not in cause and "\r" not in cause


def test_with_debug_a_task_s_fault_carries_the_same_data(catalog):
    import asyncio

    server = make_server(catalog, debug=True)
    call_ = TaskCall(
        tool="crash",
        arguments={},
        owner="",
        principal=None,
        scopes=None,
        client_capabilities={},
        input_responses={},
        state=None,
    )
    outcome = asyncio.run(server.run_task(call_))
    assert outcome.error is not None
    assert outcome.error["data"]["cause"] == "RuntimeError: database password is hunter2"
    assert outcome.error["data"]["where"].startswith(f"{_crash.__module__}._crash:")
    outcome = asyncio.run(make_server(catalog).run_task(call_))
    assert outcome.error is not None and "data" not in outcome.error
