"""No error sends back more than a bounded, plain part of what the client sent (echo.py).

Each slot a client fills and an error may name (the method, a tool or prompt name, a URI, the
path to an argument, a repeated key, the protocol version) is filled with a hostile value
(markup, newlines, quotes, a megabyte long) and with a long plain one; the refusal must stay
small and carry none of the hostile characters.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beammcp_django.protocol import echo, wire
from beammcp_django.protocol.errors import ProtocolError
from tests.support import examples

from .conftest import call, make_server, request

# An error's own words plus one echoed value: fixed text is well under this.
BOUND = 400 + echo.MAX_ECHO
HOSTILE = '<script>"\n\\' * 20_000
PLAIN = "a" * 5_000


def nested(value: Any, keys: list[str]) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def refusals(filler: str) -> list[dict[str, Any]]:
    server = make_server()
    deep_keys = [filler[:64] + str(level) for level in range(60)]
    messages = [
        request(filler),
        request("tools/call", {"name": filler, "arguments": {}}),
        request("prompts/get", {"name": filler}),
        request("resources/read", {"uri": filler}),
        request("resources/read", {"uri": "file:///docs/" + filler + "/x"}),
        request("resources/read", {"uri": "nowhere://" + filler}),
        request("tools/call", {"name": "order", "arguments": nested(1, ["lines", *deep_keys])}),
        request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2, filler: 3}}),
        request("tools/list", **{"io.modelcontextprotocol/protocolVersion": filler}),
        request("completion/complete", {"ref": {"type": "ref/prompt", "name": filler}}),
    ]
    replies = [call(server, message) for message in messages]
    # JSON-RPC errors, and the tool errors that name invalid arguments.
    return [reply for reply in replies if "error" in reply or reply["result"].get("isError")]


def shown(reply: dict[str, Any]) -> str:
    """What a reply shows beyond its id (the id is echoed as sent, by JSON-RPC's rule)."""
    return json.dumps({key: value for key, value in reply.items() if key != "id"})


@pytest.mark.parametrize("filler", [HOSTILE, PLAIN], ids=["hostile", "long-plain"])
def test_every_refusal_echoes_a_bounded_plain_part_of_the_input_at_most(filler):
    replies = refusals(filler)
    assert len(replies) == 10
    for reply in replies:
        text = shown(reply)
        assert len(text) <= BOUND, text[:300]
        assert "<script>" not in text
        assert "\\n" not in text.replace("\\\\n", "")


def test_a_plain_uri_within_the_bound_is_echoed_in_data_and_a_longer_one_is_not():
    server = make_server()
    short = "nowhere://" + "a" * 100
    reply = call(server, request("resources/read", {"uri": short}))
    assert reply["error"]["data"] == {"uri": short}
    long = "nowhere://" + "a" * echo.MAX_ECHO
    assert "data" not in call(server, request("resources/read", {"uri": long}))["error"]
    odd = "nowhere://a b\n<c>"
    assert "data" not in call(server, request("resources/read", {"uri": odd}))["error"]


def test_a_plain_tool_name_of_128_characters_is_named_and_one_of_129_is_not():
    server = make_server()
    assert "a" * 128 in call(server, request("tools/call", {"name": "a" * 128}))["error"]["message"]
    assert (
        "a" * 129
        not in call(server, request("tools/call", {"name": "a" * 129}))["error"]["message"]
    )


def test_a_deep_argument_path_is_elided_to_its_start_and_its_last_segment():
    written = echo.path("arguments", [f"k{index:03d}" * 10 for index in range(60)])
    assert len(written) <= echo.MAX_PATH
    assert written.startswith("arguments/k000")
    assert "/.../" in written
    assert written.endswith("k059" * 10)


def test_a_repeated_key_is_named_only_when_plain_and_short():
    for key, named in (("id", True), ("k" * 64, True), ("k" * 65, False), ("<a>", False)):
        data = json.dumps({"a": 1}).replace('"a"', f'"{key}"').encode()
        data = data[:-1] + f',"{key}":2}}'.encode()
        with pytest.raises(ProtocolError) as refused:
            wire.decode(data)
        assert (key in refused.value.message) is named


@settings(max_examples=examples(200), deadline=None, database=None)
@given(value=st.text(max_size=700))
def test_whatever_an_echoed_value_holds_only_the_fixed_alphabets_come_back(value):
    for shown_value in (echo.name(value), echo.key(value), echo.uri(value)):
        if shown_value is not None:
            assert shown_value == value
            assert len(value) <= echo.MAX_ECHO
            assert not set(value) & set(' "<>\\\n\r\t\x00')
    assert len(echo.path("arguments", value.split("/"))) <= echo.MAX_PATH
