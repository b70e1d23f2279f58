"""The bearer authorizer through a real ``mcp_serve`` process: the spec's 401 and 403
challenges, the Protected Resource Metadata document where clients look for it, a token for
another resource refused (no passthrough) whatever ``Host`` the request forges, an expired
token refused, the token cache, and host code never handed the caller's token.

Tokens are the signed claims of ``tests.principals.tokens`` (a host's validator, keeping the
contract), so each test says exactly what a token carries; django-oauth-toolkit's tokens and
JWTs are tested against their real issuers elsewhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    Response,
    ServerProcess,
    exchange,
    http_request,
    message,
    post,
    start_server,
)
from tests.http.oauth_support import (
    CHALLENGE,
    INVALID,
    METADATA_URL,
    call,
    log,
    resource_server_env,
    text,
)
from tests.principals.tokens import RESOURCE, mint


@pytest.fixture(scope="module")
def resource(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("oauth")
    env = resource_server_env(directory, {"BEAMMCP_TEST_OAUTH": "1"})
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


def get_metadata(server: ServerProcess, host: str = "127.0.0.1") -> Response:
    path = "/.well-known/oauth-protected-resource/mcp"
    return exchange(server.port, http_request(method="GET", path=path, host=host))


def test_no_token_is_401_naming_the_metadata_and_the_scopes(resource):
    response = call(resource, None, "principal_whoami")
    assert response.status == 401
    assert response.header("www-authenticate") == CHALLENGE
    assert response.body == b""


def test_the_metadata_document_is_served_where_the_challenge_points(resource):
    response = get_metadata(resource)
    assert response.status == 200
    assert response.header("access-control-allow-origin") == "*"
    assert json.loads(response.body) == {
        "resource": RESOURCE,
        "authorization_servers": ["http://127.0.0.1:8000/o"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes.read"],
        "resource_name": "Sample weather service",
    }


def test_a_forged_host_changes_neither_the_metadata_nor_the_tokens_accepted(resource):
    document = get_metadata(resource, host="evil.example")
    assert json.loads(document.body)["resource"] == RESOURCE
    # A token issued for the forged host's resource is not a token for this one...
    theirs = mint("ada", audience=["http://evil.example/mcp"])
    refused = call(resource, theirs, "principal_whoami", host="evil.example")
    assert refused.status == 401 and refused.header("www-authenticate") == INVALID
    # ...and a token for this resource is served whatever Host the request names.
    served = call(resource, mint("ada"), "principal_whoami", host="evil.example")
    assert text(served) == "caller:ada"


def test_a_valid_token_names_its_principal_and_scopes(resource):
    assert text(call(resource, mint("ada"), "principal_whoami")) == "caller:ada"
    # "notes" implies notes.read and notes.write (SCOPES_IMPLY): the broader scope suffices.
    assert text(call(resource, mint("ada", ["notes"]), "principal_write_note")) == (
        "caller:ada notes notes.read notes.write"
    )


def test_a_token_for_another_resource_is_refused_and_the_log_says_so(resource):
    for audience in (["https://other.example/mcp"], []):
        response = call(resource, mint("ada", audience=audience), "principal_whoami")
        assert response.status == 401
        assert response.header("www-authenticate") == INVALID
        assert response.body == b""
    assert "issued for another resource" in log(resource)


def test_an_expired_or_forged_token_is_refused(resource):
    expired = call(resource, mint("ada", expires_in=-5), "principal_whoami")
    assert expired.status == 401 and expired.header("www-authenticate") == INVALID
    forged = call(resource, mint("ada") + "x", "principal_whoami")
    assert forged.status == 401 and forged.header("www-authenticate") == INVALID
    not_bearer = post(
        resource.port,
        message("basic", "tools/list", {}),
        add=[("Authorization", "Basic YWRhOnB3")],
    )
    assert not_bearer.status == 401
    assert "expired" in log(resource) and "bad signature" in log(resource)
    assert text(call(resource, mint("ada"), "principal_whoami")) == "caller:ada"


def test_a_missing_scope_is_403_naming_it_and_the_metadata(resource):
    response = call(resource, mint("ada", ["notes.read"]), "principal_write_note")
    assert response.status == 403
    assert response.header("www-authenticate") == (
        f'Bearer error="insufficient_scope", scope="notes.write", '
        f'resource_metadata="{METADATA_URL}"'
    )
    assert response.json()["error"]["message"] == "insufficient_scope"


def test_host_code_is_never_handed_the_callers_token(resource):
    token = mint("ada", ["notes.read"])
    seen = text(call(resource, token, "principal_what_host_code_sees"))
    assert "caller:ada" in seen or "Caller(name='ada')" in seen
    assert token not in seen and token[:24] not in seen
