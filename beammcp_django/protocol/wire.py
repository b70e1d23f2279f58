"""The bounded JSON decoder every transport shares, and the encoder for replies.

Bounds hold before the message reaches the protocol: at most ``MAX_MESSAGE_BYTES``, at most
``MAX_DEPTH`` levels of nesting, no repeated key in any object, UTF-8 only, and nothing but
RFC 8259 JSON (``NaN`` and ``Infinity``, which ``json.loads`` admits, are refused). Every
number is finite: a literal past a 64-bit float's range (``1e400``), which ``json.loads``
reads as an infinity, is refused by name, as is an integer longer than CPython converts.

Speed: the C decoder of ``json`` builds the value; the bounds are proved afterwards, on the
value. A short message made of small containers is walked recursively. Otherwise the value is
walked level by level with C-level passes, stopping as soon as the containers found account
for every '{' and '[' byte of the text (strings can only add to those counts), so big arrays
and objects of scalars are never iterated. No repeated key: the colon bytes must number the
keys found, else a second, strict parse decides. See ``bench/decode.py`` and
docs/performance.md.
"""

from __future__ import annotations

import gc
import json
import re
import sys
from itertools import chain
from typing import Any

from . import echo
from .errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError

MAX_MESSAGE_BYTES = 1_048_576
MAX_DEPTH = 64

_JSON_WHITESPACE = " \t\n\r"
_WHITESPACE_CHARS = frozenset(_JSON_WHITESPACE)
# Every byte but '{', '[' and ':': deleting them leaves the bytes the proofs count, in one pass.
_NOT_COUNTED = bytes(b for b in range(256) if b not in b"{[:")
_DICT_ONLY = frozenset({dict})
_LIST_ONLY = frozenset({list})
# From this size on a message is large: decoded with the collector paused, and its arguments
# validated off the event loop (protocol/methods/base.py).
LARGE_MESSAGE_BYTES = 65_536
_SMALL_MESSAGE = 8192  # a message this short is walked recursively, unless it holds...
_WIDE_NODE = 16  # ... a container of more elements than this: the level walk handles those
_WIDE_LEVEL = 32  # count brackets before reading a level of more elements than this
_WIDE_SHARE = 32  # ... that also hold more than 1/32 as many elements as the text has bytes


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


class _NonFinite(Exception):
    """A number literal past the range of a 64-bit float (``1e400``), which ``float`` reads
    as an infinity: what JSON cannot carry back, and what validators disagree on."""


class _HugeInteger(Exception):
    """An integer literal with more digits than CPython converts (``sys.int_info``)."""


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # only an infinity (or a NaN) is not zero here
        raise _NonFinite
    return value


def _bounded_int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    if limit and len(text) - text.startswith("-") > limit:
        raise _HugeInteger
    return int(text)


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


# parse_float costs nothing for a message with no fractional or exponent number literal
# (the usual one); parse_int is only ever used to name why a message failed.
_plain_decoder = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
_raw_decode = _plain_decoder.raw_decode
_strict_decoder = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    object_pairs_hook=_pairs_without_repeats,
)
_naming_decoder = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int
)
_encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
_utf8_encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False)
# A \u escape of a surrogate code point, half of a pair or alone (JSON escapes are lowercase u).
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _name_key(key: str) -> str:
    """Name a repeated key in a refusal only when it is short and plain; never echo bytes."""
    shown = echo.key(key)
    return f"'{shown}'" if shown is not None else "(a key that is not shown)"


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


def decode(data: bytes) -> dict[str, Any]:
    """Decode one JSON-RPC message, refusing anything past the bounds by name.

    Raises ``ProtocolError``: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that
    is not one object, for nesting past ``MAX_DEPTH``, for a repeated key, and for a number
    no finite float or convertible integer can hold.

    A large message is decoded with the cyclic garbage collector paused: decoding creates
    containers by the hundred thousand and never a cycle, and each collection the new
    containers trigger walks the heap (1 MiB of small nested arrays: 109 ms with the
    collector, 30 ms without, json.loads alone, 2026-12-01).
    """
    if len(data) < LARGE_MESSAGE_BYTES or not gc.isenabled():
        value = _decode(data)
    else:
        gc.disable()
        try:
            value = _decode(data)
        finally:
            gc.enable()
    if b"\\u" in data and _ESCAPED_SURROGATE.search(data) is not None:
        _refuse_lone_surrogates(value)
    return value


def _refuse_lone_surrogates(value: dict[str, Any]) -> None:
    """A string holding half of a surrogate pair ("\\ud800" alone), which JSON's grammar
    admits and no Unicode text holds (I-JSON, RFC 7493 §2.1, forbids it): refused, so that no
    validator, handler or database meets one. Checked only when the text escapes a
    surrogate at all; a pair (an emoji escaped by an ASCII-only client) passes."""
    try:
        _utf8_encoder.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(
            INVALID_REQUEST, "message holds a lone surrogate (\\ud800-\\udfff), which is not text"
        ) from None


def _decode(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(INVALID_REQUEST, f"message exceeds the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        text = data.decode("utf-8")
        try:
            value, end = _raw_decode(text)
        except ValueError:
            if text[:1] not in _WHITESPACE_CHARS:
                raise
            # raw_decode does not skip whitespace before the value; decode does.
            value, end = _plain_decoder.decode(text), len(text)
        if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
            raise ValueError("extra data")
    except RecursionError:
        raise _too_deep() from None
    except _NonFinite:
        raise _non_finite() from None
    except UnicodeDecodeError:
        raise _not_json() from None
    except ValueError as error:
        # CPython names its digit limit in the message (3.11: "Exceeds the limit (4300
        # digits) for integer string conversion"); only then is a second pass worth it.
        if "integer string conversion" in str(error):
            raise _why_not_decoded(text) from None
        raise _not_json() from None
    if type(value) is not dict:
        if type(value) is list:
            raise ProtocolError(
                INVALID_REQUEST,
                "message is a JSON array; batches are not accepted, send one object",
            )
        raise ProtocolError(INVALID_REQUEST, f"message is {_json_type(value)}, not a JSON object")
    keys = -1
    if len(data) <= _SMALL_MESSAGE:
        try:
            keys = _keys_in(value, 1)
        except (RecursionError, _Wide):  # the level walk needs no call stack, and counts
            keys = -1
    if keys >= 0:
        if data.count(b":") == keys:
            return value
    elif _large_message_is_plain(value, data):
        return value
    # Colons inside strings, or a repeated key: only a pass that sees every pair can tell.
    return _decode_checking_keys(text)


class _Wide(Exception):
    """The recursive walk met a wide container: the level walk, which can count, takes over."""


def _keys_in(node: dict[str, Any] | list[Any], depth: int) -> int:
    """Total keys of ``node`` (at nesting ``depth``) and every object below it; refuses
    depth past the bound, and hands a wide container to the level walk (``_Wide``)."""
    if len(node) > _WIDE_NODE:
        raise _Wide
    if type(node) is dict:
        keys = len(node)
        members: Any = node.values()
    else:
        keys = 0
        members = node
    for child in members:
        kind = type(child)
        if kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                raise _too_deep()
            if child:
                keys += _keys_in(child, depth + 1)
    return keys


def _colons_number(data: bytes, expected: int) -> bool:
    """True when ``data`` holds exactly ``expected`` colon bytes."""
    if expected * 256 < len(data):
        # Few colons in a long text: jump from one to the next with memchr.
        find = data.find
        seen = 0
        position = find(b":")
        while position >= 0:
            seen += 1
            if seen > expected:
                return False
            position = find(b":", position + 1)
        return seen == expected
    return data.count(b":") == expected


def _large_message_is_plain(value: dict[str, Any], data: bytes) -> bool:
    """Prove the depth (refusing past it) and say whether colons prove no key repeats.

    Levels are walked breadth first; a level's elements are gathered and typed by C-level
    passes (chain, map, set), and a Python loop runs only where containers and scalars mix.
    ``width`` is the number of elements held by the containers of the current level: before
    reading a wide level, the '{' and '[' bytes of the text are counted; when every one of
    them is accounted for by a container already found, no deeper container exists and the
    walk ends.
    """
    depth = 1
    keys = len(value)
    width = keys
    found = 1
    skeleton = None
    level: list[Any] = [value]
    level_of_dicts = True
    level_of_lists = False
    while width:
        if depth > MAX_DEPTH:
            raise _too_deep()
        if width > _WIDE_LEVEL and width * _WIDE_SHARE > len(data):
            if skeleton is None:
                skeleton = data.translate(None, _NOT_COUNTED)
            if found == skeleton.count(b"{") + skeleton.count(b"["):
                break
        if level_of_dicts:
            children = list(chain.from_iterable(map(dict.values, level)))
        elif level_of_lists:
            children = list(chain.from_iterable(level))
        else:
            children = list(
                chain.from_iterable([n.values() if type(n) is dict else n for n in level])
            )
        kinds = set(map(type, children))
        level_of_dicts = kinds == _DICT_ONLY
        level_of_lists = kinds == _LIST_ONLY
        if level_of_dicts:
            level = children
            width = sum(map(len, children))
            keys += width
        elif level_of_lists:
            level = children
            width = sum(map(len, children))
        elif dict in kinds or list in kinds:
            # Containers and scalars mixed: two C-level filters, not a Python loop.
            objects = [child for child in children if type(child) is dict]
            arrays = [child for child in children if type(child) is list]
            level_of_dicts = not arrays
            level_of_lists = not objects
            object_keys = sum(map(len, objects))
            keys += object_keys
            width = object_keys + sum(map(len, arrays))
            level = objects + arrays
        else:
            break
        found += len(level)
        depth += 1
    if depth > MAX_DEPTH:
        raise _too_deep()
    if skeleton is not None:
        return skeleton.count(b":") == keys
    return _colons_number(data, keys)


def _decode_checking_keys(text: str) -> dict[str, Any]:
    try:
        return _strict_decoder.decode(text)
    except _RepeatedKey as repeated:
        raise ProtocolError(
            INVALID_REQUEST, f"message repeats the key {_name_key(repeated.key)} in one object"
        ) from None
    except _NonFinite:  # the first decode refuses these first; kept for the strict pass
        raise _non_finite() from None


def _not_json() -> ProtocolError:
    return ProtocolError(PARSE_ERROR, "message is not valid UTF-8 JSON")


def _non_finite() -> ProtocolError:
    return ProtocolError(
        INVALID_REQUEST, "message holds a number outside the range of a 64-bit float"
    )


def _why_not_decoded(text: str) -> ProtocolError:
    """The refusal for text whose decoding met an integer too long to convert: the message
    is named as holding one when it is JSON up to that integer, else as not JSON. Decoded a
    second time, on that refusal path only, so no other message pays for it."""
    try:
        _naming_decoder.decode(text)
    except _HugeInteger:
        return ProtocolError(
            INVALID_REQUEST,
            f"message holds an integer of more than {sys.get_int_max_str_digits()} digits",
        )
    except (ValueError, RecursionError, _NonFinite):
        pass
    return _not_json()


def _too_deep() -> ProtocolError:
    return ProtocolError(INVALID_REQUEST, f"message nests deeper than {MAX_DEPTH} levels")


def encode(message: dict[str, Any]) -> bytes:
    """Encode one message as compact UTF-8 JSON (non-ASCII escaped, so always valid UTF-8)."""
    return _encoder.encode(message).encode("ascii")
