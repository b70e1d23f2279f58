"""The shapes an OAuth setting's value may take, shared by the resource server's checks
(``resource.py``) and the JWT validator's (``jwt_settings.py``): one rule for what counts as
an issuer's or a resource's URL, so the two can never disagree about it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def uri_problem(uri: Any) -> str | None:
    """Why ``uri`` cannot name this resource, its issuer or the issuer's keys: an absolute
    https URL (http only on a loopback host), with no query or fragment."""
    if not isinstance(uri, str) or not uri:
        return "is not set to an absolute URL"
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("https", "http") or not host:
        return "is not an absolute http(s) URL"
    if parts.scheme == "http" and host not in _LOOPBACK:
        return "is http on a host that is not loopback: tokens must travel over https"
    if parts.query or parts.fragment or "#" in uri:
        return "has a query or fragment, which a resource identifier must not"
    return None


def names(value: Any) -> bool:
    """A list (or tuple) of non-empty strings; a string itself is not a list of names."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(item, str) and item for item in value)
    )


def positive(value: Any, *, zero: bool = False) -> bool:
    """A number (never a bool) > 0, or >= 0 with ``zero``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value >= 0 if zero else value > 0
