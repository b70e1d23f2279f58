"""The bounded JSON decoder every transport shares, and the encoder for replies.

Bounds hold before the message reaches the protocol: at most ``MAX_MESSAGE_BYTES``, at most
``MAX_DEPTH`` levels of nesting, no repeated key in any object, UTF-8 only, and nothing but
RFC 8259 JSON (``NaN`` and ``Infinity``, which ``json.loads`` admits, are refused).

Speed: the C decoder of ``json`` builds the value; the bounds are proved afterwards by one
pass over the bytes and a walk that stops as soon as every container is accounted for. See
``bench/decode.py`` and docs/performance.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError

MAX_MESSAGE_BYTES = 1_048_576
MAX_DEPTH = 64


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return obj


_plain_decoder = json.JSONDecoder(parse_constant=_refuse_constant)
_strict_decoder = json.JSONDecoder(
    parse_constant=_refuse_constant, object_pairs_hook=_pairs_without_repeats
)
_encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)

_SAFE_KEY = re.compile(r"[A-Za-z0-9_.:/$@-]{1,64}")


def _name_key(key: str) -> str:
    """Name a repeated key in a refusal only when it is short and plain; never echo bytes."""
    if _SAFE_KEY.fullmatch(key):
        return f"'{key}'"
    return "(a key that is not shown)"


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


_MARKS = b"[{:"
_NOT_MARKS = bytes(byte for byte in range(256) if byte not in _MARKS)


def _measure(value: Any, containers: int) -> tuple[int, int]:
    """Return (deepest nesting, total number of object keys) of a decoded value.

    ``containers`` bounds how many arrays and objects the value holds (the '[' and '{' bytes
    of its text). Once the walk has met that many, nothing deeper can hold one, so the last
    level's keys are summed without visiting its members: a 100,000-number array or a
    60,000-key object costs one step, not one per member.
    """
    depth = 1
    keys = 0
    found = 1
    level = [value]
    while True:
        if depth > MAX_DEPTH:
            return depth, keys
        if found >= containers:
            return depth, keys + sum(len(node) for node in level if type(node) is dict)
        following: list[Any] = []
        for node in level:
            if type(node) is dict:
                keys += len(node)
                members: Any = node.values()
            else:
                members = node
            for member in members:
                kind = type(member)
                if kind is dict or kind is list:
                    following.append(member)
        if not following:
            return depth, keys
        found += len(following)
        level = following
        depth += 1


def decode(data: bytes) -> dict[str, Any]:
    """Decode one JSON-RPC message, refusing anything past the bounds by name.

    Raises ``ProtocolError``: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that
    is not one object, for nesting past ``MAX_DEPTH`` and for a repeated key.

    The C decoder runs first: past about a thousand levels it stops with RecursionError
    after a few microseconds, so the deepest nest that fits in the size bound is refused
    before anything large is built. Then one pass over the bytes keeps only '[', '{' and ':'
    (every key has a colon, so a repeated key shows as more colons than keys decoded) and a
    walk over the containers proves depth and key count.
    """
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(INVALID_REQUEST, f"message exceeds the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        text = data.decode("utf-8")
        value = _plain_decoder.decode(text)
    except RecursionError:
        raise _too_deep() from None
    except (UnicodeDecodeError, ValueError):
        raise ProtocolError(PARSE_ERROR, "message is not valid UTF-8 JSON") from None
    if type(value) is not dict:
        if type(value) is list:
            raise ProtocolError(
                INVALID_REQUEST,
                "message is a JSON array; batches are not accepted, send one object",
            )
        raise ProtocolError(INVALID_REQUEST, f"message is {_json_type(value)}, not a JSON object")
    marks = data.translate(None, _NOT_MARKS)
    colons = marks.count(b":")
    depth, keys = _measure(value, len(marks) - colons)
    if depth > MAX_DEPTH:
        raise _too_deep()
    # Colons outside strings number exactly the keys of the text, and colons inside strings
    # only add: equality proves no key repeated. Otherwise only a pass that sees every pair
    # can tell a colon in a string from a repeated key.
    if colons == keys:
        return value
    return _decode_checking_keys(text)


def _decode_checking_keys(text: str) -> dict[str, Any]:
    try:
        return _strict_decoder.decode(text)
    except _RepeatedKey as repeated:
        raise ProtocolError(
            INVALID_REQUEST, f"message repeats the key {_name_key(repeated.key)} in one object"
        ) from None


def _too_deep() -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, f"message nests deeper than {MAX_DEPTH} levels")


def encode(message: dict[str, Any]) -> bytes:
    """Encode one message as compact UTF-8 JSON (non-ASCII escaped, so always valid UTF-8)."""
    return _encoder.encode(message).encode("ascii")
