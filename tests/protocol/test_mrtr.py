"""Multi-round-trip requests (2026-07-28) in the core: InputRequired shapes, capability
filtering, requestState sealed and reopened through the server's codec, refusals by name."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from beammcp_django.protocol import inputs
from beammcp_django.protocol.catalog import InputRequired, ToolSpec
from beammcp_django.protocol.errors import ProtocolError
from beammcp_django.protocol.round_trips import InvalidState
from beammcp_django.protocol.server import Server, ServerOptions

from .conftest import CURSOR_KEY, meta

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class PlainCodec:
    """A test codec: state as JSON plus its binding; tampering shows as a changed token."""

    def seal(self, state: Any, binding: str) -> str:
        return json.dumps([binding, state])

    def open(self, token: str, binding: str) -> Any:
        try:
            sealed_binding, state = json.loads(token)
        except ValueError:
            raise InvalidState("failed its integrity check") from None
        if sealed_binding != binding:
            raise InvalidState("was issued for another request")
        return state


class AskingCatalog:
    """One tool that asks for a name (and a sample) and greets on the retry."""

    tools = (
        ToolSpec("greet", {"type": "object"}),
        ToolSpec(
            "needs_sampling",
            {"type": "object"},
            required_client_capabilities={"sampling": {}},
        ),
    )
    resources = ()
    prompts = ()

    def __init__(self) -> None:
        self.contexts: list[Any] = []

    def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        self.contexts.append(context)
        answer = context.input_responses.get("user")
        if context.request_state == "asked" and answer is not None:
            return f"Hello, {answer['content']['name']}!"
        return InputRequired(
            requests={
                "user": inputs.elicit("Your name?", NAME_FORM),
                "hint": inputs.sample(
                    [{"role": "user", "content": {"type": "text", "text": "?"}}], 10
                ),
            },
            state="asked",
        )

    def read_resource(self, match: Any, context: Any) -> Any:
        raise AssertionError("not used")

    def get_prompt(self, name: str, arguments: Any, context: Any) -> Any:
        raise AssertionError("not used")


def server(catalog: AskingCatalog, codec: Any = None, **options: Any) -> Server:
    return Server(
        catalog,
        ServerOptions(name="t", version="1", **options),
        cursor_key=CURSOR_KEY,
        state_codec=codec if codec is not None else PlainCodec(),
    )


def call_tool(srv: Server, capabilities: dict[str, Any], **params: Any) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": params.pop("name", "greet"),
            "arguments": {},
            **params,
            "_meta": meta(**{"io.modelcontextprotocol/clientCapabilities": capabilities}),
        },
    }
    return asyncio.run(srv.handle(message))


def test_an_input_required_result_carries_its_requests_and_sealed_state_and_no_cache_hints():
    reply = call_tool(server(AskingCatalog()), {"elicitation": {}, "sampling": {}})
    result = reply["result"]
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"user", "hint"}
    assert result["inputRequests"]["user"]["method"] == "elicitation/create"
    assert "id" not in result["inputRequests"]["user"]
    assert "jsonrpc" not in result["inputRequests"]["user"]
    assert isinstance(result["requestState"], str)
    assert "ttlMs" not in result and "cacheScope" not in result
    assert "io.modelcontextprotocol/serverInfo" in result["_meta"]


def test_input_requests_the_client_cannot_answer_are_left_out():
    result = call_tool(server(AskingCatalog()), {"sampling": {}})["result"]
    assert set(result["inputRequests"]) == {"hint"}


def test_when_every_input_request_needs_a_missing_capability_and_no_state_it_is_32021():
    class Stateless(AskingCatalog):
        def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
            return InputRequired(requests={"user": inputs.elicit("?", NAME_FORM)})

    reply = call_tool(server(Stateless()), {})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_the_retry_hands_the_host_its_verified_state_and_the_answers():
    catalog = AskingCatalog()
    srv = server(catalog)
    first = call_tool(srv, {"elicitation": {}})["result"]
    answers = {"user": {"action": "accept", "content": {"name": "Ada"}}}
    second = call_tool(
        srv, {"elicitation": {}}, inputResponses=answers, requestState=first["requestState"]
    )["result"]
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "Hello, Ada!"
    assert catalog.contexts[-1].request_state == "asked"


def test_a_tampered_state_is_refused_32602_before_the_host_runs():
    catalog = AskingCatalog()
    srv = server(catalog)
    reply = call_tool(srv, {"elicitation": {}}, requestState="not-a-state-we-sealed")
    assert reply["error"]["code"] == -32602
    assert "requestState failed its integrity check" in reply["error"]["message"]
    assert catalog.contexts == []


def test_a_state_sealed_for_other_arguments_is_refused():
    catalog = AskingCatalog()
    srv = server(catalog)
    state = call_tool(srv, {"elicitation": {}})["result"]["requestState"]
    reply = call_tool(srv, {"elicitation": {}}, arguments={"other": 1}, requestState=state)
    assert reply["error"]["code"] == -32602
    assert "another request" in reply["error"]["message"]


def test_an_answer_that_is_not_an_object_is_refused_by_name():
    reply = call_tool(server(AskingCatalog()), {"elicitation": {}}, inputResponses={"user": 5})
    assert reply["error"]["code"] == -32602
    assert "inputResponses" in reply["error"]["message"]


def test_a_state_with_no_codec_on_the_server_is_refused():
    srv = Server(AskingCatalog(), ServerOptions(name="t", version="1"), cursor_key=CURSOR_KEY)
    reply = call_tool(srv, {"elicitation": {}}, requestState="anything")
    assert reply["error"]["code"] == -32602


def test_a_tool_that_needs_a_capability_is_refused_32021_before_it_runs():
    catalog = AskingCatalog()
    reply = call_tool(server(catalog), {"elicitation": {}}, name="needs_sampling")
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert catalog.contexts == []


def test_input_required_at_2025_11_25_is_a_host_fault():
    srv = server(AskingCatalog(), legacy=True)
    from beammcp_django.protocol.request import LegacySession

    session = LegacySession()
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}},
    }
    asyncio.run(srv.handle(init, session=session))
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet"}}
    reply = asyncio.run(srv.handle(call, session=session))
    assert reply["error"]["code"] == -32603


def test_protocol_error_is_what_the_codec_failure_becomes():
    assert issubclass(InvalidState, Exception)
    assert not issubclass(InvalidState, ProtocolError)
