"""The connectome's weight sidecar: per-edge counts beside the graph, never in its hashed bytes.

A graph's canonical bytes carry no weights, so the same wiring hashes the same however often
it was exercised. Counts (an observed edge's call count, say) live in this sidecar instead:
``{"schema_version":3,"weights":[...]}`` with no ``algorithm`` member, because the sidecar is
never hashed. Each weighted edge is one object with members ``from``, ``kind``,
``provenance``, ``to``, ``weight`` in that order; objects are sorted as the graph's edges are
(from, to, kind, provenance as UTF-8 bytes after NFC), and strings are written exactly as the
graph writes them. A weight is an integer in decimal or a float in the original's form, Erlang's
``float_to_binary(F, [short])``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from beammcp_django.connectome.core.canonical import (
    SCHEMA_VERSION,
    Edge,
    Uncanonical,
    edge_order,
    encode_string,
    fixed_object,
    nfc,
)

EdgeKey = tuple[str, str, str, str]

# Plain digits at or beyond 2**53 would read as an exact integer a double cannot promise
# (2**53 + 1 has no float), so the original writes those magnitudes in exponent form. Per
# exponent e = 0, 1, 2 (the only ones where plain could win), the largest D kept plain:
# the note's "D >= 2**53", "D > 2**52 div 5", "D > 2**51 div 25" go to exponent form.
_EXACT_INTEGER_LIMITS = {0: (1 << 53) - 1, 1: (1 << 52) // 5, 2: (1 << 51) // 25}


def format_weight(value: int | float) -> str:
    """A weight's text: an integer in decimal, a float as Erlang's ``float_to_binary/2`` short.

    Python's ``repr`` finds the same shortest round-trip digits but places them by another
    rule (``1e-05``, ``1e+16``, ``3000000.0``, ``0.000123456``, ``9007199254740992.0`` where
    Erlang writes ``1.0e-5``, ``1.0e16``, ``3.0e6``, ``1.23456e-4``, ``9.007199254740992e15``),
    so only the digits are taken from it and the placement follows the original's rule. NaN,
    the infinities and bools have no weight form and are refused.
    """
    if isinstance(value, bool):
        raise Uncanonical("a bool is not a weight; use an integer or a float")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _short_float(value)
    raise Uncanonical(f"a weight must be an integer or a float, not a {type(value).__name__}")


def _short_float(value: float) -> str:
    if math.isnan(value):
        raise Uncanonical("a NaN weight has no JSON form")
    if math.isinf(value):
        raise Uncanonical("an infinite weight has no JSON form")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0.0:
        return sign + "0.0"
    digits, exponent = _shortest_digits(abs(value))
    if _is_plain(digits, exponent):
        return sign + _plain(digits, exponent)
    return sign + _exponent_form(digits, exponent)


def _shortest_digits(value: float) -> tuple[str, int]:
    """D and e with value == D x 10**e, D the shortest round-trip digits, no zeros at its ends.

    ``float.__repr__`` gives the shortest digits (David Gay's correctly rounded shortest
    conversion, the digits Ryu gives the original) in one of the forms ``123.45``, ``1e-05``,
    ``1.5e+16``; only the digits and their scale are kept.
    """
    mantissa, _, exponent_text = float.__repr__(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    significant = digits.rstrip("0")
    exponent = int(exponent_text or "0") - len(fraction) + len(digits) - len(significant)
    return significant, exponent


def _is_plain(digits: str, exponent: int) -> bool:
    """The original's choice: plain unless the exponent form is shorter or |value| >= 2**53."""
    length = len(digits)
    if length == 1:
        return -4 <= exponent <= 2
    upper = 2 if exponent + length - 1 >= 10 else 1
    if not -(length + 2) <= exponent <= upper:
        return False
    limit = _EXACT_INTEGER_LIMITS.get(exponent)
    return limit is None or int(digits) <= limit


def _plain(digits: str, exponent: int) -> str:
    whole_digits = len(digits) + exponent
    if exponent >= 0:
        return digits + "0" * exponent + ".0"
    if whole_digits > 0:
        return digits[:whole_digits] + "." + digits[whole_digits:]
    return "0." + "0" * -whole_digits + digits


def _exponent_form(digits: str, exponent: int) -> str:
    return f"{digits[0]}.{digits[1:] or '0'}e{exponent + len(digits) - 1}"


def encode_sidecar(weights: Iterable[tuple[Edge, int | float]]) -> bytes:
    """The sidecar bytes for (edge, weight) pairs; a repeated edge key is refused, not merged.

    An edge's key is (from, to, kind, provenance) after NFC; its sign is not part of the
    sidecar. The bytes are not hashed and no digest is offered for them.
    """
    entries: dict[EdgeKey, bytes] = {}
    for edge, weight in weights:
        source, target, kind, provenance = (nfc(part) for part in edge.key)
        key = (source, target, kind, provenance)
        named = f"the edge {source!r} -> {target!r} ({kind}, {provenance})"
        if key in entries:
            raise Uncanonical(f"{named} is weighted twice")
        try:
            weight_text = format_weight(weight)
        except Uncanonical as refusal:
            raise Uncanonical(f"{named}: {refusal}") from None
        entries[key] = fixed_object(
            ("from", encode_string(source)),
            ("kind", encode_string(kind)),
            ("provenance", encode_string(provenance)),
            ("to", encode_string(target)),
            ("weight", weight_text.encode("ascii")),
        )
    ordered = (entries[key] for key in sorted(entries, key=edge_order))
    return (
        b'{"schema_version":'
        + str(SCHEMA_VERSION).encode("ascii")
        + b',"weights":['
        + b",".join(ordered)
        + b"]}"
    )
