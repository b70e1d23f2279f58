"""Every reply the core writes fits the ``schema.json`` of the revision it speaks.

The two revisions' ``Tool`` differ: 2025-11-25 restricts ``inputSchema`` and ``outputSchema``
to object schemas whose properties are objects, and ``structuredContent`` to an object; a tool
that 2026-07-28 serves as declared is shaped for 2025-11-25 (``legacy_tools.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from beammcp_django.protocol.catalog import ToolResult, ToolSpec
from beammcp_django.protocol.legacy_tools import legacy_tool, output_schema_fits
from beammcp_django.protocol.request import LegacySession
from beammcp_django.protocol.revisions import LEGACY, MODERN
from tests.wire_schema import problems

from .conftest import MemoryCatalog, call, legacy_request, make_server, request

LIST_OUTPUT = {"type": "array", "items": {"type": "integer"}}
BOOLEAN_PROPERTIES = {
    "type": "object",
    "properties": {"anything": True, "nothing": False, "n": {"type": "integer"}},
}


class ShapesCatalog(MemoryCatalog):
    """The memory catalog plus tools whose schemas 2025-11-25 cannot take as declared."""

    def __init__(self) -> None:
        super().__init__()
        self.tools = (
            *self.tools,
            ToolSpec("primes", {"type": "object"}, output_schema=LIST_OUTPUT),
            ToolSpec("loose", BOOLEAN_PROPERTIES, output_schema=BOOLEAN_PROPERTIES),
            ToolSpec("scalar", {"type": "object"}),
        )
        self.handlers["primes"] = lambda arguments, context: ToolResult(structured=[2, 3, 5])
        self.handlers["loose"] = lambda arguments, context: ToolResult(structured={"n": 1})
        self.handlers["scalar"] = lambda arguments, context: ToolResult(structured=7)


def legacy_session(server) -> LegacySession:
    session = LegacySession()
    reply = call(
        server,
        legacy_request(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
            id=0,
        ),
        session=session,
    )
    assert problems(LEGACY, "initialize", reply) == []
    return session


def ask(server, revision: str, session: LegacySession, method: str, params: dict | None = None):
    if revision == MODERN:
        return call(server, request(method, params))
    return call(server, legacy_request(method, params), session=session)


@pytest.fixture
def shaped():
    server = make_server(ShapesCatalog(), legacy=True)
    return server, legacy_session(server)


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
def test_tools_list_fits_the_schema_of_each_revision(shaped, revision):
    server, session = shaped
    reply = ask(server, revision, session, "tools/list")
    assert problems(revision, "tools/list", reply) == []


def test_a_tool_whose_output_schema_is_not_an_object_is_listed_without_it_at_2025_11_25(shaped):
    server, session = shaped
    legacy = {
        tool["name"]: tool for tool in ask(server, LEGACY, session, "tools/list")["result"]["tools"]
    }
    modern = {
        tool["name"]: tool for tool in ask(server, MODERN, session, "tools/list")["result"]["tools"]
    }
    assert modern["primes"]["outputSchema"] == LIST_OUTPUT
    assert "outputSchema" not in legacy["primes"]
    assert legacy["weather"]["outputSchema"] == modern["weather"]["outputSchema"]


def test_boolean_property_subschemas_are_written_as_the_object_schemas_that_mean_the_same():
    tool = legacy_tool(
        ToolSpec("loose", BOOLEAN_PROPERTIES, output_schema=BOOLEAN_PROPERTIES).to_wire()
    )
    expected = {"anything": {}, "nothing": {"not": {}}, "n": {"type": "integer"}}
    assert tool["inputSchema"]["properties"] == expected
    assert tool["outputSchema"]["properties"] == expected
    assert BOOLEAN_PROPERTIES["properties"]["anything"] is True  # the declaration is untouched


@pytest.mark.parametrize(
    ("schema", "fits"),
    [
        (None, True),
        ({"type": "object"}, True),
        ({"type": "object", "properties": {"a": True}}, True),
        ({"type": "array"}, False),
        ({"properties": {"a": {}}}, False),
        ({"type": ["object", "null"]}, False),
        ({"anyOf": [{"type": "object"}]}, False),
    ],
)
def test_which_output_schemas_2025_11_25_can_carry(schema, fits):
    assert output_schema_fits(schema) is fits


@pytest.mark.parametrize(("tool", "value"), [("primes", [2, 3, 5]), ("scalar", 7)])
def test_a_non_object_structured_result_at_2025_11_25_is_json_text_without_structured_content(
    shaped, tool, value
):
    server, session = shaped
    reply = ask(server, LEGACY, session, "tools/call", {"name": tool, "arguments": {}})
    assert problems(LEGACY, "tools/call", reply) == []
    result = reply["result"]
    assert "structuredContent" not in result
    assert result["content"] == [{"type": "text", "text": json.dumps(value)}]


@pytest.mark.parametrize("tool", ["primes", "scalar", "loose", "weather"])
def test_the_same_calls_at_2026_07_28_carry_structured_content_and_fit_the_schema(shaped, tool):
    server, session = shaped
    reply = ask(server, MODERN, session, "tools/call", {"name": tool, "arguments": {}})
    assert problems(MODERN, "tools/call", reply) == []
    assert "structuredContent" in reply["result"]


def test_an_object_result_of_a_tool_with_an_object_output_schema_keeps_it_at_2025_11_25(shaped):
    server, session = shaped
    reply = ask(server, LEGACY, session, "tools/call", {"name": "weather", "arguments": {}})
    assert problems(LEGACY, "tools/call", reply) == []
    assert reply["result"]["structuredContent"] == {"celsius": 21.5}


def replies_of_every_method(server, revision: str, session: LegacySession) -> list[tuple[str, Any]]:
    calls: list[tuple[str, dict[str, Any] | None]] = [
        ("tools/list", None),
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        ("tools/call", {"name": "add", "arguments": {"a": "x"}}),
        ("tools/call", {"name": "nope", "arguments": {}}),
        ("tools/call", {"name": "crash", "arguments": {}}),
        ("tools/call", {"name": "refuse", "arguments": {}}),
        ("resources/list", None),
        ("resources/templates/list", None),
        ("resources/read", {"uri": "config://app"}),
        ("resources/read", {"uri": "config://binary"}),
        ("resources/read", {"uri": "nowhere://at/all"}),
        ("prompts/list", None),
        ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "A"},
            },
        ),
        ("no/such/method", None),
    ]
    calls.append(("server/discover", None) if revision == MODERN else ("ping", None))
    return [(method, ask(server, revision, session, method, params)) for method, params in calls]


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
def test_a_reply_to_every_method_fits_the_schema(shaped, revision):
    server, session = shaped
    for method, reply in replies_of_every_method(server, revision, session):
        assert problems(revision, method, reply) == [], (method, reply)
