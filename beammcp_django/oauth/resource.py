"""This server as an OAuth 2.1 resource server: what ``BEAMMCP["OAUTH"]`` configures, checked
at startup, and what follows from it (the metadata document and where it lives, the
challenges a refused request carries).

The resource's canonical URI is a setting, never read from a request: a forged ``Host``
cannot change which tokens are accepted, nor what the metadata document says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from beammcp_django.oauth.jwt_settings import jwt_problems
from beammcp_django.oauth.setting_values import names, positive, uri_problem
from beammcp_django.protocol.audit import SCOPE_TOKEN

# RFC 9728 §3: the well-known path the metadata document is served under, before the
# resource's own path.
WELL_KNOWN = "/.well-known/oauth-protected-resource"
DEFAULT_TOKENS = "beammcp_django.oauth.toolkit.ToolkitTokens"
OAUTH_DEFAULTS: dict[str, Any] = {
    # The canonical URI of this MCP server, as clients name it in the `resource` parameter
    # and tokens name it in their audience; required.
    "RESOURCE": None,
    # The issuers clients may get tokens from (RFC 9728 authorization_servers); required.
    "AUTHORIZATION_SERVERS": (),
    # The scopes the metadata advertises (the minimum for basic use, per the spec).
    "SCOPES_SUPPORTED": (),
    # A broader scope and the narrower ones it implies: {"demo": ["demo.read", "demo.write"]}.
    "SCOPES_IMPLY": {},
    # The token validator (tokens.py): django-oauth-toolkit's tokens by default.
    "TOKENS": DEFAULT_TOKENS,
    # How long a validated token is trusted without asking the validator again (never past
    # its expiry), and how many such tokens a process keeps.
    "TOKEN_CACHE_SECONDS": 30,
    "TOKEN_CACHE_SIZE": 10_000,
    # The JWT validator's settings (jwt_settings.py), when TOKENS names it: the issuer, its
    # JWKS, the algorithms accepted.
    "JWT": None,
}
MAX_TOKEN_CHARS = 4096


@dataclass(frozen=True)
class ResourceServer:
    """What the settings configure, derived once."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...]
    implied: Mapping[str, frozenset[str]]
    tokens_path: str
    cache_seconds: float
    cache_size: int
    resource_name: str | None = None

    @property
    def metadata_path(self) -> str:
        """Where the metadata document is served: the well-known path, then the resource's."""
        return WELL_KNOWN + urlsplit(self.resource).path.rstrip("/")

    @property
    def metadata_url(self) -> str:
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    def document(self) -> bytes:
        """The Protected Resource Metadata document (RFC 9728 §2)."""
        metadata: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            metadata["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            metadata["resource_name"] = self.resource_name
        return json.dumps(metadata, separators=(",", ":")).encode("utf-8")

    def challenge(self, error: str | None = None) -> str:
        """The ``WWW-Authenticate`` of a 401: where the metadata is, the scopes to ask for,
        and, for a token that was sent, ``invalid_token`` (RFC 6750 §3)."""
        parts = []
        if error:
            parts.append(f'error="{error}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        if self.scopes_supported:
            parts.append(f'scope="{" ".join(self.scopes_supported)}"')
        return "Bearer " + ", ".join(parts)

    def widened(self, scopes: frozenset[str]) -> frozenset[str]:
        """``scopes`` with every narrower scope a broader one implies (the spec: servers MUST
        account for scope hierarchies)."""
        implied = [self.implied[scope] for scope in scopes if scope in self.implied]
        return scopes.union(*implied) if implied else scopes


def resource_server_from(value: Mapping[str, Any], name: str | None) -> ResourceServer:
    """The resource server ``BEAMMCP["OAUTH"]`` describes (already checked by ``problems``)."""
    merged = {**OAUTH_DEFAULTS, **value}
    return ResourceServer(
        resource=merged["RESOURCE"],
        authorization_servers=tuple(merged["AUTHORIZATION_SERVERS"]),
        scopes_supported=tuple(merged["SCOPES_SUPPORTED"]),
        implied={k: frozenset(v) for k, v in merged["SCOPES_IMPLY"].items()},
        tokens_path=merged["TOKENS"],
        cache_seconds=float(merged["TOKEN_CACHE_SECONDS"]),
        cache_size=int(merged["TOKEN_CACHE_SIZE"]),
        resource_name=name,
    )


def problems(value: Any) -> Iterator[str]:
    """Why ``BEAMMCP["OAUTH"]`` cannot configure a resource server, each naming its key."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        yield "must be None or a dict of the resource server's settings"
        return
    for key in sorted(set(value) - set(OAUTH_DEFAULTS)):
        yield f"has the unknown key {str(key)[:64]!r}"
    merged = {**OAUTH_DEFAULTS, **value}
    resource = merged["RESOURCE"]
    reason = uri_problem(resource)
    if reason:
        yield f"['RESOURCE'] {reason}"
    servers = merged["AUTHORIZATION_SERVERS"]
    if not names(servers) or not servers:
        yield "['AUTHORIZATION_SERVERS'] must be a non-empty list of issuer URLs"
    else:
        for server in servers:
            reason = uri_problem(server)
            if reason:
                yield f"['AUTHORIZATION_SERVERS'] holds {server[:64]!r}, which {reason}"
    scopes = merged["SCOPES_SUPPORTED"]
    if not names(scopes) or not all(SCOPE_TOKEN.fullmatch(scope) for scope in scopes):
        yield "['SCOPES_SUPPORTED'] must be a list of OAuth scope names"
    implied = merged["SCOPES_IMPLY"]
    if not isinstance(implied, Mapping) or not all(
        isinstance(broad, str) and SCOPE_TOKEN.fullmatch(broad) and names(narrow)
        for broad, narrow in implied.items()
    ):
        yield "['SCOPES_IMPLY'] must map a scope name to a list of the scope names it implies"
    if not isinstance(merged["TOKENS"], str) or not merged["TOKENS"]:
        yield "['TOKENS'] must be the dotted path of a token validator"
    if not positive(merged["TOKEN_CACHE_SECONDS"], zero=True):
        yield "['TOKEN_CACHE_SECONDS'] must be a number >= 0 (0: no cache)"
    if type(merged["TOKEN_CACHE_SIZE"]) is not int or merged["TOKEN_CACHE_SIZE"] < 1:
        yield "['TOKEN_CACHE_SIZE'] must be an integer >= 1"
    yield from jwt_problems(merged)
