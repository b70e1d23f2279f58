"""Properties of the bounded decoder (``beammcp_django.protocol.wire``), held by hypothesis.

One oracle decides every case: ``json.loads`` on the strictly UTF-8-decoded text, with
``NaN`` and ``Infinity`` refused, and the bounds applied in the decoder's order (size, then
syntax, with the first number past a 64-bit float's range or integer past CPython's digit
limit refused where it stands, then one object, then depth, then repeated keys, then a lone
surrogate in any string). Whatever the
bytes, ``wire.decode`` returns the oracle's value or refuses with a ``ProtocolError`` naming
the oracle's cause: the documented refusals are -32700 for bytes that are not UTF-8 JSON and
-32600 for a message over the size bound, holding a non-finite number, an over-long
integer or a lone surrogate, not one object, nested past ``MAX_DEPTH`` or repeating a key.
No other exception ever leaves it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from beammcp_django.protocol import wire
from beammcp_django.protocol.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError
from tests.support import examples

PROPERTY = settings(
    max_examples=examples(120),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VALUE = "value"
NOT_JSON = "not UTF-8 JSON"
TOO_LARGE = "over the size bound"
TOO_DEEP = "nested past the bound"
REPEATED = "a repeated key"
NON_FINITE = "a number past a 64-bit float's range"
LONE_SURROGATE = "a lone surrogate"
HUGE_INTEGER = "an integer past the digit limit"
_JSON_TYPE = {
    list: "an array",
    str: "a string",
    bool: "a boolean",
    type(None): "null",
    int: "a number",
    float: "a number",
}

Outcome = tuple[str, Any]


# -- the oracle ----------------------------------------------------------------------------


def not_an_object(kind: str) -> str:
    return f"not an object: {kind}"


def cause_of(refusal: ProtocolError) -> str:
    """The bound a refusal names, from its code and the words that name it; anything else
    is not a documented refusal and fails the test."""
    message = refusal.message
    if refusal.code == PARSE_ERROR and "not valid UTF-8 JSON" in message:
        return NOT_JSON
    if refusal.code == INVALID_REQUEST:
        if f"{wire.MAX_MESSAGE_BYTES}-byte limit" in message:
            return TOO_LARGE
        if f"deeper than {wire.MAX_DEPTH} levels" in message:
            return TOO_DEEP
        if "repeats the key" in message:
            return REPEATED
        if "outside the range of a 64-bit float" in message:
            return NON_FINITE
        if "lone surrogate" in message:
            return LONE_SURROGATE
        if f"integer of more than {sys.get_int_max_str_digits()} digits" in message:
            return HUGE_INTEGER
        if "batches are not accepted" in message:
            return not_an_object("an array")
        kind = re.fullmatch(r"message is (.+), not a JSON object", message)
        if kind is not None:
            return not_an_object(kind.group(1))
    raise AssertionError(f"an undocumented refusal: {refusal.code} {message!r}")


def decoded(data: bytes) -> Outcome:
    """What ``wire.decode`` does; any exception but ``ProtocolError`` propagates."""
    try:
        return (VALUE, wire.decode(data))
    except ProtocolError as refusal:
        return (cause_of(refusal), None)


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


class _Refused(Exception):
    def __init__(self, outcome: str) -> None:
        self.outcome = outcome


def _float_or_refuse(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(NON_FINITE)
    return value


def _int_or_refuse(text: str) -> int:
    if len(text.lstrip("-")) > sys.get_int_max_str_digits():
        raise _Refused(HUGE_INTEGER)
    return int(text)


def depth_of(value: Any) -> int:
    """Levels of nesting, counted without recursion (the object at the top is level 1)."""
    depth, level = 0, [value]
    while True:
        containers = [node for node in level if type(node) in (dict, list)]
        if not containers:
            return depth
        depth += 1
        level = [c for node in containers for c in (node.values() if type(node) is dict else node)]


def reference(data: bytes) -> Outcome:
    """What the bounds say, decided by ``json.loads`` the slow obvious way."""
    if len(data) > wire.MAX_MESSAGE_BYTES:
        return (TOO_LARGE, None)
    repeated = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        obj = dict(items)
        repeated = repeated or len(obj) != len(items)
        return obj

    try:
        text = data.decode("utf-8")
        value = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_constant=_refuse_constant,
            parse_float=_float_or_refuse,
            parse_int=_int_or_refuse,
        )
    except _Refused as refused:
        return (refused.outcome, None)
    except RecursionError:
        return (TOO_DEEP, None)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        return (NOT_JSON, None)
    if type(value) is not dict:
        return (not_an_object(_JSON_TYPE[type(value)]), None)
    if depth_of(value) > wire.MAX_DEPTH:
        return (TOO_DEEP, None)
    if repeated:
        return (REPEATED, None)
    if has_lone_surrogate(value):
        return (LONE_SURROGATE, None)
    return (VALUE, value)


def has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values with identical types, key order and the sign of zero."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if type(left) is list:
        return len(left) == len(right) and all(map(same, left, right))
    if type(left) is float:
        return left == right and math.copysign(1.0, left) == math.copysign(1.0, right)
    return left == right


def agrees(data: bytes) -> Outcome:
    """Decode ``data`` and require the oracle's outcome; returns it for further checks."""
    actual, expected = decoded(data), reference(data)
    assert actual[0] == expected[0], data[:300]
    if actual[0] == VALUE:
        assert same(actual[1], expected[1]), data[:300]
    return actual


# -- strategies ----------------------------------------------------------------------------

# Every code point, lone surrogates included, and the characters JSON gives a meaning to.
ANY_CHARACTER = st.characters(exclude_categories=())
JSON_SIGNIFICANT = st.sampled_from(list(':"\\/{}[], \t\n\r\x00\x1f\x7f\u2028\ufeff'))
STRINGS = st.text(st.one_of(ANY_CHARACTER, JSON_SIGNIFICANT), max_size=12)
KEYS = st.one_of(STRINGS, st.sampled_from(["id", "a", "k:1", "params", "\u00e9", 'q"uote']))
NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=False, allow_infinity=False),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)


# Members of a container wider than 16 (the decoder walks those level by level): scalars
# and small containers, so a wide level can still hold a deeper one.
WIDE_MEMBERS = st.one_of(
    SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(KEYS, SCALARS, max_size=2)
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(KEYS, children, max_size=5),
        st.lists(WIDE_MEMBERS, min_size=17, max_size=40),
        st.lists(WIDE_MEMBERS, min_size=17, max_size=30).map(
            lambda members: {f"w{i}": member for i, member in enumerate(members)}
        ),
    )


JSON_VALUES = st.recursive(SCALARS, _containers, max_leaves=40)
OBJECTS = st.dictionaries(KEYS, JSON_VALUES, max_size=6)
DUMP_STYLES = st.fixed_dictionaries(
    {
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\n")]),
        "indent": st.sampled_from([None, None, 1, "\t"]),
    }
)
WHITESPACE = st.sampled_from(["", "", " ", "\n", "\r\n\t "])
# Padding that takes a message past the length under which it is walked recursively.
PADDING = st.sampled_from([0, 0, 0, 9000])


def dumped(value: Any, style: dict[str, Any], around: str = "") -> bytes:
    """``value`` as ``json.dumps`` writes it; a lone surrogate left raw (``ensure_ascii``
    off) becomes the bytes UTF-8 forbids, as a careless client would send."""
    return (around + json.dumps(value, **style) + around).encode("utf-8", "surrogatepass")


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Fragments a hostile or broken client splices into valid JSON.
SPLICES = [
    b":",
    b'"',
    b"\\",
    b",",
    b"{",
    b"[",
    b"}",
    b"]",
    b"\xef\xbb\xbf",
    b"\\ud800",
    b"\\udc00\\ud800",
    b"\\u00",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"9" * 400,
    b"-0",
    b"01",
    b"1.",
    b".5",
    b" ",
    b"\x0c",
    b"\xc2\xa0",
    b"\x00",
    b"\xff",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b'"a":1,',
    b'"a":',
    b"true",
    b"[" * 70,
    b"{" * 70,
]


@st.composite
def near_json(draw: st.DrawFn) -> bytes:
    """Valid JSON with a few edits: truncation, byte flips, deletions and splices."""
    data = bytearray(dumped(draw(OBJECTS | JSON_VALUES), draw(DUMP_STYLES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        position = draw(st.integers(min_value=0, max_value=len(data)))
        edit = draw(st.sampled_from(["truncate", "flip", "delete", "splice", "splice"]))
        if edit == "truncate":
            del data[position:]
        elif edit == "flip" and position < len(data):
            data[position] ^= draw(st.integers(min_value=1, max_value=255))
        elif edit == "delete":
            del data[position : position + 1]
        elif edit == "splice":
            data[position:position] = draw(st.sampled_from(SPLICES))
    return bytes(data)


TOKENS = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        '"a"',
        '"b"',
        '"k:1"',
        '"\\u0061"',
        '"',
        "\\",
        "0",
        "-1",
        "2.5e3",
        "1e400",
        "true",
        "false",
        "null",
        "NaN",
        "-Infinity",
        " ",
        "\n",
        "\u00e9",
        "\ufeff",
    ]
)
TOKEN_SOUP = st.lists(TOKENS, max_size=40).map("".join)


# -- properties on hostile input -----------------------------------------------------------


@PROPERTY
@given(data=st.binary(max_size=400))
@example(data=b"\xef\xbb\xbf{}")
@example(data=b" \xff")
def test_arbitrary_bytes_are_decoded_or_refused_exactly_as_the_oracle_decides(data):
    agrees(data)


@PROPERTY
@given(data=near_json())
def test_valid_json_with_edits_is_decoded_or_refused_exactly_as_the_oracle_decides(data):
    agrees(data)


@PROPERTY
@given(text=TOKEN_SOUP, around=WHITESPACE)
@example(text='{"a":1e400}', around="")
@example(text='{"a":NaN}', around=" ")
@example(text='{"a":' + "9" * 4301 + "}", around="")  # past Python's int digit limit
def test_text_json_loads_accepts_within_the_bounds_is_accepted_with_the_same_value(text, around):
    """Token soup hits valid JSON often; json.loads is the judge of what is JSON."""
    agrees((around + text + around).encode("utf-8"))


# -- properties on generated JSON ----------------------------------------------------------


@PROPERTY
@given(value=OBJECTS | JSON_VALUES, style=DUMP_STYLES, around=WHITESPACE, padding=PADDING)
def test_a_generated_json_value_decodes_to_itself_or_is_refused_by_the_right_cause(
    value, style, around, padding
):
    if padding and type(value) is dict:
        value = {**value, "~padding": "x" * padding}
    data = dumped(value, style, around)
    outcome = agrees(data)
    if not is_utf8(data):
        assert outcome[0] == NOT_JSON  # a raw lone surrogate
    elif type(value) is not dict:
        assert outcome[0] == not_an_object(_JSON_TYPE[type(value)])
    elif depth_of(value) > wire.MAX_DEPTH:
        assert outcome[0] == TOO_DEEP
    elif has_lone_surrogate(value):
        assert outcome[0] == LONE_SURROGATE  # escaped, it decodes to one
    else:
        assert outcome[0] == VALUE
        assert same(outcome[1], value)


@st.composite
def nests(draw: st.DrawFn) -> tuple[bytes, int, bool]:
    """A chain of ``levels`` containers, objects and arrays in any order, some levels made
    wide by scalar siblings, the top maybe padded past the recursive walk's length."""
    levels = draw(st.integers(min_value=58, max_value=70) | st.sampled_from([1, 64, 65, 3000]))
    is_object = draw(st.lists(st.booleans(), min_size=levels, max_size=levels))
    top_is_object = draw(st.booleans() | st.just(True))
    is_object[0] = top_is_object
    # Wide levels anywhere, and often near the bottom, where the level walk's early stop
    # (every '{' and '[' accounted for) meets the bound.
    near_bottom = st.integers(min_value=max(0, levels - 4), max_value=levels - 1)
    wide = draw(
        st.dictionaries(
            st.integers(min_value=0, max_value=levels - 1) | near_bottom,
            st.integers(min_value=1, max_value=40) | st.just(40),
            max_size=3,
        )
    )
    innermost = draw(st.none() | (st.integers() | st.text(max_size=4)).map(json.dumps))
    padding = draw(PADDING)
    body = innermost
    for level in reversed(range(levels)):
        members = [] if body is None else [body]
        members += [str(number) for number in range(wide.get(level, 0))]
        if level == 0 and padding:
            members.append('"' + "x" * padding + '"')
        if is_object[level]:
            body = "{" + ",".join(f'"m{i}":{member}' for i, member in enumerate(members)) + "}"
        else:
            body = "[" + ",".join(members) + "]"
    return body.encode("ascii"), levels, top_is_object


@PROPERTY
@given(nest=nests())
@example(nest=(b'{"m0":' * 64 + b"{}" + b"}" * 64, 65, True))
def test_nesting_is_accepted_to_64_levels_and_refused_past_them(nest):
    data, levels, top_is_object = nest
    outcome = agrees(data)
    if top_is_object:
        assert outcome[0] == (TOO_DEEP if levels > wire.MAX_DEPTH else VALUE)


# An object as written, repeats allowed: a tuple of (key, spelled with \u escapes?, value).
REPEATABLE_KEYS = st.sampled_from(["a", "b", "dup", "k:1", "\u00e9", 'q"', "\u2028"])


WRITTEN_SCALARS = st.one_of(st.none(), st.integers(), st.sampled_from(["", "x:y", "{[", '"']))


def _written_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    members = st.tuples(REPEATABLE_KEYS, st.booleans(), children)
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(members, max_size=5).map(tuple),
        # Dense and wide: the level walk counts brackets and colons on these.
        st.lists(st.integers(min_value=0, max_value=9), min_size=33, max_size=60),
    )


WRITTEN_OBJECTS = st.lists(
    st.tuples(REPEATABLE_KEYS, st.booleans(), st.recursive(WRITTEN_SCALARS, _written_containers)),
    min_size=1,
    max_size=5,
).map(tuple)


def write(node: Any, separators: tuple[str, str]) -> str:
    comma, colon = separators
    if type(node) is tuple:
        return (
            "{"
            + comma.join(
                spell(key, escaped) + colon + write(value, separators)
                for key, escaped, value in node
            )
            + "}"
        )
    if type(node) is list:
        return "[" + comma.join(write(value, separators) for value in node) + "]"
    return json.dumps(node)


def spell(key: str, escaped: bool) -> str:
    """A key as JSON text, plainly or with every character a \\u escape (the same key)."""
    if escaped:
        return '"' + "".join(f"\\u{ord(char):04x}" for char in key) + '"'
    return json.dumps(key, ensure_ascii=False)


def repeats_a_key(node: Any) -> bool:
    if type(node) is tuple:
        keys = [key for key, _, _ in node]
        return len(set(keys)) != len(keys) or any(repeats_a_key(v) for _, _, v in node)
    if type(node) is list:
        return any(map(repeats_a_key, node))
    return False


@PROPERTY
@given(
    written=WRITTEN_OBJECTS,
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
    padding=PADDING,
)
@example(written=(("a", False, 1), ("a", True, 2)), separators=(",", ":"), padding=0)
def test_a_key_repeated_at_any_depth_is_refused_and_only_a_repeat_is(written, separators, padding):
    if padding:
        written = (*written, ("~padding", False, "x" * padding))
    outcome = agrees(write(written, separators).encode("utf-8"))
    assert outcome[0] == (REPEATED if repeats_a_key(written) else VALUE)


@PROPERTY
@given(key=KEYS, nested=st.booleans())
@example(key="params", nested=False)
@example(key="<script>", nested=True)
def test_a_repeated_key_is_named_only_when_it_is_short_and_plain(key, nested):
    spelled = json.dumps(key)
    repeat = "{" + spelled + ":1," + spelled + ":2}"
    data = ('{"x":[' + repeat + "]}" if nested else repeat).encode("utf-8")
    try:
        wire.decode(data)
    except ProtocolError as refusal:
        assert cause_of(refusal) == REPEATED
        if re.fullmatch(r"[A-Za-z0-9_.:/$@-]{1,64}", key):
            assert f"'{key}'" in refusal.message
        else:
            assert "not shown" in refusal.message
            assert f"'{key}'" not in refusal.message
    else:
        raise AssertionError("a repeated key was accepted")


@PROPERTY
@given(
    message=OBJECTS,
    before=st.text(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\ufeff", max_size=3),
    after=st.text(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\ufeff", max_size=3),
)
def test_only_the_four_json_whitespace_characters_may_surround_a_message(message, before, after):
    assume(not has_lone_surrogate(message))
    data = before.encode() + wire.encode(message) + after.encode()
    outcome = agrees(data)
    only_json_whitespace = not (before + after).strip(" \t\n\r")
    assert outcome[0] == (VALUE if only_json_whitespace else NOT_JSON)


@settings(PROPERTY, max_examples=examples(25))
@given(value=OBJECTS, style=DUMP_STYLES, overshoot=st.integers(min_value=-3, max_value=3))
def test_a_message_is_accepted_up_to_the_size_bound_and_refused_past_it(value, style, overshoot):
    assume(is_utf8(dumped(value, style)) and not has_lone_surrogate(value))
    short = dumped({**value, "~padding": ""}, style)
    filler = wire.MAX_MESSAGE_BYTES + overshoot - len(short)
    data = dumped({**value, "~padding": "x" * filler}, style)
    assert len(data) == wire.MAX_MESSAGE_BYTES + overshoot
    outcome = agrees(data)
    assert outcome[0] == (TOO_LARGE if overshoot > 0 else VALUE)


@PROPERTY
@given(message=OBJECTS)
def test_encode_round_trips_through_decode(message):
    assume(depth_of(message) <= wire.MAX_DEPTH and not has_lone_surrogate(message))
    data = wire.encode(message)
    assert data.isascii()
    assert same(wire.decode(data), message)


NUMBER_LITERALS = st.builds(
    lambda sign, digits, fraction, exponent: sign + digits + fraction + exponent,
    st.sampled_from(["", "-"]),
    st.one_of(
        st.from_regex(r"[1-9][0-9]{0,20}", fullmatch=True),
        st.integers(min_value=300, max_value=5000).map(lambda n: "9" * n),
        st.just("0"),
    ),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,20}", fullmatch=True)),
    st.one_of(
        st.just(""),
        st.integers(min_value=-1000, max_value=1000).map(lambda n: f"e{n:+d}"),
        st.sampled_from(["e308", "e309", "E-400", "e400"]),
    ),
)


@PROPERTY
@given(literal=NUMBER_LITERALS, nested=st.booleans())
@example(literal="1e400", nested=False)
@example(literal="-1e400", nested=True)
@example(literal="1" + "0" * 400 + ".0", nested=False)
@example(literal="1" + "0" * 5000, nested=True)
@example(literal="1.7976931348623157e308", nested=False)
def test_a_number_is_finite_when_decoded_or_refused_naming_its_range(literal, nested):
    data = (b'{"a":[' + literal.encode() + b"]}") if nested else b'{"n":' + literal.encode() + b"}"
    outcome = agrees(data)
    if outcome[0] == VALUE:
        number = outcome[1]["a"][0] if nested else outcome[1]["n"]
        assert type(number) is int or math.isfinite(number)
    else:
        assert outcome[0] in (NON_FINITE, HUGE_INTEGER)
