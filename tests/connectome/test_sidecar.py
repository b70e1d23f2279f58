"""The weight sidecar against the format note (shared/notes/connectome-format.md §3.3): the
float examples, the exponent-form boundaries at 2**53, the envelope, ordering, NFC, escaping
and refusals."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beammcp_django.connectome.core.canonical import Edge, Uncanonical
from beammcp_django.connectome.core.sidecar import encode_sidecar, format_weight

# Every example the note lists, with the float that produces it under the rule.
NOTE_EXAMPLES = [
    (0.1, "0.1"),
    (1e-4, "0.0001"),
    (999999999999999.0, "999999999999999.0"),
    (1e15, "1.0e15"),
    (1e-5, "1.0e-5"),
    (1e20, "1.0e20"),
    (9.99e14, "9.99e14"),
    (3e6, "3.0e6"),
    (1.23456e-4, "1.23456e-4"),
    (0.001234, "0.001234"),
    (12340.0, "12340.0"),
    (0.0, "0.0"),
    (-0.0, "-0.0"),
]

# The three exceptions, each side of its bound. The exponent-form texts here are longer than
# the plain ones would be, so only the 2**53 exception can have chosen them.
EXACT_INTEGER_BOUNDARIES = [
    pytest.param(2.0**53 - 1, "9007199254740991.0", id="D=2**53-1,e=0:plain"),
    pytest.param(2.0**53, "9.007199254740992e15", id="D=2**53,e=0:exponent"),
    pytest.param(9007199254740990.0, "9007199254740990.0", id="D=2**52div5,e=1:plain"),
    pytest.param(9007199254741010.0, "9.00719925474101e15", id="D>2**52div5,e=1:exponent"),
    pytest.param(9007199254740900.0, "9007199254740900.0", id="D=2**51div25,e=2:plain"),
    pytest.param(9007199254741100.0, "9.0071992547411e15", id="D>2**51div25,e=2:exponent"),
]

# The other edges of the rule: one-digit D up to e = 2, multi-digit D up to e = 1 (2 once the
# exponent has two digits), down to e = -(L + 2); the extremes of the double range.
RULE_EDGES = [
    (100.0, "100.0"),
    (1000.0, "1.0e3"),
    (120.0, "120.0"),
    (1200.0, "1.2e3"),
    (12345678900.0, "12345678900.0"),
    (123456789000.0, "1.23456789e11"),
    (0.0001234, "1.234e-4"),
    (123.45, "123.45"),
    (5e-324, "5.0e-324"),
    (1.7976931348623157e308, "1.7976931348623157e308"),
]

WEIGHT_GRAMMAR = re.compile(r"-?[0-9]+\.[0-9]+|-?[0-9]\.[0-9]+e-?[1-9][0-9]*")
finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize(("value", "text"), NOTE_EXAMPLES)
def test_every_float_example_of_the_note_is_written_exactly(value, text):
    assert format_weight(value) == text


@pytest.mark.parametrize(("value", "text"), EXACT_INTEGER_BOUNDARIES)
def test_magnitudes_from_2_to_the_53_take_the_exponent_form_even_when_longer(value, text):
    assert format_weight(value) == text
    assert format_weight(-value) == "-" + text


@pytest.mark.parametrize(("value", "text"), RULE_EDGES)
def test_the_rule_switches_form_exactly_at_its_stated_exponents(value, text):
    assert format_weight(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(-0.1, "-0.1"), (-1e20, "-1.0e20"), (-1.23456e-4, "-1.23456e-4"), (-12340.0, "-12340.0")],
)
def test_a_negative_float_is_its_magnitude_with_a_minus(value, text):
    assert format_weight(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(0, "0"), (7, "7"), (-3, "-3"), (10**30, "1" + "0" * 30)]
)
def test_an_integer_weight_is_written_in_decimal(value, text):
    assert format_weight(value) == text


@given(finite_floats)
def test_every_finite_float_reads_back_as_itself_in_the_formats_grammar(value):
    text = format_weight(value)
    assert WEIGHT_GRAMMAR.fullmatch(text), text
    parsed = float(text)
    assert parsed == value
    assert math.copysign(1.0, parsed) == math.copysign(1.0, value)


def spellings(magnitude: float) -> tuple[str, str]:
    """The plain and exponent spellings of repr's shortest digits, built with Decimal."""
    shortest = Decimal(repr(magnitude))
    plain = format(shortest, "f")
    plain = plain if "." in plain else plain + ".0"
    _, digit_tuple, exponent = shortest.normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    scientific = f"{digits[0]}.{digits[1:] or '0'}e{exponent + len(digits) - 1}"
    return plain, scientific


@given(finite_floats.filter(lambda value: value != 0.0))
def test_the_form_is_the_shorter_spelling_plain_on_a_tie_exponent_from_2_to_the_53(value):
    plain, scientific = spellings(abs(value))
    wants_exponent = abs(value) >= 2.0**53 or len(scientific) < len(plain)
    sign = "-" if value < 0 else ""
    assert format_weight(value) == sign + (scientific if wants_exponent else plain)


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        (math.nan, "NaN"),
        (math.inf, "infinite"),
        (-math.inf, "infinite"),
        (True, "bool"),
        (False, "bool"),
        ("1", "str"),
        (None, "NoneType"),
    ],
)
def test_a_value_with_no_weight_form_is_refused_by_name(value, cause):
    with pytest.raises(Uncanonical, match=cause):
        format_weight(value)


INVOKE_FROM_SERVER = Edge("srv/server", "srv/tool/a", "invoke", "observed")
INVOKE_FROM_TOOL = Edge("srv/tool/a", "srv/module/m/f/1", "invoke", "observed")
WORKED_SIDECAR = (
    b'{"schema_version":3,"weights":['
    b'{"from":"srv/server","kind":"invoke","provenance":"observed","to":"srv/tool/a","weight":12},'
    b'{"from":"srv/tool/a","kind":"invoke","provenance":"observed","to":"srv/module/m/f/1",'
    b'"weight":1.5e-5}]}'
)


def test_an_empty_sidecar_is_the_bare_envelope():
    assert encode_sidecar([]) == b'{"schema_version":3,"weights":[]}'


def test_the_worked_sidecar_of_an_integer_and_a_float_weight_is_exact():
    data = encode_sidecar([(INVOKE_FROM_TOOL, 1.5e-5), (INVOKE_FROM_SERVER, 12)])
    assert data == WORKED_SIDECAR
    assert [entry["weight"] for entry in json.loads(data)["weights"]] == [12, 1.5e-5]


def test_the_sign_is_not_written_and_does_not_change_the_bytes():
    signed = Edge(*INVOKE_FROM_SERVER.key, sign="allow")
    assert encode_sidecar([(signed, 12), (INVOKE_FROM_TOOL, 1.5e-5)]) == WORKED_SIDECAR


def test_weights_are_sorted_by_from_to_kind_provenance_whatever_the_insertion_order():
    weighted = [
        (Edge("b", "a", "invoke", "observed"), 1),
        (Edge("a", "c", "invoke", "observed"), 2),
        (Edge("a", "b", "read", "observed"), 3),
        (Edge("a", "b", "invoke", "observed"), 4),
        (Edge("a", "b", "invoke", "declared"), 5),
    ]
    forwards = encode_sidecar(weighted)
    assert forwards == encode_sidecar(reversed(weighted))
    order = [entry["weight"] for entry in json.loads(forwards)["weights"]]
    assert order == [5, 4, 3, 2, 1]


def test_weights_are_ordered_by_utf8_bytes_not_utf16_code_units():
    astral, fullwidth = "\U0001f600", "\uff01"  # UTF-16 puts the astral one first
    data = encode_sidecar(
        [
            (Edge(astral, "x", "invoke", "observed"), 1),
            (Edge(fullwidth, "x", "invoke", "observed"), 2),
        ]
    )
    assert [entry["from"] for entry in json.loads(data)["weights"]] == [fullwidth, astral]
    assert astral.encode("utf-8") in data


def test_strings_are_written_in_nfc():
    decomposed = Edge("srv/tool/e\u0301cho", "srv/server", "invoke", "observed")
    data = encode_sidecar([(decomposed, 1)])
    assert '"from":"srv/tool/\u00e9cho"'.encode() in data
    assert b"e\xcc\x81" not in data


def test_a_control_character_in_an_id_is_escaped_as_the_graph_escapes_it():
    data = encode_sidecar([(Edge("a\x01b\nc", "d", "invoke", "observed"), 1)])
    assert data.startswith(b'{"schema_version":3,"weights":[{"from":"a\\u0001b\\nc","kind"')


def test_a_repeated_edge_key_is_refused_not_merged():
    with pytest.raises(Uncanonical, match="weighted twice"):
        encode_sidecar([(INVOKE_FROM_SERVER, 1), (Edge(*INVOKE_FROM_SERVER.key, sign="deny"), 2)])


def test_two_edges_equal_after_nfc_are_one_key_and_refused():
    composed = Edge("srv/tool/\u00e9", "srv/server", "invoke", "observed")
    decomposed = Edge("srv/tool/e\u0301", "srv/server", "invoke", "observed")
    with pytest.raises(Uncanonical, match="weighted twice"):
        encode_sidecar([(composed, 1), (decomposed, 1)])


@pytest.mark.parametrize("weight", [math.nan, math.inf, True])
def test_a_weight_with_no_form_is_refused_naming_its_edge(weight):
    with pytest.raises(Uncanonical, match="srv/tool/a"):
        encode_sidecar([(INVOKE_FROM_SERVER, weight)])


def test_an_ill_formed_string_is_refused():
    with pytest.raises(Uncanonical, match="Unicode"):
        encode_sidecar([(Edge("a\ud800", "b", "invoke", "observed"), 1)])
