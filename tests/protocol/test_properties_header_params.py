"""Properties of the ``Mcp-Param-*`` / ``Mcp-Name`` header values, held by hypothesis: the
``=?base64?...?=`` sentinel decoding (``decode_header_value``, in the HTTP transport) and the
comparison of a decoded header with the body value it mirrors (``HeaderParameter.matches``).

A value a client encodes as the spec says (streamable-http.mdx §Value Encoding) decodes back
to itself and matches its body value; a sentinel whose payload is not base64 of UTF-8, or a
plain value holding a character a header must not carry, is refused (None); an integer
header matches exactly the integer it names, at any size; nothing ever raises.
"""

from __future__ import annotations

import base64
import string
from typing import Any

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from beammcp_django.protocol.header_params import HeaderParameter
from beammcp_django.transports.headers import decode_header_value, undecodable_reason
from tests.support import examples

PROPERTY = settings(max_examples=examples(200), deadline=None, database=None)

SENTINEL_START, SENTINEL_END = "=?base64?", "?="
# What RFC 9110 lets a header value carry as is: visible ASCII, space and tab.
HEADER_SAFE = "".join(chr(code) for code in range(0x20, 0x7F)) + "\t"
BASE64_ALPHABET = string.ascii_letters + string.digits + "+/="

UNICODE = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=30)
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), ANY_TEXT)


def sentinel(payload: str) -> str:
    return SENTINEL_START + payload + SENTINEL_END


def encoded(value: str) -> str:
    """``value`` as a spec-following client writes it in a header."""
    plain = (
        value
        and set(value) <= set(HEADER_SAFE)
        and value == value.strip(" \t")
        and not (value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END))
    )
    if plain:
        return value
    return sentinel(base64.b64encode(value.encode("utf-8")).decode("ascii"))


def parameter(kind: str) -> HeaderParameter:
    return HeaderParameter(name="P", path=("p",), type=kind)


# -- the sentinel --------------------------------------------------------------------------


@PROPERTY
@given(value=UNICODE)
@example(value="=?base64?literal?=")
@example(value=" padded ")
@example(value="Hello, \u4e16\u754c")
def test_any_unicode_value_survives_the_sentinel_round_trip(value):
    assert decode_header_value(sentinel(base64.b64encode(value.encode()).decode())) == value
    assert decode_header_value(encoded(value)) == value


@PROPERTY
@given(value=st.text(HEADER_SAFE, max_size=30))
def test_a_plain_header_safe_value_is_taken_as_it_is(value):
    sentinel_shaped = value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END)
    if not sentinel_shaped:
        assert decode_header_value(value) == value


@PROPERTY
@given(value=ANY_TEXT.filter(lambda text: not set(text) <= set(HEADER_SAFE)))
@example(value="line1\nline2")
@example(value="Z\u00fcrich")
def test_a_plain_value_with_a_character_a_header_must_not_carry_is_refused(value):
    assert decode_header_value(value) is None


@PROPERTY
@given(payload=st.binary(max_size=30))
@example(payload=b"\xff")
@example(payload=b"\xed\xa0\x80")  # a UTF-8-encoded surrogate
def test_a_sentinel_decodes_exactly_when_its_payload_is_base64_of_utf8(payload):
    try:
        expected = payload.decode("utf-8")
    except UnicodeDecodeError:
        expected = None
    assert decode_header_value(sentinel(base64.b64encode(payload).decode())) == expected


@PROPERTY
@given(payload=st.binary(min_size=1, max_size=30), cut=st.integers(), extra=st.sampled_from("A="))
@example(payload=b"A", cut=-1, extra="=")
def test_a_sentinel_with_broken_base64_framing_is_refused(payload, cut, extra):
    """Drop one character of the payload (its length is then not a multiple of 4), or put a
    character after its padding: malformed base64, never a value."""
    text = base64.b64encode(payload).decode()
    cut %= len(text)
    assert decode_header_value(sentinel(text[:cut] + text[cut + 1 :])) is None
    if text.endswith("="):
        assert decode_header_value(sentinel(text + extra)) is None


@PROPERTY
@given(payload=st.text(st.characters(codec="ascii"), max_size=24))
@example(payload="!!!")
@example(payload="Zm9v bar")
@example(payload="QQ")
def test_a_value_in_the_sentinel_form_is_never_taken_as_a_literal(payload):
    # A client must encode a plain value that looks like the sentinel: in that form, it is one.
    value = sentinel(payload)
    decoded = decode_header_value(value)
    if decoded is None:
        assert "not canonical base64" in undecodable_reason(value)
    else:
        assert base64.b64encode(decoded.encode("utf-8")).decode() == payload


@PROPERTY
@given(payload=st.binary(min_size=1, max_size=30), bits=st.integers(min_value=1, max_value=15))
@example(payload=b"A", bits=1)  # QR== where QQ== is canonical
def test_a_payload_with_padding_bits_set_is_refused_as_not_canonical(payload, bits):
    canonical = base64.b64encode(payload).decode()
    pad = canonical.count("=")
    assume(pad)
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"
    last = canonical[-pad - 1]
    # The low bits of the last data character carry no data when there is padding.
    spare = 4 if pad == 2 else 2
    flipped = alphabet[alphabet.index(last) ^ (bits % (1 << spare) or 1)]
    variant = canonical[: -pad - 1] + flipped + "=" * pad
    assert base64.b64decode(variant) == payload  # the same bytes, another spelling
    assert decode_header_value(sentinel(variant)) is None


@PROPERTY
@given(value=ANY_TEXT | st.text(BASE64_ALPHABET + "?").map(sentinel))
def test_no_header_value_crashes_the_decoder_and_a_decoded_one_is_clean_or_from_base64(value):
    decoded = decode_header_value(value)
    if decoded is not None and decoded != value:
        assert value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END)
        payload = value[len(SENTINEL_START) : -len(SENTINEL_END)]
        assert base64.b64decode(payload) == decoded.encode("utf-8")


# -- the comparison with the body ----------------------------------------------------------


@PROPERTY
@given(number=st.integers() | st.integers(min_value=-(10**60), max_value=10**60))
@example(number=2**53 + 1)  # through float, its own header did not match
def test_an_integer_header_matches_its_own_number_however_large(number):
    integer = parameter("integer")
    for written in (str(number), f"{number}.0", f"{number}.000", f"{number}e0", f"{number}0e-1"):
        assert integer.matches(decode_header_value(encoded(written)), number), written


@PROPERTY
@given(number=st.integers(), other=st.integers() | st.integers(-(10**60), 10**60))
@example(number=2**53, other=2**53 + 1)  # through float, the two were the same number
def test_an_integer_header_never_matches_another_number(number, other):
    integer = parameter("integer")
    if other != number:
        assert not integer.matches(str(other), number)
        assert not integer.matches(f"{other}.0", number)
    assert not integer.matches(f"{number}.5", number)


@PROPERTY
@given(header=ANY_TEXT, body=JSON_SCALARS)
@example(header="4_2", body=42)  # float() reads these; they are not decimal numbers
@example(header="\u0664\u0662", body=42)
@example(header=" 42", body=42)
@example(header="1e999999999999999999999999", body=1)
@example(header="sNaN", body=1)
def test_any_header_against_any_body_value_compares_without_raising(header, body):
    for kind in ("string", "integer", "boolean"):
        result = parameter(kind).matches(header, body)
        assert type(result) is bool
        if kind == "integer" and result:
            assert set(header) <= set(string.digits + "-+.eE")
            assert type(body) is int


@PROPERTY
@given(value=UNICODE, other=UNICODE)
def test_a_string_header_matches_exactly_its_own_text(value, other):
    string_parameter = parameter("string")
    assert string_parameter.matches(decode_header_value(encoded(value)), value)
    assert string_parameter.matches(other, value) is (other == value)
    assert not string_parameter.matches(value, None)


@PROPERTY
@given(header=ANY_TEXT | st.sampled_from(["true", "false", "True", "1", "0", " true"]))
def test_a_boolean_header_matches_only_the_lower_case_word(header):
    boolean = parameter("boolean")
    body: Any
    for body in (True, False):
        assert boolean.matches(header, body) is (header == ("true" if body else "false"))
    assert not boolean.matches(header, 1)
