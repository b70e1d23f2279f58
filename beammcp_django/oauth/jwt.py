"""JWT access tokens from an external issuer, verified with the keys of its JWKS:
``OAUTH["TOKENS"] = "beammcp_django.oauth.jwt.JwtTokens"``, configured by ``OAUTH["JWT"]``
(``jwt_settings.py``). Needs PyJWT with its crypto extra (``beammcp-django[jwt]``).

A token is accepted only when all of these hold, and refused with ``InvalidToken`` naming
the first that does not (the server log shows it; the caller sees ``invalid_token``):

- its header names an algorithm of ``ALGORITHMS`` (asymmetric only: never ``none``, never a
  shared secret, so a public key can never be used as an HMAC secret) and, unless ``TYP`` is
  None, the RFC 9068 type ``at+jwt``: an ID token or any other JWT the issuer signs has the
  issuer, the signature and often the audience right, and is still not an access token;
- its signature verifies with the issuer's key of that ``kid`` (``jwks.py`` fetches and
  rotates the keys) for that algorithm, the key at least 2048 bits for RSA;
- ``exp`` is present and not past, ``nbf`` and ``iat`` not ahead, each by ``LEEWAY_SECONDS``
  at most; ``iss`` is exactly ``ISSUER``; ``aud`` names ``OAUTH["RESOURCE"]``; ``sub`` is
  present;
- ``scope`` is a space-separated string, or ``scp`` a list (or string) of scope names.

The principal is ``PRINCIPAL(claims)`` when the host names that hook (a Django user looked
up by ``sub``, say; None refuses the token), else a ``JwtSubject``: the issuer and subject,
the same principal for every token of that subject, whatever else the tokens carry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from beammcp_django.oauth.jwks import JwkDict, JwksCache, KeySet
from beammcp_django.oauth.jwt_settings import JwtSettings, jwt_settings_from
from beammcp_django.oauth.tokens import AccessToken, InvalidToken

try:
    import jwt as pyjwt
except ImportError:  # the `jwt` extra is not installed; the system check says so
    pyjwt = None

REQUIRED_CLAIMS = ("exp", "iss", "aud", "sub")


@dataclass(frozen=True)
class JwtSubject:
    """Who a token names when the host maps it to nothing of its own: the issuer and the
    ``sub``. ``claims`` are the token's, for host code to read; they stay out of the
    comparison and the repr, so two tokens of one subject are one principal."""

    issuer: str
    subject: str
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return self.subject


class JwtTokens:
    """The validator: built once with no arguments, from ``BEAMMCP["OAUTH"]``; a test or a
    host may hand it ``JwtSettings`` directly."""

    def __init__(self, settings: JwtSettings | None = None) -> None:
        if pyjwt is None:
            raise ImproperlyConfigured(
                "beammcp_django.oauth.jwt.JwtTokens needs PyJWT: pip install 'beammcp-django[jwt]'"
            )
        if settings is None:
            from beammcp_django.conf import get_settings

            settings = jwt_settings_from(get_settings()["OAUTH"])
        self.settings = settings
        self.keys = JwksCache(
            settings.jwks_url,
            cache_seconds=settings.jwks_cache_seconds,
            refetch_seconds=settings.jwks_refetch_seconds,
            timeout=settings.jwks_timeout_seconds,
            max_bytes=settings.jwks_max_bytes,
        )
        self._principal: Callable[[dict[str, Any]], Any] | None = (
            import_string(settings.principal_path) if settings.principal_path else None
        )

    def validate(self, token: str) -> AccessToken:
        header = _header(token)
        algorithm = header.get("alg")
        if algorithm not in self.settings.algorithms:
            raise InvalidToken(f"alg {_shown(algorithm)} is not one of the accepted algorithms")
        self._check_typ(header.get("typ"))
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's kid is not a string")
        key = _key(self.keys.key_set_for(kid), kid, algorithm)
        claims = self._verified_claims(token, key, algorithm)
        scopes = _scopes(claims)
        audience = claims["aud"]
        principal = self._principal_of(claims)
        return AccessToken(
            principal=principal,
            scopes=scopes,
            audiences=frozenset([audience] if isinstance(audience, str) else audience),
            # The bearer authorizer holds every token to expires_at: the leeway that let the
            # token through here must let it through there too.
            expires_at=_expiry(claims) + self.settings.leeway,
            subject=f"JWT of {_shown(claims['sub'])}",
            claims=MappingProxyType(claims),
        )

    def _check_typ(self, typ: Any) -> None:
        expected = self.settings.typ
        if expected is None:
            return
        # RFC 7515 §4.1.9: a media type, case-insensitive, "application/" optional.
        given = typ.lower().removeprefix("application/") if isinstance(typ, str) else None
        if given != expected.lower().removeprefix("application/"):
            raise InvalidToken(f"typ {_shown(typ)} is not {expected!r} (RFC 9068 access token)")

    def _verified_claims(self, token: str, key: Any, algorithm: str) -> dict[str, Any]:
        errors = pyjwt.exceptions
        try:
            return pyjwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway,
                options={"require": list(REQUIRED_CLAIMS), "enforce_minimum_key_length": True},
            )
        except errors.ExpiredSignatureError:
            raise InvalidToken("expired (exp is past)") from None
        except errors.ImmatureSignatureError:
            raise InvalidToken("not yet valid (nbf or iat is ahead)") from None
        except errors.InvalidIssuerError:
            raise InvalidToken(
                f"iss {_shown(_unverified(token, 'iss'))} is not the issuer "
                f"{self.settings.issuer!r}"
            ) from None
        except errors.InvalidAudienceError:
            raise InvalidToken(
                f"aud {_shown(_unverified(token, 'aud'))} does not name this resource"
            ) from None
        except errors.MissingRequiredClaimError as missing:
            raise InvalidToken(f"the claim {missing.claim!r} is missing") from None
        except errors.InvalidSignatureError:
            raise InvalidToken("bad signature") from None
        except errors.InvalidKeyError as invalid:
            raise InvalidToken(f"the issuer's key is refused: {invalid}") from None
        except errors.PyJWTError as error:
            raise InvalidToken(f"malformed JWT ({type(error).__name__})") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as error:
            # Whatever else crafted bytes make the parser raise is a malformed token too,
            # never a server error.
            raise InvalidToken(f"malformed JWT ({type(error).__name__})") from None

    def _principal_of(self, claims: dict[str, Any]) -> Any:
        if self._principal is None:
            return JwtSubject(claims["iss"], claims["sub"], claims)
        principal = self._principal(claims)
        if principal is None:
            raise InvalidToken(f"the PRINCIPAL hook names nobody for {_shown(claims['sub'])}")
        return principal


def _header(token: str) -> dict[str, Any]:
    try:
        header = pyjwt.get_unverified_header(token)
    except (pyjwt.exceptions.PyJWTError, ValueError, TypeError, RecursionError):
        raise InvalidToken("not a JWT (its header does not decode)") from None
    return header


def _expiry(claims: Mapping[str, Any]) -> float:
    """``exp`` in POSIX seconds (PyJWT has held it to an integer's reading, not a float's)."""
    try:
        return float(int(claims["exp"]))
    except (ValueError, TypeError, OverflowError):
        raise InvalidToken("exp is not a time this server can hold") from None


def _key(keys: KeySet, kid: str | None, algorithm: str) -> Any:
    """The issuer's key of ``kid`` for ``algorithm``: a key whose own ``alg`` names another
    algorithm, or whose type does not fit this one (an EC key for RS256), is no candidate."""
    cached = keys.parsed.get((kid, algorithm))
    if cached is not None:
        return cached
    for candidate in keys.candidates(kid):
        if candidate.get("alg", algorithm) != algorithm:
            continue
        parsed = _parsed(candidate, algorithm)
        if parsed is not None:
            keys.parsed[(kid, algorithm)] = parsed
            return parsed
    raise InvalidToken(f"no key of kid {_shown(kid)} in the JWKS is for {algorithm}")


def _parsed(candidate: JwkDict, algorithm: str) -> Any:
    try:
        return pyjwt.PyJWK(dict(candidate), algorithm=algorithm)
    except pyjwt.exceptions.PyJWTError:
        return None


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """``scope`` (RFC 9068, RFC 8693: space-separated), else ``scp`` (a list, or a string)."""
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list) and all(isinstance(scope, str) for scope in value):
        return frozenset(value)
    raise InvalidToken("the token's scope is neither a string nor a list of strings")


def _unverified(token: str, claim: str) -> Any:
    """A claim of a token whose signature verified but whose claims did not: for the log."""
    try:
        return pyjwt.decode(token, options={"verify_signature": False}).get(claim)
    except pyjwt.exceptions.PyJWTError:
        return None


def _shown(value: Any) -> str:
    """A value from the token, as the log may show it: quoted, escaped, and short."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."
