"""The JWT validator through a real ``mcp_serve`` process: JWTs signed by a test key pair,
the issuer's JWKS served by a real HTTP server on a loopback thread of this test process,
fetched by the server process as from any issuer; each token's ``sub`` is a Django user in
the server's database, found by the host's ``PRINCIPAL`` hook.

A valid token lists and calls tools as its user; a token for another audience, from another
issuer or expired is 401 ``invalid_token`` with the spec's challenge and nothing else, the
server log naming why; a token lacking a scope is 403 ``insufficient_scope``; an issuer
whose JWKS cannot be fetched fails closed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import ServerProcess, manage, message, post, start_server
from tests.http.oauth_support import INVALID, METADATA_URL, call, log, resource_server_env, text
from tests.oauth.issuer import JwksServer, KeyPair, claims, mint

pytestmark = pytest.mark.orm  # the server process reads its users

KEY = KeyPair.rsa("issuer-key-1")
ADA = "auth.User:ada"


@pytest.fixture(scope="module")
def issuer() -> Iterator[JwksServer]:
    server = JwksServer([KEY]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def resource(
    tmp_path_factory: pytest.TempPathFactory, issuer: JwksServer
) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("jwt")
    env = resource_server_env(directory, {"BEAMMCP_TEST_JWKS_URL": issuer.url})
    create_ada = "from django.contrib.auth.models import User; User.objects.create_user('ada')"
    manage(env, "shell", "-c", create_ada)
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


def list_tools(server: ServerProcess, token: str) -> list[str]:
    response = post(
        server.port,
        message("list", "tools/list", {}),
        add=[("Authorization", f"Bearer {token}")],
    )
    assert response.status == 200, (response.status, response.body)
    return sorted(tool["name"] for tool in response.json()["result"]["tools"])


def test_a_jwt_from_the_issuer_lists_and_calls_tools_as_its_user(resource):
    token = mint(KEY, claims("ada", ["notes"]))
    assert "principal_whoami" in list_tools(resource, token)
    assert text(call(resource, token, "principal_whoami")) == ADA
    # "notes" implies notes.read and notes.write (SCOPES_IMPLY), as with any validator.
    assert text(call(resource, token, "principal_write_note")) == (
        f"{ADA} notes notes.read notes.write"
    )


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        (
            {"audience": "https://other.example/mcp"},
            "aud 'https://other.example/mcp' does not name this resource",
        ),
        ({"issuer": "https://evil.example/o"}, "iss 'https://evil.example/o' is not the issuer"),
        ({"expires_in": -120}, "expired (exp is past)"),
    ],
    ids=["aud", "iss", "exp"],
)
def test_a_jwt_for_another_audience_issuer_or_expired_is_401_named_in_the_log(
    resource, changed, named
):
    response = call(resource, mint(KEY, claims("ada", **changed)), "principal_whoami")
    assert response.status == 401
    assert response.header("www-authenticate") == INVALID
    assert response.body == b""  # no traceback, no reason: those are the log's
    assert f"the validator refused the token: {named}" in log(resource)


def test_a_jwt_without_a_needed_scope_is_403_insufficient_scope(resource):
    response = call(resource, mint(KEY, claims("ada", ["notes.read"])), "principal_write_note")
    assert response.status == 403
    assert response.header("www-authenticate") == (
        f'Bearer error="insufficient_scope", scope="notes.write", '
        f'resource_metadata="{METADATA_URL}"'
    )


def test_a_subject_with_no_user_is_401_named_in_the_log(resource):
    response = call(resource, mint(KEY, claims("mallory")), "principal_whoami")
    assert response.status == 401 and response.header("www-authenticate") == INVALID
    assert "the PRINCIPAL hook names nobody for 'mallory'" in log(resource)


def test_the_jwks_is_fetched_once_for_many_tokens(resource, issuer):
    text(call(resource, mint(KEY, claims("ada")), "principal_whoami"))
    fetched = issuer.requests
    for _ in range(5):
        assert text(call(resource, mint(KEY, claims("ada")), "principal_whoami")) == ADA
    assert issuer.requests == fetched == 1


def test_a_rotated_key_is_picked_up_and_an_issuer_down_fails_closed(resource, issuer):
    rotated = KeyPair.ec("issuer-key-2")
    issuer.publish([KEY, rotated])
    time.sleep(1.1)  # past JWKS_REFETCH_SECONDS since the last fetch
    assert text(call(resource, mint(rotated, claims("ada")), "principal_whoami")) == ADA
    issuer.status = 503
    time.sleep(1.1)
    unknown = KeyPair.rsa("issuer-key-3")
    response = call(resource, mint(unknown, claims("ada")), "principal_whoami")
    assert response.status == 401 and response.header("www-authenticate") == INVALID
    assert response.body == b""
    assert f"the JWKS at {issuer.url} could not be fetched: it answered HTTP 503" in log(resource)
    # The keys already fetched are still trusted for their cache's life.
    assert text(call(resource, mint(KEY, claims("ada")), "principal_whoami")) == ADA
    issuer.status = 200
