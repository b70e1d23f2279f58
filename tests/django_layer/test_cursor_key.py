"""The pagination-cursor key names its algorithm, so it is one key on every Django version.

``salted_hmac`` defaults to SHA-1 and Django 6.1 announces the default will become SHA-256
(RemovedInDjango2028Warning): left to the default, two workers on different Django versions
would derive different keys from the same SECRET_KEY and refuse each other's cursors. The
key is checked against the derivation computed here from hashlib alone, on each CI leg.
``requestState`` is sealed by ``django.core.signing``, whose signer names SHA-256 itself: it
too must run without a deprecation warning on every leg.
"""

from __future__ import annotations

import hashlib
import hmac
import warnings

from django.test import override_settings

from beammcp_django.servers.signing import SignedRequestState, cursor_key

SECRET = "a-host-secret-key-" + "z" * 40


def test_the_cursor_key_is_the_sha256_derivation_of_secret_key_with_no_warning():
    with override_settings(SECRET_KEY=SECRET), warnings.catch_warnings():
        warnings.simplefilter("error")
        key = cursor_key()
    # salted_hmac's construction: HMAC keyed with hash(key_salt + secret), here SHA-256.
    derived = hashlib.sha256(b"beammcp_django.cursor" + SECRET.encode()).digest()
    assert key == hmac.new(derived, b"pagination", hashlib.sha256).digest()


def test_request_state_seals_and_opens_with_no_warning():
    sealer = SignedRequestState(max_age=60)
    with override_settings(SECRET_KEY=SECRET), warnings.catch_warnings():
        warnings.simplefilter("error")
        token = sealer.seal({"step": 2}, "binding")
        assert sealer.open(token, "binding") == {"step": 2}


OLD = "the-key-being-rotated-out-" + "o" * 40
NEW = "the-key-now-in-use-" + "n" * 40


def first_page_cursor() -> str:
    from beammcp_django.test import McpClient

    page = McpClient().list_page("tools/list")
    assert "nextCursor" in page, page
    return page["nextCursor"]


def second_page(cursor: str):
    from beammcp_django.test import McpClient

    return McpClient().list_page("tools/list", cursor)


def test_a_cursor_minted_before_a_key_rotation_is_accepted_through_the_fallbacks(settings):
    """As requestState is: SECRET_KEY=B with SECRET_KEY_FALLBACKS=[A] accepts A's cursors,
    and SECRET_KEY=B alone refuses them as invalid params."""
    from beammcp_django.test import McpError

    settings.BEAMMCP = {**settings.BEAMMCP, "PAGE_SIZE": 1}
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = OLD, []
    cursor = first_page_cursor()
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW, [OLD]
    assert second_page(cursor)["tools"], "the rotated-out key's cursor walks on"
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW, []
    try:
        second_page(cursor)
    except McpError as refused:
        assert refused.code == -32602
    else:
        raise AssertionError("a cursor of a key no longer listed must be refused")
