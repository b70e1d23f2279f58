"""The HTTP endpoint's settings with no default, checked at startup once it is routed."""

import pytest
from django.core.checks import run_checks
from django.test import override_settings
from django.urls import path

from beammcp_django.oauth.metadata import metadata_view
from sample_project import urls as sample_urls

pytestmark = pytest.mark.with_http_endpoint

SERVED = {
    "ALLOWED_ORIGINS": ["http://localhost:8000"],
    "AUTHORIZE": "beammcp_django.authorization.allow_all",
}


def ids(django=None, **beammcp):
    """The beammcp check ids under these BEAMMCP keys and other ``django`` settings, in one
    override (a nested one would reset SETTINGS_MODULE)."""
    with override_settings(BEAMMCP=beammcp, **(django or {})):
        return [message.id for message in run_checks(tags=["beammcp"])]


def test_the_sample_project_routes_the_endpoint_with_every_protection_active():
    assert ids(**SERVED) == []


def test_a_routed_endpoint_without_allowed_origins_is_e107():
    assert ids(AUTHORIZE=SERVED["AUTHORIZE"]) == ["beammcp.E107"]


def test_any_origin_must_be_written_out_and_then_passes():
    assert ids(ALLOWED_ORIGINS="any", AUTHORIZE=SERVED["AUTHORIZE"]) == []
    assert ids(ALLOWED_ORIGINS="*", AUTHORIZE=SERVED["AUTHORIZE"]) == ["beammcp.E107"]


def test_a_routed_endpoint_without_an_authorize_hook_is_e108():
    assert ids(ALLOWED_ORIGINS=SERVED["ALLOWED_ORIGINS"]) == ["beammcp.E108"]


@pytest.mark.parametrize(
    "hook", ["no_such_module.allow", "beammcp_django.authorization.Refusal.status"]
)
def test_an_authorize_hook_that_cannot_be_imported_or_called_is_e108(hook):
    assert ids(ALLOWED_ORIGINS=SERVED["ALLOWED_ORIGINS"], AUTHORIZE=hook) == ["beammcp.E108"]


# A settings module whose package has no asgi.py, so only ASGI_APPLICATION can count.
NO_SIBLING = "tests.django_layer.settings"


def test_an_asgi_application_without_the_router_is_w002():
    plain = "tests.http.mcphttp_app.plain_asgi.application"
    django = {"ASGI_APPLICATION": plain, "SETTINGS_MODULE": NO_SIBLING}
    assert ids(django, **SERVED) == ["beammcp.W002"]
    django = {"ASGI_APPLICATION": None, "SETTINGS_MODULE": NO_SIBLING}
    assert ids(django, **SERVED) == ["beammcp.W002"]


def test_an_asgi_py_beside_the_settings_built_with_the_router_is_recognised_unimported():
    """docs/transports.md's wiring, served by uvicorn with no ASGI_APPLICATION set: no
    false alarm, and the module is read, not imported (importing it would fail here)."""
    django = {
        "ASGI_APPLICATION": None,
        "SETTINGS_MODULE": "tests.django_layer.wired_project.settings",
    }
    assert ids(django, **SERVED) == []


def test_the_routed_asgi_application_passes_whatever_the_settings_module():
    django = {"ASGI_APPLICATION": "sample_project.asgi.application", "SETTINGS_MODULE": NO_SIBLING}
    assert ids(django, **SERVED) == []


REDIS_LAYER = "channels_redis.core.RedisChannelLayer"


@pytest.mark.parametrize(
    ("hosts", "warned"),
    [
        (["redis://127.0.0.1:6379/0"], True),  # redis-py 8's default read bound: 5 s
        ([("127.0.0.1", 6379)], True),
        ([{"address": "redis://127.0.0.1:6379/0", "socket_timeout": 5}], True),
        ([{"address": "redis://127.0.0.1:6379/0", "socket_timeout": 30}], False),
        ([{"address": "redis://127.0.0.1:6379/0", "socket_timeout": None}], False),
        (["redis://127.0.0.1:6379/0?socket_timeout=30"], False),
    ],
)
def test_a_redis_layer_whose_reads_time_out_within_its_blocking_poll_is_w005(hosts, warned):
    layers = {"default": {"BACKEND": REDIS_LAYER, "CONFIG": {"hosts": hosts}}}
    found = ids({"CHANNEL_LAYERS": layers}, **SERVED)
    assert found == (["beammcp.W005"] if warned else [])


# -- the OAuth resource's metadata document ----------------------------------------------------

OAUTH = {
    "RESOURCE": "http://127.0.0.1:8000/mcp",
    "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"],
}
PLAIN = {
    "ASGI_APPLICATION": "tests.http.mcphttp_app.plain_asgi.application",
    "SETTINGS_MODULE": NO_SIBLING,
}
# This module as a root URLconf: the sample's, plus the metadata document as a view.
urlpatterns = [
    *sample_urls.urlpatterns,
    path(".well-known/oauth-protected-resource/mcp", metadata_view),
]


def test_the_metadata_document_served_by_the_router_passes():
    assert ids(**SERVED, OAUTH=OAUTH) == []


def test_a_metadata_document_nothing_serves_is_e137():
    assert ids(PLAIN, **SERVED, OAUTH=OAUTH) == ["beammcp.E137", "beammcp.W002"]


def test_the_metadata_view_in_the_root_urlconf_serves_it_through_plain_django(client):
    with override_settings(ROOT_URLCONF=__name__):
        assert ids({**PLAIN, "ROOT_URLCONF": __name__}, **SERVED, OAUTH=OAUTH) == ["beammcp.W002"]
        with override_settings(BEAMMCP={**SERVED, "OAUTH": OAUTH}):
            response = client.get("/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == "*"
    assert response.json()["resource"] == OAUTH["RESOURCE"]


def test_the_resource_server_settings_in_the_authorization_page_pass_as_written():
    from tests.support import REPO_ROOT

    page = (REPO_ROOT / "docs" / "authorization.md").read_text(encoding="utf-8")
    block = page.split("<!-- authorization: resource-server -->\n```python\n", 1)[1]
    namespace = {"BEAMMCP": dict(SERVED)}
    exec(compile(block.split("```", 1)[0], "docs/authorization.md", "exec"), namespace)
    assert namespace["BEAMMCP"]["AUTHORIZE"] == "beammcp_django.oauth.bearer.authorize"
    assert ids(**namespace["BEAMMCP"]) == []
