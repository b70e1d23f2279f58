"""``BEAMMCP["OAUTH"]["JWT"]``: what the JWT validator (``jwt.py``) is told about the external
issuer whose tokens it accepts, checked at startup (``beammcp.E137``, with the rest of
``OAUTH``) and derived once.

Kept apart from the validator so the checks run without PyJWT imported: a project that
names the validator without the ``jwt`` extra installed is told so by ``manage.py check``,
not by its first request.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import import_string

from beammcp_django.oauth.setting_values import names, positive, uri_problem

JWT_VALIDATOR = "beammcp_django.oauth.jwt.JwtTokens"
JWT_DEFAULTS: dict[str, Any] = {
    # The issuer's identifier, exactly as its tokens' `iss` spell it; required, and one of
    # OAUTH["AUTHORIZATION_SERVERS"] (where clients are sent for a token).
    "ISSUER": None,
    # Where the issuer publishes its public keys (its JWKS); required.
    "JWKS_URL": None,
    # The signature algorithms accepted; asymmetric only (the keys are public).
    "ALGORITHMS": ("RS256", "ES256"),
    # The `typ` header a token must carry (RFC 9068's access-token type); None accepts any,
    # for an issuer whose access tokens predate RFC 9068.
    "TYP": "at+jwt",
    # Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
    "LEEWAY_SECONDS": 30,
    # How long a fetched JWKS is trusted: a key the issuer removed is refused after this.
    "JWKS_CACHE_SECONDS": 300,
    # The least time between two fetches: a token naming an unknown `kid` refetches the
    # JWKS at most this often, so a flood of forged kids cannot hammer the issuer.
    "JWKS_REFETCH_SECONDS": 30,
    # One fetch's whole time bound, and the largest JWKS document read.
    "JWKS_TIMEOUT_SECONDS": 5,
    "JWKS_MAX_BYTES": 65_536,
    # The dotted path of the host's callable (claims) -> principal, run on a worker thread
    # (it may query the ORM); None answers a JwtSubject naming the issuer and `sub`.
    "PRINCIPAL": None,
}
# The asymmetric JWS algorithms (RFC 7518, RFC 8037, RFC 8812). A shared-secret algorithm
# (HS*) verified with a key from a public JWKS would let anyone who read the JWKS sign.
ASYMMETRIC = frozenset(
    {
        *(f"{family}{bits}" for family in ("RS", "PS", "ES") for bits in (256, 384, 512)),
        "ES256K",
        "EdDSA",
    }
)


@dataclass(frozen=True)
class JwtSettings:
    """What ``OAUTH["JWT"]`` configures, with the audience its tokens must name."""

    audience: str
    issuer: str
    jwks_url: str
    algorithms: tuple[str, ...]
    typ: str | None
    leeway: float
    jwks_cache_seconds: float
    jwks_refetch_seconds: float
    jwks_timeout_seconds: float
    jwks_max_bytes: int
    principal_path: str | None = None


def jwt_settings_from(oauth: Mapping[str, Any]) -> JwtSettings:
    """The validator's settings in ``BEAMMCP["OAUTH"]`` (already checked by ``jwt_problems``)."""
    merged = {**JWT_DEFAULTS, **(oauth.get("JWT") or {})}
    return JwtSettings(
        audience=oauth["RESOURCE"],
        issuer=merged["ISSUER"],
        jwks_url=merged["JWKS_URL"],
        algorithms=tuple(merged["ALGORITHMS"]),
        typ=merged["TYP"],
        leeway=float(merged["LEEWAY_SECONDS"]),
        jwks_cache_seconds=float(merged["JWKS_CACHE_SECONDS"]),
        jwks_refetch_seconds=float(merged["JWKS_REFETCH_SECONDS"]),
        jwks_timeout_seconds=float(merged["JWKS_TIMEOUT_SECONDS"]),
        jwks_max_bytes=int(merged["JWKS_MAX_BYTES"]),
        principal_path=merged["PRINCIPAL"],
    )


def jwt_problems(oauth: Mapping[str, Any]) -> Iterator[str]:
    """Why ``OAUTH["JWT"]`` (in ``oauth``, the merged ``OAUTH``) cannot configure the JWT
    validator, each naming its key; nothing when neither it nor the validator is named."""
    value = oauth.get("JWT")
    named = oauth.get("TOKENS") == JWT_VALIDATOR
    if value is None:
        if named:
            yield "['JWT'] must be set for the JWT validator: its ISSUER and JWKS_URL at least"
        return
    if not isinstance(value, Mapping):
        yield "['JWT'] must be None or a dict of the JWT validator's settings"
        return
    if named and importlib.util.find_spec("jwt") is None:
        yield (
            "['TOKENS'] names the JWT validator, which needs PyJWT: "
            "pip install 'beammcp-django[jwt]'"
        )
    for key in sorted(set(value) - set(JWT_DEFAULTS), key=str):
        yield f"['JWT'] has the unknown key {str(key)[:64]!r}"
    merged = {**JWT_DEFAULTS, **value}
    yield from _issuer_problems(merged, oauth.get("AUTHORIZATION_SERVERS"))
    yield from _algorithm_problems(merged["ALGORITHMS"])
    typ = merged["TYP"]
    if typ is not None and (not isinstance(typ, str) or not typ):
        yield "['JWT']['TYP'] must be the `typ` header tokens carry ('at+jwt'), or None"
    yield from _bound_problems(merged)
    yield from _principal_problems(merged["PRINCIPAL"])


def _issuer_problems(merged: Mapping[str, Any], servers: Any) -> Iterator[str]:
    issuer = merged["ISSUER"]
    reason = uri_problem(issuer)
    if reason:
        yield f"['JWT']['ISSUER'] {reason}"
    elif names(servers) and issuer not in servers:
        yield (
            f"['JWT']['ISSUER'] {issuer[:64]!r} is not one of AUTHORIZATION_SERVERS: clients "
            "are sent there for their tokens, which this server would then refuse"
        )
    reason = uri_problem(merged["JWKS_URL"])
    if reason:
        yield f"['JWT']['JWKS_URL'] {reason}"


def _algorithm_problems(algorithms: Any) -> Iterator[str]:
    if not names(algorithms) or not algorithms:
        yield "['JWT']['ALGORITHMS'] must be a non-empty list of JWS algorithm names"
        return
    for name in algorithms:
        if name.lower() == "none":
            yield "['JWT']['ALGORITHMS'] holds 'none': an unsigned token proves nothing"
        elif name.upper().startswith("HS"):
            yield (
                f"['JWT']['ALGORITHMS'] holds {name[:16]!r}, a shared-secret algorithm: the "
                "JWKS is public, so whoever reads it could sign tokens"
            )
        elif name not in ASYMMETRIC:
            yield (
                f"['JWT']['ALGORITHMS'] holds {name[:16]!r}, which is not an asymmetric JWS "
                f"algorithm ({', '.join(sorted(ASYMMETRIC))})"
            )


def _bound_problems(merged: Mapping[str, Any]) -> Iterator[str]:
    if not positive(merged["LEEWAY_SECONDS"], zero=True):
        yield "['JWT']['LEEWAY_SECONDS'] must be a number >= 0"
    for key in ("JWKS_CACHE_SECONDS", "JWKS_REFETCH_SECONDS", "JWKS_TIMEOUT_SECONDS"):
        if not positive(merged[key]):
            yield f"['JWT']['{key}'] must be a number > 0"
    cache, refetch = merged["JWKS_CACHE_SECONDS"], merged["JWKS_REFETCH_SECONDS"]
    if positive(cache) and positive(refetch) and refetch > cache:
        yield (
            "['JWT']['JWKS_REFETCH_SECONDS'] must not exceed JWKS_CACHE_SECONDS: an expired "
            "JWKS could not be fetched again in time"
        )
    size = merged["JWKS_MAX_BYTES"]
    if type(size) is not int or size < 1024:
        yield "['JWT']['JWKS_MAX_BYTES'] must be an integer >= 1024"


def _principal_problems(path: Any) -> Iterator[str]:
    if path is None:
        return
    if not isinstance(path, str) or not path:
        yield "['JWT']['PRINCIPAL'] must be None or the dotted path of a callable (claims)"
        return
    try:
        hook = import_string(path)
    except ImportError:
        yield f"['JWT']['PRINCIPAL'] names {path[:64]!r}, which cannot be imported"
        return
    if not callable(hook):
        yield f"['JWT']['PRINCIPAL'] names {path[:64]!r}, which is not callable"
