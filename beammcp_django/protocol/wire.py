"""The bounded JSON decoder every transport shares, and the encoder for replies.

Bounds hold before the message reaches the protocol: at most ``MAX_MESSAGE_BYTES``, at most
``MAX_DEPTH`` levels of nesting, no repeated key in any object, UTF-8 only, and nothing but
RFC 8259 JSON (``NaN`` and ``Infinity``, which ``json.loads`` admits, are refused).

Speed: the C decoder of ``json`` builds the value; the bounds are proved afterwards with
checks that are free for the common shapes (a byte count of brackets and colons) and walk
the value only when those counts cannot decide. See ``bench/decode.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError

MAX_MESSAGE_BYTES = 1_048_576
MAX_DEPTH = 64

_TOO_DEEP_RUN = b"[" * (MAX_DEPTH + 1)


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


def _measure(value: Any) -> tuple[int, int]:
    """Return (deepest nesting, total number of object keys) of a decoded value."""
    depth = 0
    keys = 0
    level = [value]
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return depth, keys
        following: list[Any] = []
        for node in level:
            if type(node) is dict:
                keys += len(node)
                following.extend(v for v in node.values() if type(v) in (dict, list))
            else:
                following.extend(v for v in node if type(v) in (dict, list))
        level = following
    return depth, keys


def decode(data: bytes) -> dict[str, Any]:
    """Decode one JSON-RPC message, refusing anything past the bounds by name.

    Raises ``ProtocolError``: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that
    is not one object, for nesting past ``MAX_DEPTH`` and for a repeated key.
    """
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(INVALID_REQUEST, f"message exceeds the {MAX_MESSAGE_BYTES}-byte limit")
    opens = data.count(b"[") + data.count(b"{")
    if opens > MAX_DEPTH and _starts_too_deep(data):
        raise _too_deep()
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
    braces = data.count(b"{")
    if opens <= MAX_DEPTH and braces <= 1:
        # At most one object: its keys are the only keys in the text, so the colons
        # outside strings number exactly len(value) unless a key repeats.
        if data.count(b":") == len(value):
            return value
        return _decode_checking_keys(text)
    depth, keys = _measure(value)
    if depth > MAX_DEPTH:
        raise _too_deep()
    if data.count(b":") == keys:
        return value
    # Colons inside strings, or a repeated key: only a pass that sees every pair can tell.
    return _decode_checking_keys(text)


def _decode_checking_keys(text: str) -> dict[str, Any]:
    try:
        return _strict_decoder.decode(text)
    except _RepeatedKey as repeated:
        raise ProtocolError(
            INVALID_REQUEST, f"message repeats the key {_name_key(repeated.key)} in one object"
        ) from None


def _starts_too_deep(data: bytes) -> bool:
    """True when a run of MAX_DEPTH+1 '[' bytes is certainly nesting, not string content.

    Certain only when no backslash and an even number of quotes come before the run; any
    other case is left to the parse and the depth proof, which are exact.
    """
    position = data.find(_TOO_DEEP_RUN)
    if position < 0:
        return False
    prefix = data[:position]
    return b"\\" not in prefix and prefix.count(b'"') % 2 == 0


def _too_deep() -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, f"message nests deeper than {MAX_DEPTH} levels")


def encode(message: dict[str, Any]) -> bytes:
    """Encode one message as compact UTF-8 JSON (non-ASCII escaped, so always valid UTF-8)."""
    return _encoder.encode(message).encode("ascii")
