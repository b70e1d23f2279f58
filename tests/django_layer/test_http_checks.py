"""The HTTP endpoint's settings with no default, checked at startup once it is routed."""

import pytest
from django.core.checks import run_checks
from django.test import override_settings

pytestmark = pytest.mark.with_http_endpoint

SERVED = {
    "ALLOWED_ORIGINS": ["http://localhost:8000"],
    "AUTHORIZE": "beammcp_django.authorization.allow_all",
}


def ids(**beammcp):
    with override_settings(BEAMMCP=beammcp):
        return [message.id for message in run_checks(tags=["beammcp"])]


def test_the_sample_project_routes_the_endpoint_with_every_protection_active():
    assert ids(**SERVED) == []


def test_a_routed_endpoint_without_allowed_origins_is_e018():
    assert ids(AUTHORIZE=SERVED["AUTHORIZE"]) == ["beammcp.E018"]


def test_any_origin_must_be_written_out_and_then_passes():
    assert ids(ALLOWED_ORIGINS="any", AUTHORIZE=SERVED["AUTHORIZE"]) == []
    assert ids(ALLOWED_ORIGINS="*", AUTHORIZE=SERVED["AUTHORIZE"]) == ["beammcp.E018"]


def test_a_routed_endpoint_without_an_authorize_hook_is_e019():
    assert ids(ALLOWED_ORIGINS=SERVED["ALLOWED_ORIGINS"]) == ["beammcp.E019"]


@pytest.mark.parametrize(
    "hook", ["no_such_module.allow", "beammcp_django.authorization.Refusal.status"]
)
def test_an_authorize_hook_that_cannot_be_imported_or_called_is_e019(hook):
    assert ids(ALLOWED_ORIGINS=SERVED["ALLOWED_ORIGINS"], AUTHORIZE=hook) == ["beammcp.E019"]


def test_an_asgi_application_without_the_router_is_w002():
    with override_settings(ASGI_APPLICATION="tests_plain_asgi.application"):
        assert ids(**SERVED) == ["beammcp.W002"]
    with override_settings(ASGI_APPLICATION=None):
        assert ids(**SERVED) == ["beammcp.W002"]
