"""The opaque pagination cursor: a keyset position, bound to its list and authenticated.

A cursor names the list it belongs to and the last key the client saw; the next page is the
items whose key sorts after it. A keyset position never skips an item that was there before
when the list changes between pages (an offset would). The HMAC makes a forged or edited
cursor, or one from another list, a refusal rather than a silent jump. A cursor is bound to
the principal it was issued to: the key that principal is known by enters the HMAC, not the
payload (the cursor shows nothing of who holds it), so another principal's cursor fails as a
forged one would. Cursors are minted
with the first key and accepted under any (the key being rotated out, a fallback), so a
listing walked across a key rotation carries on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Sequence

_MAC_BYTES = 12


class InvalidCursor(Exception):
    """The cursor was not minted by this server for this list."""


class CursorCodec:
    def __init__(self, key: bytes, fallbacks: Sequence[bytes] = ()) -> None:
        if not key or not all(fallbacks):
            raise ValueError("a cursor key must not be empty")
        self._keys = (key, *fallbacks)

    @staticmethod
    def _mac(key: bytes, payload: bytes, holder: str) -> bytes:
        signed = hmac.new(key, payload, hashlib.sha256)
        signed.update(b"\0" + holder.encode("utf-8", "surrogatepass"))
        return signed.digest()[:_MAC_BYTES]

    def encode(self, list_name: str, last_key: str, holder: str = "") -> str:
        """A cursor after ``last_key`` of ``list_name``, for the principal keyed ``holder``."""
        payload = json.dumps([list_name, last_key], separators=(",", ":")).encode("utf-8")
        token = self._mac(self._keys[0], payload, holder) + payload
        return base64.urlsafe_b64encode(token).decode("ascii").rstrip("=")

    def decode(self, cursor: str, list_name: str, holder: str = "") -> str:
        """The last key of the page before, or InvalidCursor (also when the cursor was issued
        to a principal other than ``holder``)."""
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (ValueError, TypeError):
            raise InvalidCursor from None
        # The decoder skips characters outside the alphabet, padding and the unused low bits
        # of the last character: only the exact text this codec writes is its cursor.
        if base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=") != cursor:
            raise InvalidCursor
        mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
        if not any(hmac.compare_digest(mac, self._mac(key, payload, holder)) for key in self._keys):
            raise InvalidCursor
        owner, last_key = json.loads(payload)
        if owner != list_name:
            raise InvalidCursor
        return str(last_key)
