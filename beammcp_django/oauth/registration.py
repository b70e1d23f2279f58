"""Dynamic Client Registration (RFC 7591) on the project's own authorization server, with
the bounds the toolkit's endpoint leaves to the project.

django-oauth-toolkit serves the registration endpoint (``DCR_ENABLED``, off by default;
deprecated by the MCP spec in favour of Client ID Metadata Documents, kept for clients that
still register this way). Open to anyone, as an MCP client must find it, it is a way to
write rows into the database; ``BEAMMCP["CLIENT_REGISTRATION"]`` bounds it, each refusal
named:

- one client address asks at most ``PER_ADDRESS`` times a ``WINDOW_SECONDS`` (429 with
  ``Retry-After``, the rest of the window; asked before the body is looked at; counted in
  Django's cache, one key a window, so shared by every worker sharing the cache, and a
  ``DummyCache`` counts nothing; an IPv6 address counts by its /64, which one host holds;
  behind a proxy, the address Django sees is the proxy's unless the project sets
  ``REMOTE_ADDR`` from the forwarded header);
- a registration's metadata is at most ``METADATA_BYTES`` (413, not parsed; a body that
  declares more is refused before it is read, one that does not is read first);
- at most ``CLIENTS`` clients registered this way in all (403 until some are deleted);
- ``application_type`` as the MCP spec asks a client to send it (OpenID Connect
  Registration's): ``web`` (the default) answers only to https on a host other than this
  computer, ``native`` to this computer over http, an app's own scheme, or https.

A public client (``token_endpoint_auth_method`` ``none``, as an MCP client is) is given no
secret; the toolkit does the registration itself.
"""

from __future__ import annotations

import hashlib
import ipaddress
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache

from beammcp_django.conf import registration_settings
from beammcp_django.oauth.consent import is_this_computer

_COUNTER = "beammcp:registrations:"


@dataclass(frozen=True)
class Refused:
    """A registration refused: the HTTP status, an OAuth error code (RFC 7591's where one
    fits: none names a rate or a closed endpoint, which are ``access_denied``) and what it
    says."""

    status: int
    error: str
    description: str
    retry_after: int | None = None


def size_refusal(length: int) -> Refused | None:
    """The refusal of a body of ``length`` bytes, if it is over the bound."""
    limit = registration_settings()["METADATA_BYTES"]
    if length <= limit:
        return None
    return Refused(
        413,
        "invalid_client_metadata",
        f"the client metadata is over {limit} bytes (BEAMMCP['CLIENT_REGISTRATION']"
        "['METADATA_BYTES'])",
    )


def count_refusal(registered: int) -> Refused | None:
    """The refusal when ``registered`` clients already fill the bound."""
    limit = registration_settings()["CLIENTS"]
    if registered < limit:
        return None
    return Refused(
        403,
        "access_denied",
        f"registration is closed: {limit} clients are registered (BEAMMCP"
        "['CLIENT_REGISTRATION']['CLIENTS'])",
    )


def rate_refusal(address: str) -> Refused | None:
    """Count one registration from ``address``; the refusal when it is over the bound."""
    bounds = registration_settings()
    window, limit = bounds["WINDOW_SECONDS"], bounds["PER_ADDRESS"]
    now = time.time()
    # One key a window (its number in the key): a count never outlives its window, whatever
    # the cache backend does with a key's timeout on an increment. The address is hashed: a
    # key holds no caller input, whatever its length.
    key = f"{_COUNTER}{int(now // window)}:{hashlib.sha256(_counted(address)).hexdigest()}"
    cache.add(key, 0, timeout=window)
    try:
        made = cache.incr(key)
    except ValueError:  # evicted between add and incr: counted from here
        cache.add(key, 1, timeout=window)
        made = 1
    if made <= limit:
        return None
    return Refused(
        429,
        "access_denied",
        f"this address has asked for {limit} registrations in {window} s (BEAMMCP"
        "['CLIENT_REGISTRATION']['PER_ADDRESS'])",
        retry_after=max(1, int(window - now % window)),
    )


def _counted(address: str) -> bytes:
    """What one caller is counted as: an IPv4 address, an IPv6 address's /64 (a host is
    given a whole /64 and may use any address in it), any other text as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address.encode("utf-8", "replace")
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped).encode()
        return str(ipaddress.IPv6Network((parsed, 64), strict=False)).encode()
    return str(parsed).encode()


def application_type_refusal(metadata: Any) -> Refused | None:
    """The refusal of a redirect URI the client's ``application_type`` does not admit (the
    rest of the metadata is the toolkit's to check)."""
    if not isinstance(metadata, dict):
        return None
    kind = metadata.get("application_type", "web")
    if kind not in ("web", "native"):
        return Refused(400, "invalid_client_metadata", "application_type is 'web' or 'native'")
    uris = metadata.get("redirect_uris")
    for uri in uris if isinstance(uris, list) else ():
        if isinstance(uri, str) and not _admits(kind, uri):
            shown = uri if len(uri) <= 100 else uri[:99] + "…"
            rule = (
                "https on a host other than this computer"
                if kind == "web"
                else "http to this computer, https, or an app's own scheme"
            )
            return Refused(
                400,
                "invalid_redirect_uri",
                f"a {kind} client's redirect URI is {rule}: not {shown!r}",
            )
    return None


def _admits(kind: str, uri: str) -> bool:
    parts = urlsplit(uri)
    local = parts.hostname is not None and is_this_computer(parts.hostname)
    if kind == "web":
        return parts.scheme == "https" and not local
    if parts.scheme == "http":
        return local
    return bool(parts.scheme)
