"""The bearer authorizer's token cache, in the process: a warm token costs the validator
nothing, an entry never outlives the token's expiry nor ``TOKEN_CACHE_SECONDS``, the cache
holds at most ``TOKEN_CACHE_SIZE`` tokens, and it keys tokens by digest, never by the token."""

from __future__ import annotations

import asyncio
import time

import pytest

from beammcp_django.authorization import Grant, HttpRequestInfo, Refusal
from beammcp_django.oauth.bearer import BearerAuthorizer
from beammcp_django.oauth.resource import resource_server_from
from tests.principals.tokens import RESOURCE, SignedTokens, mint

pytestmark = pytest.mark.django_db


def authorizer(**settings) -> BearerAuthorizer:
    server = resource_server_from(
        {"RESOURCE": RESOURCE, "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"], **settings},
        "test",
    )
    return BearerAuthorizer(server, SignedTokens())


def ask(bearer: BearerAuthorizer, token: str) -> Grant | Refusal:
    headers = {"authorization": [f"Bearer {token}"]}
    return asyncio.run(bearer(HttpRequestInfo("POST", "/mcp", headers, None)))


def test_a_warm_token_is_not_validated_again():
    bearer, token = authorizer(), mint("ada", ["notes.read"])
    before = SignedTokens.calls
    first, second = ask(bearer, token), ask(bearer, token)
    assert isinstance(first, Grant) and second == first
    assert SignedTokens.calls == before + 1
    assert token.encode() not in b"".join(bearer.cache._entries)  # digests only


def test_no_entry_outlives_its_token_or_the_cache_seconds(monkeypatch):
    bearer = authorizer(TOKEN_CACHE_SECONDS=60)
    token = mint("ada", expires_in=5)
    assert isinstance(ask(bearer, token), Grant)
    later = time.time() + 6
    monkeypatch.setattr(time, "time", lambda: later)
    refused = ask(bearer, token)  # expired: the cache let it go, the validator said so
    assert isinstance(refused, Refusal) and refused.status == 401


def test_zero_seconds_asks_the_validator_every_time():
    bearer, token = authorizer(TOKEN_CACHE_SECONDS=0), mint("ada")
    before = SignedTokens.calls
    ask(bearer, token), ask(bearer, token)
    assert SignedTokens.calls == before + 2 and len(bearer.cache) == 0


def test_the_cache_holds_at_most_its_size():
    bearer = authorizer(TOKEN_CACHE_SIZE=3)
    for name in "abcdef":
        ask(bearer, mint(name))
    assert len(bearer.cache) == 3
