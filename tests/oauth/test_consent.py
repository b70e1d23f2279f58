"""What the consent screen says of a client (``beammcp_django.oauth.consent.shown_client``):
where its document came from, where the answer goes, whether that is this computer. The
screen itself, with a document fetched over https, is held end to end by
``tests/interop/test_client_documents.py``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from beammcp_django.oauth.consent import shown_client


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
