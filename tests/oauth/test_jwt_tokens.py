"""The JWT validator against a real JWKS endpoint on loopback (``tests.oauth.issuer``): what
it accepts, and each way a token is refused, with ``InvalidToken`` naming why; the keys'
rotation, removal and the issuer's outages, with every fetch counted at the server."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from beammcp_django.oauth.jwt import JwtSubject, JwtTokens
from beammcp_django.oauth.jwt_settings import JwtSettings
from beammcp_django.oauth.tokens import InvalidToken
from tests.oauth.issuer import ISSUER, RESOURCE, JwksServer, KeyPair, claims, jwks_server, mint

KEY = KeyPair.rsa("key-1")
EC_KEY = KeyPair.ec("key-ec")
NEXT_KEY = KeyPair.rsa("key-2")


@pytest.fixture
def issuer() -> Iterator[JwksServer]:
    with jwks_server([KEY, EC_KEY]) as server:
        yield server


def settings_for(server: JwksServer, **changed: object) -> JwtSettings:
    base = JwtSettings(
        audience=RESOURCE,
        issuer=ISSUER,
        jwks_url=server.url,
        algorithms=("RS256", "ES256"),
        typ="at+jwt",
        leeway=5,
        jwks_cache_seconds=300,
        jwks_refetch_seconds=60,
        jwks_timeout_seconds=2,
        jwks_max_bytes=65_536,
    )
    return dataclasses.replace(base, **changed)


@dataclasses.dataclass(frozen=True)
class FromNow:
    """A time the test reads when it runs, not when it is collected: a full run reaches a
    test minutes after collecting it, past a time fixed then."""

    seconds: int

    def time(self) -> int:
        return int(time.time()) + self.seconds


def refused(tokens: JwtTokens, token: str) -> str:
    with pytest.raises(InvalidToken) as raised:
        tokens.validate(token)
    return str(raised.value)


def test_a_token_signed_by_the_issuers_key_is_accepted_with_what_it_says(issuer):
    payload = claims("ada", ["notes.read", "notes.write"])
    said = JwtTokens(settings_for(issuer)).validate(mint(KEY, payload))
    assert said.principal == JwtSubject(ISSUER, "ada")
    assert said.principal.claims["jti"] == payload["jti"]
    assert said.claims == payload  # what context.claims shows host code (the Grant's)
    assert said.scopes == {"notes.read", "notes.write"}
    assert said.audiences == {RESOURCE}
    assert said.expires_at == payload["exp"] + 5  # the leeway, which the authorizer honours
    assert "ada" in said.subject


def test_an_ec_key_and_a_list_of_audiences_and_scp_scopes_are_accepted(issuer):
    payload = claims(audience=["https://other.example", RESOURCE], scope=None)
    del payload["scope"]
    payload["scp"] = ["notes.read"]
    said = JwtTokens(settings_for(issuer)).validate(mint(EC_KEY, payload))
    assert said.audiences == {"https://other.example", RESOURCE}
    assert said.scopes == {"notes.read"}


def test_two_tokens_of_one_subject_are_one_principal(issuer):
    tokens = JwtTokens(settings_for(issuer))
    first = tokens.validate(mint(KEY, claims("ada", ["a"])))
    second = tokens.validate(mint(EC_KEY, claims("ada", ["b"])))
    assert first.principal == second.principal and repr(first.principal) == repr(second.principal)


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        ({"aud": "https://other.example/mcp"}, "aud 'https://other.example/mcp' does not name"),
        ({"aud": []}, "the claim 'aud' is missing"),
        ({"iss": "https://evil.example/o"}, "iss 'https://evil.example/o' is not the issuer"),
        ({"iss": ISSUER + "/"}, "is not the issuer"),  # exactly, never a prefix
        ({"exp": FromNow(-60)}, "expired"),
        ({"nbf": FromNow(60)}, "not yet valid"),
        ({"iat": FromNow(60)}, "not yet valid"),
        ({"exp": None}, "the claim 'exp' is missing"),
        ({"sub": None}, "the claim 'sub' is missing"),
        ({"scope": 7}, "scope is neither a string nor a list"),
        ({"scp": ["notes.read", 7], "scope": None}, "scope is neither a string nor a list"),
        ({"sub": 42}, "malformed JWT (InvalidSubjectError)"),
        ({"exp": "tomorrow"}, "malformed JWT (DecodeError)"),
        ({"exp": 10**400}, "exp is not a time this server can hold"),
    ],
)
def test_a_claim_out_of_its_rule_is_refused_naming_it(issuer, changed, why):
    changed = {
        key: value.time() if isinstance(value, FromNow) else value for key, value in changed.items()
    }
    payload = {key: value for key, value in claims().items() if changed.get(key, 0) is not None}
    payload.update({key: value for key, value in changed.items() if value is not None})
    assert why in refused(JwtTokens(settings_for(issuer)), mint(KEY, payload))


def test_the_leeway_is_the_only_grace_past_exp(issuer):
    tokens = JwtTokens(settings_for(issuer, leeway=30))
    assert tokens.validate(mint(KEY, claims(expires_in=-10)))  # within the leeway
    assert "expired" in refused(tokens, mint(KEY, claims(expires_in=-40)))


def test_a_token_signed_by_another_key_under_the_issuers_kid_is_a_bad_signature(issuer):
    forger = KeyPair.rsa(KEY.kid)
    assert refused(JwtTokens(settings_for(issuer)), mint(forger)) == "bad signature"
    # A signature tampered with in transit, likewise.
    head, body, signature = mint(KEY).split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    assert refused(JwtTokens(settings_for(issuer)), f"{head}.{body}.{flipped}") == "bad signature"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hand_signed(header: dict[str, object], secret: bytes | None) -> str:
    """A JWT built by hand, as an attacker would: PyJWT itself refuses to make these."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims()).encode())}"
    if secret is None:
        return signing_input + "."
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


def test_an_unsigned_token_alg_none_is_refused(issuer):
    token = _hand_signed({"alg": "none", "typ": "at+jwt", "kid": KEY.kid}, None)
    assert "alg 'none' is not one of" in refused(JwtTokens(settings_for(issuer)), token)
    assert issuer.requests == 0  # refused from the header: the JWKS was never needed


def test_hs256_signed_with_the_public_key_as_secret_is_refused(issuer):
    """Algorithm confusion: the issuer's public key (anyone can read the JWKS) used as an
    HMAC secret. Refused by the algorithm list, and again by the key, which is RSA: even a
    list that let HS256 through finds no HS256 key in the JWKS."""
    public = KEY.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    token = _hand_signed({"alg": "HS256", "typ": "at+jwt", "kid": KEY.kid}, public)
    assert "alg 'HS256' is not one of" in refused(JwtTokens(settings_for(issuer)), token)
    careless = JwtTokens(settings_for(issuer, algorithms=("RS256", "HS256")))
    assert "no key of kid 'key-1' in the JWKS is for HS256" in refused(careless, token)


def test_a_key_used_with_an_algorithm_it_is_not_published_for_is_refused(issuer):
    # key-1 is published with "alg": "RS256"; a PS256 token under its kid finds no key.
    token = mint(KEY, algorithm="PS256")
    tokens = JwtTokens(settings_for(issuer, algorithms=("RS256", "PS256")))
    assert "no key of kid 'key-1' in the JWKS is for PS256" in refused(tokens, token)


@pytest.mark.parametrize("typ", ["JWT", None, "id_token+jwt"])
def test_a_token_that_is_not_an_rfc_9068_access_token_is_refused(issuer, typ):
    why = refused(JwtTokens(settings_for(issuer)), mint(KEY, typ=typ))
    assert why == f"typ {typ!r} is not 'at+jwt' (RFC 9068 access token)"


def test_the_typ_is_a_media_type_and_its_check_can_be_relaxed(issuer):
    assert JwtTokens(settings_for(issuer)).validate(mint(KEY, typ="application/AT+JWT"))
    relaxed = JwtTokens(settings_for(issuer, typ=None))
    assert relaxed.validate(mint(KEY, typ="JWT"))
    assert relaxed.validate(mint(KEY, typ=None))


def _garbage(header: bytes) -> str:
    return f"{_b64(header)}.{_b64(b'{}')}.c2ln"


@pytest.mark.parametrize(
    "token",
    [
        "abc.def",
        "abc.def.ghi",
        _garbage(b"[1, 2]"),
        _garbage(b'{"alg": "RS256", "kid": 7}'),
        _garbage(b'{"alg": "RS256", "typ": "at+jwt", "kid": "' + b"k" * 3000 + b'"'),
    ],
)
def test_garbage_is_refused_as_not_a_jwt(issuer, token):
    assert "not a JWT" in refused(JwtTokens(settings_for(issuer)), token)
    assert issuer.requests == 0


def test_an_unknown_kid_refetches_once_then_a_rotated_key_is_accepted(issuer):
    tokens = JwtTokens(settings_for(issuer, jwks_refetch_seconds=0.3))
    assert tokens.validate(mint(KEY))
    assert issuer.requests == 1
    # The issuer starts signing with a key it has not published yet: refused, one refetch.
    early = mint(NEXT_KEY)
    time.sleep(0.35)
    assert "kid 'key-2' is not in the JWKS" in refused(tokens, early)
    assert issuer.requests == 2
    # Published: within the interval the set is not fetched again...
    issuer.publish([KEY, NEXT_KEY])
    assert "fetched 0 s ago, at most every 0.3 s" in refused(tokens, early)
    assert issuer.requests == 2
    # ...and after it, the next token naming the new kid picks it up.
    time.sleep(0.35)
    assert tokens.validate(mint(NEXT_KEY)).principal.subject == "ada"
    assert issuer.requests == 3
    assert tokens.validate(mint(KEY)) and issuer.requests == 3  # both keys now cached


def test_a_flood_of_forged_kids_fetches_the_jwks_at_most_once_per_interval(issuer):
    tokens = JwtTokens(settings_for(issuer, jwks_refetch_seconds=60))
    assert tokens.validate(mint(KEY))
    for number in range(200):
        assert "is not in the JWKS" in refused(tokens, mint(KEY, kid=f"forged-{number}"))
    assert issuer.requests == 1
    assert tokens.validate(mint(KEY))  # the real key is still served from the cache


def test_a_slow_refetch_holds_up_neither_known_keys_nor_other_unknown_kids(issuer):
    tokens = JwtTokens(settings_for(issuer, jwks_refetch_seconds=0.1, jwks_timeout_seconds=1.5))
    assert tokens.validate(mint(KEY))
    time.sleep(0.15)
    issuer.drip = 0.01  # the refetch below is cut at its 1.5-s bound
    slow = threading.Thread(target=refused, args=(tokens, mint(KEY, kid="rotated?")))
    slow.start()
    while issuer.requests < 2:
        time.sleep(0.01)
    started = time.monotonic()
    assert "(a fetch is under way)" in refused(tokens, mint(KEY, kid="forged"))
    assert tokens.validate(mint(KEY))
    assert time.monotonic() - started < 0.5
    slow.join(timeout=10)
    assert not slow.is_alive() and issuer.requests == 2


def test_a_key_removed_from_the_jwks_is_refused_once_the_cache_expires(issuer):
    tokens = JwtTokens(settings_for(issuer, jwks_cache_seconds=0.4, jwks_refetch_seconds=0.1))
    assert tokens.validate(mint(KEY))
    issuer.publish([EC_KEY])  # the issuer retires key-1
    assert tokens.validate(mint(KEY))  # still within the cache's life
    time.sleep(0.45)
    assert "kid 'key-1' is not in the JWKS" in refused(tokens, mint(KEY))
    assert tokens.validate(mint(EC_KEY))
    assert issuer.requests == 2


def test_an_issuer_that_is_down_fails_closed_and_is_named_in_the_log(issuer, caplog):
    issuer.status = 503
    tokens = JwtTokens(settings_for(issuer, jwks_refetch_seconds=60))
    with caplog.at_level(logging.WARNING, logger="beammcp_django.http"):
        why = refused(tokens, mint(KEY))
    assert why == f"the JWKS at {issuer.url} could not be fetched: it answered HTTP 503"
    assert f"The JWKS at {issuer.url} could not be fetched: it answered HTTP 503" in caplog.text
    # The failure counts as a fetch: the next token does not ask the issuer again.
    assert "could not be fetched (fetched 0 s ago" in refused(tokens, mint(KEY))
    assert issuer.requests == 1


def test_an_expired_key_set_is_not_trusted_while_the_issuer_is_down(issuer):
    tokens = JwtTokens(settings_for(issuer, jwks_cache_seconds=0.3, jwks_refetch_seconds=0.1))
    assert tokens.validate(mint(KEY))
    issuer.status = 503
    assert tokens.validate(mint(KEY))  # the set is still fresh
    time.sleep(0.35)
    assert "could not be fetched: it answered HTTP 503" in refused(tokens, mint(KEY))
    issuer.status = 200
    time.sleep(0.15)
    assert tokens.validate(mint(KEY))  # back, and fetched again after the interval


def test_an_unreachable_issuer_is_refused_within_the_timeout():
    server = JwksServer([KEY]).start()
    url = server.url
    server.stop()  # nothing listens there any more
    tokens = JwtTokens(settings_for(server, jwks_url=url))
    started = time.monotonic()
    assert "could not be fetched: unreachable" in refused(tokens, mint(KEY))
    assert time.monotonic() - started < 2


def test_a_redirect_is_not_followed(issuer):
    issuer.status = 302
    assert "could not be fetched: it answered HTTP 302" in refused(
        JwtTokens(settings_for(issuer)), mint(KEY)
    )
    assert issuer.requests == 1


def test_a_jwks_dripped_slower_than_the_timeout_is_cut_at_the_time_bound(issuer):
    issuer.drip = 0.05  # each read within the socket timeout, the whole far past it
    tokens = JwtTokens(settings_for(issuer, jwks_timeout_seconds=0.5))
    started = time.monotonic()
    assert "it was not read within the fetch's time bound" in refused(tokens, mint(KEY))
    assert time.monotonic() - started < 1.5


def test_an_oversized_jwks_is_refused_whatever_its_content(issuer):
    issuer.publish([KEY], padding=70_000)
    tokens = JwtTokens(settings_for(issuer))
    assert "could not be fetched: it declares" in refused(tokens, mint(KEY))
    assert "over 65536" in refused(JwtTokens(settings_for(issuer)), mint(KEY))


def test_a_jwks_that_is_not_a_key_set_is_refused(issuer):
    issuer.body = b'{"keys": "none here"}'
    assert 'it is not a JWKS (no "keys" list)' in refused(
        JwtTokens(settings_for(issuer)), mint(KEY)
    )


def test_a_shared_secret_in_the_jwks_is_never_a_key(issuer):
    secret = {"kty": "oct", "kid": "shared", "k": _b64(b"s" * 32), "alg": "HS256"}
    issuer.body = json.dumps({"keys": [secret, KEY.jwk()]}).encode()
    token = jwt.encode(
        claims(), b"s" * 32, algorithm="HS256", headers={"kid": "shared", "typ": "at+jwt"}
    )
    tokens = JwtTokens(settings_for(issuer, algorithms=("RS256", "HS256")))
    assert "kid 'shared' is not in the JWKS" in refused(tokens, token)


def test_a_token_without_a_kid_is_verified_only_by_a_lone_key():
    with jwks_server([KEY]) as lone:
        token = jwt.encode(claims(), KEY.private, algorithm="RS256", headers={"typ": "at+jwt"})
        assert JwtTokens(settings_for(lone)).validate(token)
    with jwks_server([KEY, NEXT_KEY]) as two:
        assert "names no kid" in refused(JwtTokens(settings_for(two)), token)


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # minting it
def test_an_rsa_key_under_2048_bits_is_refused():
    weak = KeyPair.rsa("weak", bits=1024)
    with jwks_server([weak]) as server:
        assert "key is refused" in refused(JwtTokens(settings_for(server)), mint(weak))


@pytest.mark.django_db
def test_the_principal_hook_maps_the_subject_to_a_django_user(issuer, django_user_model):
    ada = django_user_model.objects.create_user("ada")
    django_user_model.objects.create_user("grace", is_active=False)
    tokens = JwtTokens(settings_for(issuer, principal_path="tests.oauth.principals.user_of"))
    assert tokens.validate(mint(KEY, claims("ada"))).principal == ada
    for nobody in ("grace", "unknown"):
        why = refused(tokens, mint(KEY, claims(nobody)))
        assert why == f"the PRINCIPAL hook names nobody for {nobody!r}"
