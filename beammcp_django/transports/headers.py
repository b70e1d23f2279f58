"""Request headers as the transport reads them: every value kept, a repeat with another value
refused by name, and the ``=?base64?...?=`` encoding of non-ASCII values undone."""

from __future__ import annotations

import base64
import binascii

_SENTINEL_OPEN = "=?base64?"
_SENTINEL_SIZE = len(_SENTINEL_OPEN) + 2  # and "?=" after the payload


class Headers:
    """Request headers by lower-case name, every value kept: a repeat is never dropped."""

    __slots__ = ("_values",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[str, list[str]] = {}
        for name, value in raw:
            values.setdefault(name.decode("latin-1").lower(), []).append(
                value.decode("latin-1").strip(" \t")
            )
        self._values = values

    def all(self, name: str) -> list[str]:
        return self._values.get(name, [])

    def one(self, name: str) -> str | None:
        """The value when present once, or repeated identically; ``Disagreement`` otherwise."""
        values = self._values.get(name)
        if not values:
            return None
        first = values[0]
        for value in values[1:]:
            if value != first:
                raise Disagreement(name)
        return first

    def as_mapping(self) -> dict[str, tuple[str, ...]]:
        return {name: tuple(values) for name, values in self._values.items()}


class Disagreement(Exception):
    """A header appears more than once with different values."""

    def __init__(self, name: str) -> None:
        self.name = name


def _sentinel_payload(value: str) -> str | None:
    """The payload of a value in the ``=?base64?...?=`` form, whatever it holds, or None."""
    if len(value) >= _SENTINEL_SIZE and value.startswith(_SENTINEL_OPEN) and value.endswith("?="):
        return value[len(_SENTINEL_OPEN) : -2]
    return None


def decode_header_value(value: str) -> str | None:
    """Undo the ``=?base64?...?=`` sentinel (streamable-http.mdx §Value Encoding).

    Every value in that form is a sentinel (a client must encode a plain value that looks
    like one), so its payload must be base64 of UTF-8, and canonical: the one encoding of its
    bytes (``QR==`` and ``QQ==`` both decode to ``A``; only the second is accepted), so a
    value has one spelling and a proxy's rule on it cannot be walked around. None when it is
    not, or when a plain value holds characters a header must not carry
    (``undecodable_reason`` says which).
    """
    payload = _sentinel_payload(value)
    if payload is None:
        if value.isascii() and value.isprintable():  # 0x20-0x7E only: the usual value
            return value
        if any((ord(char) < 0x20 and char != "\t") or ord(char) > 0x7E for char in value):
            return None
        return value
    try:
        raw = base64.b64decode(payload, validate=True)
        if base64.b64encode(raw).decode("ascii") != payload:
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def undecodable_reason(value: str) -> str:
    """Why ``decode_header_value`` refused ``value``, in words for a -32020 message."""
    if _sentinel_payload(value) is not None:
        return "is a =?base64?...?= value whose payload is not canonical base64 of UTF-8"
    return "holds characters a header value must not carry"
