"""The django-oauth-toolkit section of docs/authorization.md, as written: its settings and
its routes are run, and must be what the sample runs under ``BEAMMCP_SAMPLE_AUTH=oauth``
(with the page's resource, ``https://mcp.example.com/mcp``), which passes ``manage.py check``
and serves the RFC 8414 metadata the page says. Its commands are run by
``tests/interop/test_sdk_oauth.py``, which starts the server with them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from typing import Any

import pytest

from tests.databases import fresh_database_url
from tests.interop.toolkit_support import REDIRECT_URI, documented_block, documented_commands
from tests.support import REPO_ROOT, manage

RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://mcp.example.com/o"

# What the sample's settings and URLconf say under the switch, and the page's routes run
# beside them (they import the toolkit, installed only there), printed by that process.
SAMPLE_SAYS = """
import json, os
from django.conf import settings
from django.test import Client
from django.urls import include, path
from sample_project import urls
documented = {"path": path, "include": include, "urlpatterns": []}
exec(os.environ["DOCUMENTED_URLS"], documented)
metadata = Client().get("/.well-known/oauth-authorization-server/o", HTTP_HOST="127.0.0.1")
print(json.dumps({
    "oauth2_provider": "oauth2_provider" in settings.INSTALLED_APPS,
    "LOGIN_URL": settings.LOGIN_URL,
    "OAUTH2_PROVIDER": settings.OAUTH2_PROVIDER,
    "AUTHORIZE": settings.BEAMMCP["AUTHORIZE"],
    "OAUTH": settings.BEAMMCP["OAUTH"],
    "routes": [str(p.pattern) for p in urls.urlpatterns[3:]],
    "documented_routes": [str(p.pattern) for p in documented["urlpatterns"]],
    "metadata": metadata.json(),
}))
"""


@pytest.fixture(scope="module")
def sample_env() -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "sample_project.settings"}
    env.update(BEAMMCP_SAMPLE_AUTH="oauth", BEAMMCP_SAMPLE_RESOURCE=RESOURCE)
    env["DOCUMENTED_URLS"] = documented_block("toolkit-urls", "```python")
    return env


@pytest.fixture(scope="module")
def sample(sample_env: dict[str, str]) -> dict[str, Any]:
    printed = manage(sample_env, "shell", "-v", "0", "-c", SAMPLE_SAYS).stdout
    return json.loads(printed.decode().strip().splitlines()[-1])


def documented_settings() -> dict[str, Any]:
    namespace: dict[str, Any] = {"INSTALLED_APPS": [], "BEAMMCP": {}}
    exec(compile(documented_block("toolkit-settings", "```python"), "docs", "exec"), namespace)
    return namespace


def test_the_documented_settings_are_the_samples(sample):
    documented = documented_settings()
    assert documented["INSTALLED_APPS"] == ["oauth2_provider"] and sample["oauth2_provider"]
    assert documented["LOGIN_URL"] == sample["LOGIN_URL"]
    assert documented["OAUTH2_PROVIDER"] == sample["OAUTH2_PROVIDER"]
    assert documented["OAUTH2_PROVIDER"]["PKCE_REQUIRED"] is True
    assert documented["BEAMMCP"]["AUTHORIZE"] == sample["AUTHORIZE"]
    assert documented["BEAMMCP"]["OAUTH"] == sample["OAUTH"]
    assert sample["OAUTH"]["AUTHORIZATION_SERVERS"] == [ISSUER]


def test_the_documented_routes_are_the_samples(sample):
    assert sample["documented_routes"] == sample["routes"]
    assert sample["routes"] == [
        "o/",
        ".well-known/oauth-authorization-server/o",
        "accounts/login/",
    ]


def test_the_metadata_route_serves_the_issuers_rfc_8414_document(sample):
    metadata = sample["metadata"]
    assert metadata["issuer"] == ISSUER
    assert metadata["authorization_endpoint"] == f"{ISSUER}/authorize/"
    assert metadata["token_endpoint"] == f"{ISSUER}/token/"
    assert "S256" in metadata["code_challenge_methods_supported"]
    assert "registration_endpoint" not in metadata  # clients are registered beforehand
    assert set(metadata["scopes_supported"]) == {"demo.read", "demo.write"}


def test_the_issuer_advertises_oauth_2_1_grants_only_and_names_itself_in_responses(sample):
    """No implicit or password grant, no plain PKCE (RFC 9700, OAuth 2.1); RFC 9207's iss;
    Client ID Metadata Documents."""
    metadata = sample["metadata"]
    assert metadata["grant_types_supported"] == [
        "authorization_code",
        "client_credentials",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:device_code",
    ]
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    # Clients that register themselves name their metadata document (CIMD).
    assert metadata["client_id_metadata_document_supported"] is True


def test_the_sample_under_the_switch_passes_the_checks_warning_only_of_its_mis_annotated_tool(
    sample_env,
):
    # current_conditions is mis-annotated on purpose: the connectome's audit (W008) names it.
    done = manage(sample_env, "check")
    assert b"System check identified 1 issue (0 silenced)" in done.stderr
    assert b"(beammcp.W008) tool 'current_conditions'" in done.stderr


def test_the_documented_commands_end_in_the_server_and_register_a_public_client():
    commands = documented_commands()
    assert commands[0] == "export BEAMMCP_SAMPLE_AUTH=oauth"
    assert commands[-1] == "python manage.py mcp_serve"
    (register,) = [line for line in commands if "mcp_register_client" in line]
    assert f"--redirect-uri {REDIRECT_URI}" in register


def test_the_documented_registration_makes_a_public_client_and_prints_no_secret(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "sample_project.settings"}
    env.update(BEAMMCP_SAMPLE_AUTH="oauth", DATABASE_URL=fresh_database_url(tmp_path))
    manage(env, "migrate", "-v", "0")
    (register,) = [line for line in documented_commands() if "mcp_register_client" in line]
    printed = manage(env, *shlex.split(register)[2:]).stdout.decode()
    assert printed == (
        "Registered the public client 'mcp-client' (MCP client): authorization code with "
        f"PKCE, no secret; answers go to {REDIRECT_URI}\n"
    )
    stored = manage(
        env,
        "shell",
        "-v",
        "0",
        "-c",
        "from oauth2_provider.models import Application as A; "
        "a = A.objects.get(client_id='mcp-client'); "
        "print(a.client_type, a.authorization_grant_type, repr(a.client_secret))",
    ).stdout.decode()
    assert stored.split() == ["public", "authorization-code", "''"]
    again = subprocess.run(
        [sys.executable, *shlex.split(register)[1:]],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 1
    assert b"a client with the id 'mcp-client' is already registered" in again.stderr
