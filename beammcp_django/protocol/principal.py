"""Who is calling, as the core compares callers: the key one principal is known by.

A legacy session is bound to the key of the principal that opened it, and a pagination
cursor to the key of the principal it was issued to: a caller presenting another's session id
or cursor is answered as for an unknown one.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KeyedPrincipal:
    """A principal known by its key alone: where a caller that was no Django model instance
    (a JWT's subject, a host's own object) cannot be rebuilt, as in a task's worker, it
    stands for that caller, keyed as it was (so the caller's handles are still its own)."""

    key: str


def principal_key(principal: Any) -> str:
    """The key of ``principal``: a Django model instance (a user) by its model and primary
    key, anything else by a digest of its ``repr`` (so a frozen dataclass naming the same
    caller is the same principal); no principal is "".

    A principal whose ``repr`` differs on every request (the default ``object`` repr holds an
    address) never matches: each later request of its session is answered as for an unknown
    one, which fails closed.
    """
    if principal is None:
        return ""
    if isinstance(principal, KeyedPrincipal):
        return principal.key
    try:
        meta = getattr(principal, "_meta", None)
        label = getattr(meta, "label_lower", None)
        if isinstance(label, str):
            return f"model:{label}:{principal.pk}"
        shown = repr(principal)
    except Exception:  # host code's __repr__ or pk raised: a key nothing else can match
        return f"unkeyable:{secrets.token_hex(16)}"
    return "repr:" + hashlib.sha256(shown.encode("utf-8", "replace")).hexdigest()
