"""A host's token validator for the bearer-authorizer tests: tokens are Django-signed claims
the test mints (``mint``), so each test says exactly what a token carries (its user, scopes,
audience, expiry) with no authorization server. It keeps the validator contract
(``beammcp_django.oauth.tokens``); django-oauth-toolkit's and the JWT validator have their
own tests against their real issuers."""

from __future__ import annotations

import time
from collections.abc import Sequence

from django.core import signing

from beammcp_django.oauth.tokens import AccessToken, InvalidToken
from tests.principals.tools import Caller

SALT = "beammcp-test-tokens"
RESOURCE = "http://127.0.0.1:8000/mcp"


def mint(
    name: str,
    scopes: Sequence[str] = (),
    audience: Sequence[str] = (RESOURCE,),
    expires_in: float = 3600,
) -> str:
    claims = {"sub": name, "scope": " ".join(scopes), "aud": list(audience)}
    claims["exp"] = time.time() + expires_in
    return _signer().sign_object(claims, compress=True)


def _signer() -> signing.TimestampSigner:
    # "." between the parts: a bearer token is a b64token (RFC 6750), which has no ":".
    return signing.TimestampSigner(salt=SALT, sep=".")


class SignedTokens:
    """Validates what ``mint`` signed; counts its calls, so a test sees the cache at work."""

    calls = 0

    def validate(self, token: str) -> AccessToken:
        type(self).calls += 1
        try:
            claims = _signer().unsign_object(token)
        except signing.BadSignature:
            raise InvalidToken("bad signature") from None
        return AccessToken(
            principal=Caller(claims["sub"]),
            scopes=frozenset(claims["scope"].split()),
            audiences=frozenset(claims["aud"]),
            expires_at=claims["exp"],
            subject=f"test token of {claims['sub']}",
        )
