"""The bearer-token authorizer: ``BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"``.

Each request must carry ``Authorization: Bearer <token>``, a token the validator accepts,
issued for this resource (its audience names ``OAUTH["RESOURCE"]``: a token for another
resource is refused, and none is ever passed on) and not expired. The answer is a ``Grant``
naming the token's principal and its scopes (widened by ``SCOPES_IMPLY``); a refusal is 401
with the spec's challenge, and says no more to the caller than RFC 6750's error code; the
log says why.

A validated token is kept per process for ``TOKEN_CACHE_SECONDS`` (never past its expiry),
keyed by its SHA-256 digest, not the token: a warm request costs a digest and a dict lookup
on the loop, no thread and no query. A token revoked at its issuer is accepted until its
cache entry lapses; set the seconds to 0 to ask the validator on every request.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from django.utils.module_loading import import_string

from beammcp_django.authorization import Grant, HttpRequestInfo, Refusal
from beammcp_django.conf import forget_on_change, get_settings
from beammcp_django.credentials import caches_grants, ensure_listening
from beammcp_django.oauth.resource import (
    MAX_TOKEN_CHARS,
    ResourceServer,
    resource_server_from,
)
from beammcp_django.oauth.tokens import AccessToken, InvalidToken, TokenValidator
from beammcp_django.protocol.principal import principal_key

# RFC 6750 §2.1: the scheme, case-insensitive, then a b64token.
_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9\-._~+/]+=*)")


class TokenCache:
    """Tokens already validated, by digest, each until its own deadline; at most ``size``,
    the least recently used forgotten first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, tuple[Grant, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, digest: bytes, now: float) -> Grant | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._entries[digest]
            return None
        self._entries.move_to_end(digest)
        return entry[0]

    def forget(self, key: str) -> int:
        """Forget every grant of the principal whose key is ``key`` (``principal_key``);
        how many there were."""
        ended = [d for d, (grant, _) in self._entries.items() if _key_of(grant) == key]
        for digest in ended:
            del self._entries[digest]
        return len(ended)

    def put(self, digest: bytes, grant: Grant, until: float) -> None:
        self._entries[digest] = (grant, until)
        self._entries.move_to_end(digest)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)


class BearerAuthorizer:
    """Holds each request's token to the resource server's rules."""

    def __init__(self, server: ResourceServer, tokens: TokenValidator) -> None:
        self.server = server
        self.tokens = tokens
        self.cache = TokenCache(server.cache_size)
        self._missing = Refusal(401, "no bearer token", server.challenge())

    async def __call__(self, request: HttpRequestInfo) -> Grant | Refusal:
        value = request.header("authorization")
        if value is None:
            return self._missing
        if len(value) > MAX_TOKEN_CHARS:
            return self._invalid("the Authorization header is longer than any token accepted")
        matched = _BEARER.fullmatch(value)
        if matched is None:
            return self._invalid("the Authorization header is not a bearer token")
        token = matched[1]
        ensure_listening()  # a principal ended in another worker is forgotten here too
        digest = hashlib.sha256(token.encode("ascii")).digest()
        now = time.time()
        grant = self.cache.get(digest, now)
        if grant is not None:
            return grant
        from beammcp_django.runtime.host_threads import run_sync_host

        try:
            said: AccessToken = await run_sync_host(self.tokens.validate, token)
        except InvalidToken as invalid:
            return self._invalid(f"the validator refused the token: {invalid}")
        return self._granted(said, digest, now)

    def _granted(self, said: AccessToken, digest: bytes, now: float) -> Grant | Refusal:
        if self.server.resource not in said.audiences:
            # Issued for another resource (or for none): accepting it would let any service
            # that received a user's token replay it here (the spec's token passthrough).
            return self._invalid(
                f"token of {said.subject or 'unknown'} issued for another resource"
            )
        if said.expires_at <= now:
            return self._invalid(f"token of {said.subject or 'unknown'} expired")
        grant = Grant(
            said.principal, self.server.widened(said.scopes), said.expires_at, said.claims
        )
        if self.server.cache_seconds > 0:
            self.cache.put(digest, grant, min(said.expires_at, now + self.server.cache_seconds))
        return grant

    def _invalid(self, reason: str) -> Refusal:
        return Refusal(401, reason, self.server.challenge("invalid_token"))


@lru_cache(maxsize=1)
def configured_resource_server() -> ResourceServer | None:
    """The resource server ``BEAMMCP["OAUTH"]`` configures; None when it is not set."""
    values = get_settings()
    if values["OAUTH"] is None:
        return None
    return resource_server_from(values["OAUTH"], values["SERVER_TITLE"] or values["SERVER_NAME"])


@lru_cache(maxsize=1)
def bearer_authorizer() -> BearerAuthorizer:
    server = configured_resource_server()
    if server is None:
        raise RuntimeError(
            "beammcp_django.oauth.bearer.authorize needs BEAMMCP['OAUTH'], the resource "
            "server's settings"
        )
    named = import_string(server.tokens_path)
    tokens = named() if isinstance(named, type) else named
    return BearerAuthorizer(server, tokens)


forget_on_change(configured_resource_server.cache_clear)
forget_on_change(bearer_authorizer.cache_clear)


def _key_of(grant: Grant) -> str:
    return principal_key(grant.principal)


@caches_grants
def forget_principal(key: str) -> int:
    """Forget this process's cached grants of the principal ``key`` names
    (``credentials.end_principal``); nothing when no bearer authorizer was made."""
    if configured_resource_server.cache_info().currsize == 0:
        return 0
    if bearer_authorizer.cache_info().currsize == 0:
        return 0
    return bearer_authorizer().cache.forget(key)


async def authorize(request: HttpRequestInfo) -> Any:
    """The ``AUTHORIZE`` hook of a resource server (docs/authorization.md)."""
    return await bearer_authorizer()(request)
