"""The bounded JSON decoder and the reply encoder (beammcp_django.protocol.wire)."""

from __future__ import annotations

import json

import pytest

from beammcp_django.protocol import jsonrpc, wire
from beammcp_django.protocol.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError


def refusal(data: bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        wire.decode(data)
    return caught.value


def nested_arrays(depth: int) -> bytes:
    """An object (level 1) holding arrays nested so the deepest level is ``depth``."""
    return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def nested_objects(depth: int) -> bytes:
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def nested_mixed(depth: int) -> bytes:
    """Objects and arrays alternating, so no run of '[' gives the depth away."""
    opens = []
    for level in range(depth):
        opens.append(b'{"k":' if level % 2 == 0 else b"[")
    closes = [b"}" if level % 2 == 0 else b"]" for level in reversed(range(depth))]
    return b"".join(opens[:-1]) + (b"{}" if (depth - 1) % 2 == 0 else b"[]") + b"".join(closes[1:])


# -- nesting -------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [nested_arrays, nested_objects, nested_mixed])
def test_a_message_nested_exactly_64_levels_deep_is_accepted(build):
    data = build(64)
    json.loads(data)  # the fixture itself is valid JSON
    assert isinstance(wire.decode(data), dict)


@pytest.mark.parametrize("build", [nested_arrays, nested_objects, nested_mixed])
def test_a_message_nested_65_levels_deep_is_refused_naming_the_limit(build):
    data = build(65)
    json.loads(data)
    error = refusal(data)
    assert error.code == INVALID_REQUEST
    assert "64" in error.message


def test_a_run_of_65_brackets_right_after_the_key_is_refused_before_parsing():
    error = refusal(b'{"a":' + b"[" * 65 + b"]" * 65 + b"}")
    assert error.code == INVALID_REQUEST
    assert "64" in error.message


def test_half_a_million_open_brackets_are_refused_as_too_deep():
    """The C decoder meets the recursion limit long before the end; its RecursionError is
    the depth refusal, never a parse error nor a crash."""
    error = refusal(b"[" * 500_000)
    assert error.code == INVALID_REQUEST
    assert error.message == "message nests deeper than 64 levels"


def test_half_a_million_open_brackets_inside_an_object_are_refused_as_too_deep():
    error = refusal(b'{"a":' + b"[" * 500_000)
    assert error.code == INVALID_REQUEST
    assert "64" in error.message


def test_half_a_million_brackets_separated_by_spaces_are_refused_as_too_deep():
    error = refusal(b'{"a":' + b"[ " * 500_000)
    assert error.code == INVALID_REQUEST
    assert "64" in error.message


def test_a_deep_alternation_of_objects_and_arrays_is_refused_as_too_deep():
    error = refusal(b'{"k":[' * 150_000)
    assert error.code == INVALID_REQUEST
    assert "64" in error.message


def test_a_run_of_brackets_inside_a_string_is_accepted():
    data = b'{"a":"' + b"[" * 1000 + b'"}'
    assert wire.decode(data) == {"a": "[" * 1000}


def test_a_run_of_brackets_inside_a_string_after_an_escaped_quote_is_accepted():
    data = b'{"k\\"ey":"x","v":"' + b"[" * 1000 + b'"}'
    assert wire.decode(data) == {'k"ey': "x", "v": "[" * 1000}


def test_brackets_inside_strings_do_not_count_towards_depth():
    inner = b'{"s":"' + b"[{" * 200 + b'"}'
    assert wire.decode(b'{"list":[' + inner + b"," + inner + b"]}")["list"][0]["s"] == "[{" * 200


# -- repeated keys -------------------------------------------------------------------------


def test_a_repeated_top_level_key_is_refused_naming_the_key():
    error = refusal(b'{"id":1,"id":2}')
    assert error.code == INVALID_REQUEST
    assert "'id'" in error.message


def test_a_repeated_key_in_a_nested_object_is_refused_naming_the_key():
    error = refusal(b'{"params":{"arguments":{"x":1,"y":2,"x":3}}}')
    assert error.code == INVALID_REQUEST
    assert "'x'" in error.message


def test_a_repeated_key_in_an_object_inside_an_array_is_refused_naming_the_key():
    error = refusal(b'{"a":[1,{"b":{"deep":1,"deep":1}}]}')
    assert error.code == INVALID_REQUEST
    assert "'deep'" in error.message


def test_a_repeated_key_hidden_behind_colons_in_strings_is_still_refused():
    error = refusal(b'{"url":"http://h:1/","n":{"k":"a:b","k":"c"}}')
    assert error.code == INVALID_REQUEST
    assert "'k'" in error.message


def test_a_repeated_key_with_odd_bytes_is_refused_without_echoing_it():
    odd = "<script>\u202e\u00e9"
    data = json.dumps({"x": 1}).replace('"x": 1', f'"{odd}":1,"{odd}":2').encode()
    error = refusal(data)
    assert error.code == INVALID_REQUEST
    assert "script" not in error.message
    assert "\u202e" not in error.message
    assert "not shown" in error.message


def test_a_very_long_repeated_key_is_not_echoed():
    key = "k" * 200
    error = refusal(f'{{"{key}":1,"{key}":2}}'.encode())
    assert key not in error.message


def test_keys_that_differ_only_by_escaping_are_the_same_key_and_refused():
    error = refusal(b'{"a":1,"\\u0061":2}')
    assert error.code == INVALID_REQUEST


def test_the_same_key_in_sibling_objects_is_not_a_repeat():
    assert wire.decode(b'{"a":{"k":1},"b":{"k":2},"c":[{"k":3},{"k":4}]}')["c"][1] == {"k": 4}


@pytest.mark.parametrize(
    "data",
    [
        b'{"url":"http://example.com:8080/a:b"}',
        b'{"a":{"time":"12:30:45"},"b":[{"c":"::"}]}',
        b'{"k:ey":"va:lue"}',
        b'{"a":"\\":\\""}',
    ],
)
def test_colons_inside_strings_do_not_cause_a_false_refusal(data):
    assert wire.decode(data) == json.loads(data)


# -- not JSON ------------------------------------------------------------------------------

SECRET = b"sk-live-TOPSECRET"


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":' + SECRET,
        b'{"a":"' + SECRET + b'"',
        b'{"a":1}' + SECRET,
        b"{'a': '" + SECRET + b"'}",
        b'{"a":"' + SECRET + b'\xff"}',
        b'{"a":"' + SECRET + b'\xc0\xaf"}',
        b'{"a":"' + SECRET + b'\xed\xa0\x80"}',
        b"\xef\xbb\xbf" + b'{"a":"' + SECRET + b'"}',
        b'{"a":NaN,"s":"' + SECRET + b'"}',
        b'{"a":Infinity,"s":"' + SECRET + b'"}',
        b'{"a":-Infinity,"s":"' + SECRET + b'"}',
        b"",
    ],
    ids=[
        "truncated",
        "unterminated-object",
        "trailing-garbage",
        "single-quotes",
        "invalid-utf8-byte",
        "overlong-utf8",
        "utf8-encoded-surrogate",
        "byte-order-mark",
        "nan",
        "infinity",
        "negative-infinity",
        "empty",
    ],
)
def test_bytes_that_are_not_utf8_json_are_a_parse_error_that_never_echoes_them(data):
    error = refusal(data)
    assert error.code == PARSE_ERROR
    assert "TOPSECRET" not in error.message
    assert "TOPSECRET" not in repr(jsonrpc.refusal(None, error))


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "array"),
        (b"[]", "array"),
        (b'"hello"', "a string"),
        (b"42", "a number"),
        (b"4.2", "a number"),
        (b"true", "a boolean"),
        (b"false", "a boolean"),
        (b"null", "null"),
    ],
)
def test_a_message_that_is_not_one_object_is_an_invalid_request_naming_its_type(data, named):
    error = refusal(data)
    assert error.code == INVALID_REQUEST
    assert named in error.message


def test_a_batch_is_refused_saying_batches_are_not_accepted():
    error = refusal(b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2}]')
    assert "batch" in error.message


# -- size ----------------------------------------------------------------------------------


def padded(total: int) -> bytes:
    head, tail = b'{"pad":"', b'"}'
    return head + b"x" * (total - len(head) - len(tail)) + tail


def test_a_message_of_exactly_1_mib_is_accepted():
    data = padded(wire.MAX_MESSAGE_BYTES)
    assert len(data) == 1_048_576
    assert len(wire.decode(data)["pad"]) == 1_048_576 - 10


def test_a_message_one_byte_over_1_mib_is_refused_naming_the_limit():
    error = refusal(padded(wire.MAX_MESSAGE_BYTES + 1))
    assert error.code == INVALID_REQUEST
    assert "1048576" in error.message


def test_an_oversized_message_is_refused_even_if_it_is_not_json():
    error = refusal(b"\xff" * (wire.MAX_MESSAGE_BYTES + 1))
    assert error.code == INVALID_REQUEST


# -- ordinary messages ---------------------------------------------------------------------


def test_an_ordinary_request_decodes_to_the_same_value_as_json_loads():
    data = (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add",'
        b'"arguments":{"a":1,"b":[true,false,null,1.5,"\\u00e9"]},'
        b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
    )
    assert wire.decode(data) == json.loads(data)


def test_json_literals_decode_to_the_python_singletons():
    value = wire.decode(b'{"t":true,"f":false,"n":null}')
    assert value["t"] is True
    assert value["f"] is False
    assert value["n"] is None


# -- encoding ------------------------------------------------------------------------------


def test_encode_produces_compact_ascii_even_for_non_ascii_text():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "h\u00e9llo\U0001f600"}}
    data = wire.encode(message)
    data.decode("ascii")
    assert b" " not in data
    assert json.loads(data) == message


def test_encode_escapes_a_lone_surrogate_and_decode_refuses_it_by_name():
    # A host's answer may hold one (it is written as an ASCII escape, valid JSON); a
    # client's message may not: it is not text (RFC 7493 §2.1).
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "a\ud800b\udfffc"}}
    data = wire.encode(message)
    data.decode("ascii")
    with pytest.raises(ProtocolError) as refused:
        wire.decode(data)
    assert refused.value.code == INVALID_REQUEST
    assert "lone surrogate" in refused.value.message


def test_an_escaped_surrogate_pair_decodes_to_its_character():
    assert wire.decode(b'{"e":"\\ud83d\\ude00"}') == {"e": "\U0001f600"}


def test_encode_refuses_nan_rather_than_emitting_invalid_json():
    with pytest.raises(ValueError):
        wire.encode({"result": float("nan")})
