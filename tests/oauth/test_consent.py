"""What the consent screen says of a client (``beammcp_django.oauth.consent.shown_client``):
where its document came from, where the answer goes, whether that is this computer. The
screen itself, with a document fetched over https, is held end to end by
``tests/interop/test_client_documents.py``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from beammcp_django.oauth.consent import asks_every_time, shown_client


def application(client_id: str, source: str = "cimd", name: str = "Assistant") -> object:
    """The fields of django-oauth-toolkit's ``Application`` the screen reads."""
    return SimpleNamespace(client_id=client_id, registration_source=source, name=name)


def test_a_self_registered_client_is_shown_with_its_document_s_host_and_port():
    shown = shown_client(
        application("https://app.example.com:8443/oauth/client.json"),
        "https://app.example.com/callback",
    )
    assert shown.document_host == "app.example.com:8443"
    assert shown.redirect_host == "app.example.com"
    assert not shown.on_this_computer


def test_a_client_registered_here_names_no_document_host():
    shown = shown_client(application("mcp-client", source="manual"), "https://a.example/cb")
    assert shown.document_host is None


def test_a_look_alike_host_is_shown_in_its_ascii_form():
    # "\\u0430pp.example.com": app.example.com with a Cyrillic a, a homograph of it.
    shown = shown_client(application("https://\u0430pp.example.com/c.json"), "https://x.example/")
    assert shown.document_host == "xn--pp-6kc.example.com"


@pytest.mark.parametrize(
    "redirect",
    ["http://127.0.0.1:33418/callback", "http://[::1]:9/cb", "http://localhost/cb"],
)
def test_an_answer_sent_to_this_computer_is_said_to_be(redirect):
    assert shown_client(application("https://a.example/c.json"), redirect).on_this_computer


def test_an_app_s_own_scheme_is_named_when_there_is_no_host():
    shown = shown_client(application("https://a.example/c.json"), "com.example.app:/callback")
    assert shown.redirect_host == "com.example.app:" and not shown.on_this_computer


@pytest.mark.parametrize("host", ["localhost.", "[::ffff:127.0.0.1]", "0.0.0.0", "a.localhost"])
def test_every_spelling_of_this_computer_is_recognised(host):
    assert shown_client(
        application("https://a.example/c.json"), f"http://{host}/cb"
    ).on_this_computer


def test_an_ipv6_host_keeps_its_brackets_beside_its_port():
    shown = shown_client(application("https://[2001:db8::1]:8443/c.json"), "http://[::1]:9/cb")
    assert shown.document_host == "[2001:db8::1]:8443" and shown.redirect_host == "[::1]:9"


def test_direction_and_control_characters_are_taken_out_of_a_name():
    shown = shown_client(application("https://a.example/c.json", name="Good\u202eevil\x00"), "x:/")
    assert shown.name == "Goodevil"


def test_a_dynamically_registered_client_is_not_presented_as_vetted():
    shown = shown_client(application("a1b2", source="dcr"), "https://a.example/cb")
    assert shown.origin == "registered itself" and shown.document_host is None


@pytest.mark.parametrize(
    "client_id, redirect, asked",
    [
        ("https://a.example/c.json", "https://a.example/cb", True),
        ("mcp-client", "http://127.0.0.1:33418/callback", True),
        ("mcp-client", "https://client.example/cb", False),
    ],
)
def test_who_is_asked_again_every_time(client_id, redirect, asked):
    assert asks_every_time(client_id, redirect) is asked
