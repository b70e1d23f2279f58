"""What the server hands a client to bring back, keyed by Django's ``SECRET_KEY``:
``requestState`` (signed) and the key of pagination cursors.

Both must be accepted by any worker of the deployment, across a key rotation
(``SECRET_KEY_FALLBACKS``), so both derive from the project's secret and from nothing local
to a process. The core receives them as values (``state_codec``, ``cursor_key``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

from beammcp_django.protocol.round_trips import InvalidState


class SignedRequestState:
    """``requestState`` sealed with Django's signing: signed with SECRET_KEY, accepted under
    SECRET_KEY_FALLBACKS too (a retry may land on any worker, across a key rotation), expiring
    after ``max_age`` seconds, and bound to the request that issued it."""

    salt = "beammcp_django.request_state"

    def __init__(self, max_age: float) -> None:
        self.max_age = max_age

    def seal(self, state: Any, binding: str) -> str:
        return signing.dumps({"b": binding, "s": state}, salt=self.salt, compress=True)

    def open(self, token: str, binding: str) -> Any:
        try:
            # The signature is checked before anything is decompressed or decoded.
            payload = signing.loads(token, salt=self.salt, max_age=self.max_age)
        except signing.SignatureExpired:
            raise InvalidState("has expired") from None
        except signing.BadSignature:
            raise InvalidState("failed its integrity check") from None
        if type(payload) is not dict or payload.get("b") != binding:
            raise InvalidState("was issued for another request")
        return payload.get("s")


def cursor_key(secret: str | None = None) -> bytes:
    """A key for pagination cursors derived from SECRET_KEY (or ``secret``), so any worker
    accepts them.

    The algorithm is named: ``salted_hmac``'s default is SHA-1 and Django announces it will
    become SHA-256, so workers on two Django versions would derive different keys and refuse
    each other's cursors. Naming SHA-256 keeps the key the same on every Django version."""
    return salted_hmac(
        "beammcp_django.cursor", "pagination", secret=secret, algorithm="sha256"
    ).digest()


def cursor_fallback_keys() -> tuple[bytes, ...]:
    """The cursor keys of SECRET_KEY_FALLBACKS: cursors minted before a key rotation are
    still accepted, as signed values are (``requestState`` among them)."""
    return tuple(cursor_key(secret) for secret in settings.SECRET_KEY_FALLBACKS)
