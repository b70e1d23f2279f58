"""requestState sealed with Django's signing: integrity, expiry, binding, key rotation."""

import pytest
from django.core import signing
from django.test import override_settings

from beammcp_django.protocol.round_trips import InvalidState
from beammcp_django.servers.signing import SignedRequestState

BINDING = "tools/call\x00greet\x00abc"


def test_a_sealed_state_opens_to_the_same_value_for_the_same_binding():
    codec = SignedRequestState(max_age=60)
    token = codec.seal({"step": 2, "names": ["a"]}, BINDING)
    assert codec.open(token, BINDING) == {"step": 2, "names": ["a"]}


def test_a_tampered_token_fails_its_integrity_check():
    codec = SignedRequestState(max_age=60)
    token = codec.seal("asked", BINDING)
    with pytest.raises(InvalidState, match="integrity"):
        codec.open(token + "-TAMPERED", BINDING)


def test_a_token_for_another_request_is_refused():
    codec = SignedRequestState(max_age=60)
    token = codec.seal("asked", BINDING)
    with pytest.raises(InvalidState, match="another request"):
        codec.open(token, "tools/call\x00greet\x00other")


def test_an_expired_token_is_refused(monkeypatch):
    codec = SignedRequestState(max_age=5)
    token = codec.seal("asked", BINDING)
    real_time = signing.time.time
    monkeypatch.setattr(signing.time, "time", lambda: real_time() + 6)
    with pytest.raises(InvalidState, match="expired"):
        codec.open(token, BINDING)


def test_a_token_signed_before_a_key_rotation_opens_under_the_fallback_key():
    codec = SignedRequestState(max_age=60)
    with override_settings(SECRET_KEY="old-key-" + "x" * 40):
        token = codec.seal("asked", BINDING)
    with override_settings(
        SECRET_KEY="new-key-" + "y" * 40, SECRET_KEY_FALLBACKS=["old-key-" + "x" * 40]
    ):
        assert codec.open(token, BINDING) == "asked"
    with (
        override_settings(SECRET_KEY="new-key-" + "y" * 40, SECRET_KEY_FALLBACKS=[]),
        pytest.raises(InvalidState, match="integrity"),
    ):
        codec.open(token, BINDING)


def test_an_expired_state_is_32602_through_the_server_before_the_host_runs(monkeypatch):
    """The same expiry through the core and Django's codec: the retry is refused as invalid
    params naming the expiry, and the host's tool is not entered again."""
    from tests.protocol.test_mrtr import AskingCatalog, call_tool, server

    catalog = AskingCatalog()
    srv = server(catalog, SignedRequestState(max_age=5))
    first = call_tool(srv, {"elicitation": {}})["result"]
    assert first["resultType"] == "input_required"
    entered = len(catalog.contexts)
    real_time = signing.time.time
    monkeypatch.setattr(signing.time, "time", lambda: real_time() + 6)
    answer = {"action": "accept", "content": {"name": "Ada"}}
    reply = call_tool(
        srv,
        {"elicitation": {}},
        requestState=first["requestState"],
        inputResponses={"user": answer},
    )
    assert reply["error"]["code"] == -32602
    assert "expired" in reply["error"]["message"]
    assert len(catalog.contexts) == entered
