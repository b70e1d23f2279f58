"""``OAUTH["JWT"]`` checked at startup (``beammcp.E137``, with the rest of ``OAUTH``): each
rule refused naming its key, the authorization page's settings passing as written, and the
validator built from them without a fetch."""

from __future__ import annotations

import types
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from beammcp_django.checks.settings import setting_problems
from beammcp_django.oauth.bearer import bearer_authorizer
from beammcp_django.oauth.jwt import JwtTokens
from tests.oauth.issuer import claims
from tests.support import REPO_ROOT

SERVED = {
    "ALLOWED_ORIGINS": ["http://localhost:8000"],
    "AUTHORIZE": "beammcp_django.oauth.bearer.authorize",
}
JWT_TOKENS = "beammcp_django.oauth.jwt.JwtTokens"
ISSUER = "https://login.example.com/o"
OAUTH = {
    "RESOURCE": "http://127.0.0.1:8000/mcp",
    "AUTHORIZATION_SERVERS": [ISSUER],
    "TOKENS": JWT_TOKENS,
    "JWT": {"ISSUER": ISSUER, "JWKS_URL": "https://login.example.com/o/jwks"},
}
PAGE = (REPO_ROOT / "docs" / "authorization.md").read_text(encoding="utf-8")


def ids(**beammcp: Any) -> list[str]:
    with override_settings(BEAMMCP={**SERVED, **beammcp}):
        return [message.id for message in run_checks(tags=["beammcp"])]


def problems_with(**jwt: Any) -> list[str]:
    oauth = {**OAUTH, "JWT": {**OAUTH["JWT"], **jwt}}
    with override_settings(BEAMMCP={**SERVED, "OAUTH": oauth}):
        return [problem.message for problem in setting_problems()]


def block(marker: str) -> str:
    return PAGE.split(f"<!-- authorization: {marker} -->\n```python\n", 1)[1].split("```", 1)[0]


def test_a_complete_jwt_configuration_passes():
    assert ids(OAUTH=OAUTH) == []


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"ALGORITHMS": ["none"]}, "['ALGORITHMS'] holds 'none'"),
        ({"ALGORITHMS": ["RS256", "HS256"]}, "['ALGORITHMS'] holds 'HS256', a shared-secret"),
        ({"ALGORITHMS": ["RSA-OAEP"]}, "is not an asymmetric JWS algorithm"),
        ({"ALGORITHMS": []}, "['ALGORITHMS'] must be a non-empty list"),
        ({"ISSUER": "https://elsewhere.example/o"}, "is not one of AUTHORIZATION_SERVERS"),
        ({"ISSUER": "http://login.example.com/o"}, "['ISSUER'] is http on a host"),
        ({"ISSUER": None}, "['ISSUER'] is not set"),
        ({"JWKS_URL": None}, "['JWKS_URL'] is not set"),
        ({"JWKS_URL": "http://login.example.com/jwks"}, "['JWKS_URL'] is http on a host"),
        ({"TYP": ""}, "['TYP'] must be"),
        ({"LEEWAY_SECONDS": -1}, "['LEEWAY_SECONDS'] must be a number >= 0"),
        ({"JWKS_CACHE_SECONDS": 0}, "['JWKS_CACHE_SECONDS'] must be a number > 0"),
        ({"JWKS_TIMEOUT_SECONDS": True}, "['JWKS_TIMEOUT_SECONDS'] must be a number > 0"),
        ({"JWKS_REFETCH_SECONDS": 600}, "must not exceed JWKS_CACHE_SECONDS"),
        ({"JWKS_MAX_BYTES": 10}, "['JWKS_MAX_BYTES'] must be an integer >= 1024"),
        ({"PRINCIPAL": "no_such_module.user_of"}, "which cannot be imported"),
        ({"PRINCIPAL": "tests.oauth.issuer.ISSUER"}, "which is not callable"),
        ({"KEYS_URL": "https://x.example"}, "['JWT'] has the unknown key 'KEYS_URL'"),
    ],
)
def test_each_jwt_rule_is_e137_naming_its_key(changed, named):
    found = problems_with(**changed)
    assert len(found) == 1 and found[0].startswith("BEAMMCP['OAUTH']['JWT']"), found
    assert named in found[0], found
    oauth = {**OAUTH, "JWT": {**OAUTH["JWT"], **changed}}
    assert ids(OAUTH=oauth) == ["beammcp.E137"]


def test_the_jwt_validator_without_its_settings_is_e137():
    oauth = {key: value for key, value in OAUTH.items() if key != "JWT"}
    with override_settings(BEAMMCP={**SERVED, "OAUTH": oauth}):
        (problem,) = setting_problems()
    assert problem.message == (
        "BEAMMCP['OAUTH']['JWT'] must be set for the JWT validator: its ISSUER and JWKS_URL "
        "at least"
    )
    assert ids(OAUTH={**OAUTH, "JWT": "https://login.example.com/o"}) == ["beammcp.E137"]


def test_the_jwt_settings_on_the_authorization_page_pass_as_written_and_build_the_validator():
    namespace = {"BEAMMCP": dict(SERVED)}
    exec(compile(block("jwt"), "docs/authorization.md", "exec"), namespace)
    written = namespace["BEAMMCP"]
    assert written["OAUTH"]["TOKENS"] == JWT_TOKENS
    assert ids(**written) == []
    with override_settings(BEAMMCP=written):
        tokens = bearer_authorizer().tokens
        assert isinstance(tokens, JwtTokens)
        assert tokens.settings.audience == "https://mcp.example.com/mcp"
        assert tokens.settings.algorithms == ("RS256", "ES256")
        assert tokens.keys.fetches == 0  # nothing is fetched before the first token


@pytest.mark.django_db
def test_the_principal_hook_on_the_authorization_page_maps_a_subject_to_its_user(
    django_user_model,
):
    module = types.ModuleType("mcp_auth")
    exec(compile(block("jwt-principal"), "docs/authorization.md", "exec"), vars(module))
    ada = django_user_model.objects.create_user("ada")
    django_user_model.objects.create_user("grace", is_active=False)
    assert module.user_of(claims("ada")) == ada
    assert module.user_of(claims("grace")) is None
    assert module.user_of(claims("nobody")) is None
