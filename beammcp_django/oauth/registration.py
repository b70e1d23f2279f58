"""Dynamic Client Registration (RFC 7591) on the project's own authorization server, with
the bounds the toolkit's endpoint leaves to the project.

django-oauth-toolkit serves the registration endpoint (``DCR_ENABLED``, off by default;
deprecated by the MCP spec in favour of Client ID Metadata Documents, kept for clients that
still register this way). Open to anyone, as an MCP client must find it, it is a way to
write rows into the database; ``BEAMMCP["CLIENT_REGISTRATION"]`` bounds it, each refusal
named:

- a registration's metadata is at most ``METADATA_BYTES`` (413, read no further);
- one client address registers at most ``PER_ADDRESS`` clients a ``WINDOW_SECONDS`` (429
  with ``Retry-After``; counted in Django's cache, so shared by every worker that shares
  the cache; behind a proxy, the address Django sees is the proxy's unless the project
  sets ``REMOTE_ADDR`` from the forwarded header);
- at most ``CLIENTS`` clients registered this way in all (403 until some are deleted);
- ``application_type`` as the MCP spec asks a client to send it (OpenID Connect
  Registration's): ``web`` (the default) answers only to https on a host other than this
  computer, ``native`` to this computer over http, an app's own scheme, or https.

A public client (``token_endpoint_auth_method`` ``none``, as an MCP client is) is given no
secret; the toolkit does the registration itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache

from beammcp_django.conf import registration_settings
from beammcp_django.oauth.consent import is_this_computer

_COUNTER = "beammcp:registrations:"


@dataclass(frozen=True)
class Refused:
    """A registration refused: the HTTP status, RFC 7591's error code and what it says."""

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
    # The address is hashed: a cache key holds no caller input, whatever its length.
    key = _COUNTER + hashlib.sha256(address.encode("utf-8", "replace")).hexdigest()
    cache.add(key, 0, timeout=window)
    try:
        made = cache.incr(key)
    except ValueError:  # expired between add and incr: this is the window's first
        cache.add(key, 1, timeout=window)
        made = 1
    if made <= limit:
        return None
    return Refused(
        429,
        "access_denied",
        f"this address has asked for {limit} registrations in {window} s (BEAMMCP"
        "['CLIENT_REGISTRATION']['PER_ADDRESS'])",
        retry_after=window,
    )


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
