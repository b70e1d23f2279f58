"""Dynamic client registration's bounds (``beammcp_django.oauth.registration``), in the
process: the rate counted a window at a time and an IPv6 caller by its /64, the size, the
count, and the redirect URIs each ``application_type`` admits. Over HTTP, through the
toolkit's endpoint: ``tests/interop/test_client_registration.py``."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from beammcp_django.oauth import registration


@pytest.fixture
def bounds(settings):
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "CLIENT_REGISTRATION": {"PER_ADDRESS": 2, "WINDOW_SECONDS": 60, "METADATA_BYTES": 100},
    }
    cache.clear()
    yield
    cache.clear()


def test_an_ipv6_caller_is_counted_by_its_64_and_an_ipv4_caller_by_itself(bounds):
    assert registration.rate_refusal("2001:db8:0:1::1") is None
    assert registration.rate_refusal("2001:db8:0:1::ffff") is None
    refused = registration.rate_refusal("2001:db8:0:1:abcd::9")
    assert refused is not None and refused.status == 429
    assert 1 <= (refused.retry_after or 0) <= 60  # the rest of the window
    assert registration.rate_refusal("2001:db8:0:2::1") is None  # another /64
    assert registration.rate_refusal("192.0.2.1") is None
    assert registration.rate_refusal("::ffff:192.0.2.1") is None  # the same IPv4 caller
    assert registration.rate_refusal("192.0.2.1") is not None


def test_the_count_lives_in_one_key_a_window(bounds, monkeypatch):
    now = [120.0]
    monkeypatch.setattr(registration.time, "time", lambda: now[0])
    for _ in range(2):
        assert registration.rate_refusal("192.0.2.7") is None
    assert registration.rate_refusal("192.0.2.7") is not None
    now[0] = 180.0  # the next window: counted afresh, whatever the cache did to the old key
    assert registration.rate_refusal("192.0.2.7") is None


def test_the_size_and_the_count_are_bounds(bounds, settings):
    assert registration.size_refusal(100) is None
    assert registration.size_refusal(101).status == 413
    settings.BEAMMCP = {**settings.BEAMMCP, "CLIENT_REGISTRATION": {"CLIENTS": 3}}
    assert registration.count_refusal(2) is None
    assert registration.count_refusal(3).status == 403


@pytest.mark.parametrize(
    "kind, uri, admitted",
    [
        ("web", "https://client.example/cb", True),
        ("web", "https://127.0.0.1/cb", False),
        ("web", "http://client.example/cb", False),
        ("native", "http://127.0.0.1:33418/callback", True),
        ("native", "http://[::1]/cb", True),
        ("native", "com.example.app:/callback", True),
        ("native", "https://client.example/cb", True),
        ("native", "http://client.example/cb", False),
    ],
)
def test_what_each_application_type_admits(kind, uri, admitted):
    refused = registration.application_type_refusal(
        {"application_type": kind, "redirect_uris": [uri]}
    )
    assert (refused is None) is admitted
    if refused is not None:
        assert refused.error == "invalid_redirect_uri"


def test_an_application_type_of_neither_kind_is_refused_and_web_is_the_default():
    refused = registration.application_type_refusal({"application_type": "desktop"})
    assert refused is not None and refused.error == "invalid_client_metadata"
    assert registration.application_type_refusal({"redirect_uris": ["http://127.0.0.1/"]})
