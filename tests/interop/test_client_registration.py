"""Dynamic Client Registration (RFC 7591) on the project's own authorization server: the
toolkit's endpoint (``DCR_ENABLED``) behind the package's bounds
(``beammcp_django.oauth.registration``), over real HTTP to the sample started as
docs/authorization.md says, with ``tests/oauth/registration_settings.py`` opening the
endpoint to anyone.

The official SDK's client registers itself (no client information stored, no metadata
document URL), signs a person in and calls a tool; the person is told the client chose its
own name. Registrations by hand show what each bound refuses, by name: a body over the size,
an ``application_type`` whose redirect URIs it does not admit, one address registering too
often (429 with ``Retry-After``), and the count of clients reached (403).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession

from tests.interop.test_sdk_oauth import Signed, run
from tests.interop.toolkit_support import REDIRECT_URI, AuthorizationServer

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

SETTINGS = "tests.oauth.registration_settings"


def start(directory: Path, per_address: int, clients: int) -> AuthorizationServer:
    return AuthorizationServer.start(
        directory,
        settings=SETTINGS,
        extra_env={
            "TEST_REGISTRATIONS_PER_ADDRESS": str(per_address),
            "TEST_REGISTERED_CLIENTS": str(clients),
        },
    )


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthorizationServer]:
    started = start(tmp_path_factory.mktemp("dcr-issuer"), per_address=50, clients=100)
    yield started
    started.server.stop()


def register(issuer: AuthorizationServer, body: bytes | dict[str, Any]) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(
        f"{issuer.origin}/o/register/",
        content=content,
        headers={"Content-Type": "application/json"},
        timeout=10,
    )


NATIVE = {
    "client_name": "By hand",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}


def test_the_sdk_registers_itself_signs_in_and_calls_a_tool(issuer):
    signed = Signed(issuer, "bob", registered=False, client_name="Registered Assistant")
    person, storage = signed.person, signed.storage

    async def scenario(session: ClientSession) -> list[str]:
        called = await session.call_tool("echo", {"text": "registered itself"})
        return [block.text for block in called.content]

    assert run(lambda: signed.session(scenario)) == ["registered itself"]
    assert storage.client is not None and storage.client.client_secret is None
    (page,) = person.consent_pages
    assert "This client registered itself here, and chose its own name" in page
    assert "<strong>That is this computer.</strong>" in page


def test_a_public_client_is_registered_with_no_secret(issuer):
    answer = register(issuer, NATIVE)
    assert answer.status_code == 201, answer.text
    registered = answer.json()
    assert registered["client_id"] and "client_secret" not in registered
    assert registered["token_endpoint_auth_method"] == "none"


@pytest.mark.parametrize(
    "kind, redirect",
    [("web", REDIRECT_URI), ("native", "http://client.example/callback")],
)
def test_a_redirect_uri_its_application_type_does_not_admit_is_refused_by_name(
    issuer, kind, redirect
):
    answer = register(issuer, {**NATIVE, "application_type": kind, "redirect_uris": [redirect]})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_redirect_uri"
    assert answer.json()["error_description"].startswith(f"a {kind} client's redirect URI is ")


def test_a_registered_client_replacing_its_metadata_is_held_to_the_same_rules(issuer):
    registered = register(issuer, NATIVE).json()
    manage = registered["registration_client_uri"]
    token = registered["registration_access_token"]
    replaced = httpx2.put(
        manage,
        json={**NATIVE, "client_id": registered["client_id"], "application_type": "web"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert replaced.status_code == 400 and replaced.json()["error"] == "invalid_redirect_uri"


def test_metadata_over_the_size_is_refused_unparsed(issuer):
    answer = register(issuer, {**NATIVE, "client_name": "x" * 3000})
    assert answer.status_code == 413
    assert answer.json() == {
        "error": "invalid_client_metadata",
        "error_description": "the client metadata is over 2048 bytes "
        "(BEAMMCP['CLIENT_REGISTRATION']['METADATA_BYTES'])",
    }


def test_the_count_and_the_rate_per_address_are_bounded(tmp_path):
    bounded = start(tmp_path, per_address=3, clients=2)
    try:
        assert [register(bounded, NATIVE).status_code for _ in range(2)] == [201, 201]
        full = register(bounded, NATIVE)
        assert full.status_code == 403
        assert full.json()["error_description"] == (
            "registration is closed: 2 clients are registered "
            "(BEAMMCP['CLIENT_REGISTRATION']['CLIENTS'])"
        )
        too_often = register(bounded, NATIVE)
        assert too_often.status_code == 429
        assert 1 <= int(too_often.headers["retry-after"]) <= 10**8  # the rest of the window
        assert too_often.json()["error_description"] == (
            "this address has asked for 3 registrations in 100000000 s "
            "(BEAMMCP['CLIENT_REGISTRATION']['PER_ADDRESS'])"
        )
    finally:
        bounded.server.stop()
