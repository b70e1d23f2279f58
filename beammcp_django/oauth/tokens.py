"""The one small contract a token validator keeps, whatever issued the token.

A validator is named by ``BEAMMCP["OAUTH"]["TOKENS"]`` (a dotted path to a class, built once
with no arguments, or to a ready object). Its ``validate(token)`` runs on a worker thread (it
may query the database or fetch keys) and answers what the token says, an ``AccessToken``, or
raises ``InvalidToken`` naming why not, for the server log. It need not check the audience
or the expiry: the bearer authorizer holds every validator's answer to the same rules, so no
validator can forget them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from beammcp_django.protocol.context import EMPTY


@dataclass(frozen=True)
class AccessToken:
    """What one valid token says.

    ``principal`` is who host code sees as ``context.principal`` (a Django user, an
    application); ``scopes`` what it was granted; ``audiences`` the resources it was issued
    for (RFC 8707 ``resource``, a JWT's ``aud``): one must be this server's, a token bound to
    none is refused; ``expires_at`` its expiry in POSIX seconds. ``subject`` names it in the
    log, never to the caller."""

    principal: Any
    scopes: frozenset[str]
    audiences: frozenset[str]
    expires_at: float
    subject: str = ""
    # What the token says, for host code (``context.claims``): a JWT's claims, the OAuth
    # client's id.
    claims: Mapping[str, Any] = field(default_factory=lambda: EMPTY)


class InvalidToken(Exception):
    """The token is not one this validator accepts; the message says why, for the log."""


class TokenValidator(Protocol):
    def validate(self, token: str) -> AccessToken: ...
