"""Whole numbers reach the host as ``int`` (``protocol/whole_numbers.py``): JSON Schema counts
``2.0`` as an integer, so a literal ``2.0`` or ``1e0`` passes ``"type": "integer"``, and the
host that declared an integer must not be handed a ``float``, wherever the schema puts the
integer (nested properties, array items, a ``$ref``), at either revision."""

from __future__ import annotations

from typing import Any

import pytest

from beammcp_django.protocol import wire
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.errors import INVALID_PARAMS
from beammcp_django.protocol.request import LegacySession
from beammcp_django.protocol.whole_numbers import whole_numbers

from .conftest import MemoryCatalog, call, legacy_request, make_server, request
from .test_server_legacy import handshake

DEEP_SCHEMA = {
    "type": "object",
    "$defs": {"count": {"type": "integer", "minimum": 0}},
    "properties": {
        "days": {"type": "integer"},
        "window": {"type": "object", "properties": {"hours": {"$ref": "#/$defs/count"}}},
        "steps": {"type": "array", "items": {"type": "integer"}},
        "pairs": {"type": "array", "items": {"type": "array", "items": {"$ref": "#/$defs/count"}}},
        "ratio": {"type": "number"},
    },
    "additionalProperties": False,
}
# What a client writes: whole numbers as fractions and exponents, one real fraction.
SENT = (
    b'{"days": 2.0, "window": {"hours": 1e0}, "steps": [1, 2.0, -3.0E0],'
    b' "pairs": [[0.0, 4e1]], "ratio": 0.5}'
)
RECEIVED = {
    "days": 2,
    "window": {"hours": 1},
    "steps": [1, 2, -3],
    "pairs": [[0, 40]],
    "ratio": 0.5,
}


def kinds(value: Any) -> Any:
    """``value`` with every number replaced by its type's name: ``2 == 2.0`` hides the bug."""
    if isinstance(value, dict):
        return {key: kinds(item) for key, item in value.items()}
    if isinstance(value, list):
        return [kinds(item) for item in value]
    return type(value).__name__


def deep_catalog() -> MemoryCatalog:
    catalog = MemoryCatalog()
    catalog.tools = (*catalog.tools, ToolSpec("deep", DEEP_SCHEMA))
    catalog.handlers["deep"] = lambda arguments, context: "ok"
    return catalog


def received(catalog: MemoryCatalog) -> dict[str, Any]:
    (dispatched,) = [entry for entry in catalog.calls if entry[:2] == ("dispatch", "deep")]
    return dispatched[2]


def arguments_as_sent() -> dict[str, Any]:
    """The arguments as the wire decoder reads the client's bytes: floats, as ``json`` does."""
    decoded = wire.decode(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + SENT + b"}}")
    return decoded["params"]["a"]


def test_the_wire_reads_whole_number_literals_as_floats_the_schema_admits_as_integers():
    assert kinds(arguments_as_sent())["days"] == "float"  # what the host was handed before


def test_a_modern_call_hands_the_host_ints_wherever_the_schema_types_an_integer():
    catalog = deep_catalog()
    server = make_server(catalog)
    params = {"name": "deep", "arguments": arguments_as_sent()}
    reply = call(server, request("tools/call", params))
    assert reply is not None and "error" not in reply and not reply["result"].get("isError"), reply
    assert received(catalog) == RECEIVED
    assert kinds(received(catalog)) == kinds(RECEIVED)
    assert kinds(RECEIVED)["ratio"] == "float"


def test_a_legacy_session_call_hands_the_host_ints_too():
    catalog = deep_catalog()
    server = make_server(catalog, legacy=True)
    session = LegacySession()
    handshake(server, session)
    params = {"name": "deep", "arguments": arguments_as_sent()}
    reply = call(server, legacy_request("tools/call", params, id=2), session=session)
    assert reply is not None and "error" not in reply and not reply["result"].get("isError"), reply
    assert kinds(received(catalog)) == kinds(RECEIVED)


def test_a_fraction_where_an_integer_is_declared_is_still_refused_by_name():
    catalog = deep_catalog()
    params = {"name": "deep", "arguments": {"days": 2.5}}
    reply = call(make_server(catalog), request("tools/call", params))
    assert reply is not None and reply["result"]["isError"] is True
    assert "arguments/days" in reply["result"]["content"][0]["text"]
    assert [entry for entry in catalog.calls if entry[:2] == ("dispatch", "deep")] == []


def test_a_prompt_argument_is_text_and_a_number_for_it_is_refused_by_name():
    # Prompt arguments are strings at both revisions: 2.0 never reaches get_prompt.
    catalog = MemoryCatalog()
    params = {"name": "greet", "arguments": {"name": 2.0}}
    reply = call(make_server(catalog), request("prompts/get", params))
    assert reply is not None and reply["error"]["code"] == INVALID_PARAMS
    assert "arguments/name" in reply["error"]["message"]
    assert [entry for entry in catalog.calls if entry[0] == "get_prompt"] == []


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"a": 1.0}, {"a": 1}),
        ({"a": -0.0}, {"a": 0}),
        ({"a": 1e300}, {"a": int(1e300)}),
        ({"a": [1.5, 2.0]}, {"a": [1.5, 2]}),
        ({"a": {"b": [{"c": 3.0}]}}, {"a": {"b": [{"c": 3}]}}),
        ({"a": True, "b": None, "c": "2.0"}, {"a": True, "b": None, "c": "2.0"}),
    ],
)
def test_whole_numbers_converts_every_whole_float_and_nothing_else(given, expected):
    converted = whole_numbers(given)
    assert converted == expected and kinds(converted) == kinds(expected)


def test_arguments_with_no_whole_float_are_the_same_object():
    arguments = {"text": "hi", "n": 3, "x": 0.25, "items": [1, "a", 0.5]}
    assert whole_numbers(arguments) is arguments
    assert whole_numbers(arguments)["items"] is arguments["items"]
