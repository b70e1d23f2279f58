"""The admin's view preview through Django's test clients, on the sample: the section a view's
page carries (or why it cannot), the sandbox proxy's refusals by name and the policy it sends,
and the preview endpoint: staff only, under the CSRF check, serving MCP as the logged-in user
(the browser walk is ``test_admin_preview.py``)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import User
from django.test import AsyncClient, Client, override_settings
from django.urls import reverse

from beammcp_django.authorization import Refusal

pytestmark = pytest.mark.django_db

SANDBOX = reverse("admin:beammcp_django_mcpcatalog_view_sandbox")
ENDPOINT = reverse("admin:beammcp_django_mcpcatalog_view_endpoint")
CHART = reverse(
    "admin:beammcp_django_mcpcatalog_entry", args=("resource", quote("ui://weather/forecast-chart"))
)
NOT_AN_ORIGIN = "the host parameter is not the origin of another page, scheme://host[:port]"
# The sample's VIEW_SANDBOX_ORIGIN: the proxy is served there alone.
SANDBOX_HOST = "localhost:8000"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "preview-test", "version": "1"},
    },
}


def sandbox(served_at: str = SANDBOX_HOST, **query: str):
    """The sandbox proxy's answer to ``query``, asked of the host ``served_at``."""
    return Client().get(f"{SANDBOX}?{urlencode(query)}", headers={"host": served_at})


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({}, NOT_AN_ORIGIN),
        ({"host": "https://admin.example.com/admin/"}, NOT_AN_ORIGIN),
        ({"host": "javascript:alert(1)"}, NOT_AN_ORIGIN),
        ({"host": "https://user@admin.example.com"}, NOT_AN_ORIGIN),
        # What would write past frame-ancestors into the policy header.
        ({"host": "http://a *"}, NOT_AN_ORIGIN),
        ({"host": "http://a; script-src-elem *"}, NOT_AN_ORIGIN),
        ({"host": "http://a.example\r\nX-Other: 1"}, NOT_AN_ORIGIN),
        # The sandbox's own origin is no page's.
        ({"host": "http://localhost:8000"}, NOT_AN_ORIGIN),
        ({"host": "https://a.example", "csp": "{"}, "the csp parameter is not JSON"),
        (
            {"host": "https://a.example", "csp": "x" * 8193},
            "the csp parameter is longer than 8192 characters",
        ),
        (
            {"host": "https://a.example", "csp": json.dumps({"connectDomains": ["*"]})},
            "the csp parameter.connectDomains holds '*', not an origin 'scheme://host[:port]' "
            "(https, http, wss or ws; the first label may be '*')",
        ),
        (
            {"host": "https://a.example", "csp": json.dumps({"scriptDomains": []})},
            "the csp parameter has the key 'scriptDomains', which the page does not define",
        ),
    ],
)
def test_the_sandbox_proxy_refuses_what_it_cannot_carry_by_name(query, said):
    response = sandbox(**query)
    assert (response.status_code, response.content.decode()) == (400, said)
    assert "Content-Security-Policy" not in response


def test_the_sandbox_proxy_is_served_on_its_own_origin_alone():
    assert sandbox("testserver", host="http://a.example").status_code == 404
    with override_settings(BEAMMCP={**settings.BEAMMCP, "VIEW_SANDBOX_ORIGIN": None}):
        assert sandbox(host="http://a.example").status_code == 404


def test_the_sandbox_proxy_sends_the_view_s_policy_and_lets_the_page_frame_it():
    csp = {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example"],
    }
    response = sandbox(host="http://127.0.0.1:8000", csp=json.dumps(csp))
    assert response.status_code == 200
    assert "X-Frame-Options" not in response
    assert response["Content-Security-Policy"] == (
        "default-src 'none'; script-src 'unsafe-inline' https://cdn.example; "
        "style-src 'unsafe-inline' https://cdn.example; img-src data: https://cdn.example; "
        "font-src https://cdn.example; media-src data: https://cdn.example; "
        "connect-src https://api.example.com; frame-src 'none'; object-src 'none'; "
        "base-uri 'self'; form-action 'none'; frame-ancestors http://127.0.0.1:8000"
    )
    assert b"ui/notifications/sandbox-" in response.content


@pytest.fixture
def staff() -> User:
    return User.objects.create_superuser("admin", "a@b.invalid", "pw")


def test_a_view_s_page_says_why_it_cannot_preview(staff):
    client = Client()
    client.force_login(staff)
    # Django's test client is no ASGI server: the preview's calls need one.
    page = client.get(CHART).content.decode()
    assert 'id="view-preview"' in page
    assert "serve the admin with manage.py mcp_serve" in page
    assert "app-bridge.js" not in page


def test_a_view_s_page_needs_a_second_origin_for_its_sandbox(staff):
    async_to_sync(_a_view_s_page_needs_a_second_origin_for_its_sandbox)(staff)


async def _a_view_s_page_needs_a_second_origin_for_its_sandbox(staff: User) -> None:
    client = AsyncClient()
    await client.aforce_login(staff)
    unset = {**settings.BEAMMCP, "VIEW_SANDBOX_ORIGIN": None}
    with override_settings(BEAMMCP=unset):
        page = (await client.get(CHART)).content.decode()
    assert "Set BEAMMCP[&#x27;VIEW_SANDBOX_ORIGIN&#x27;] to an origin other than" in page
    stateless = {**settings.BEAMMCP, "HTTP_LEGACY_SESSIONS": False}
    with override_settings(BEAMMCP=stateless):
        page = (await client.get(CHART)).content.decode()
    assert "opens a 2025-11-25 session, which this endpoint does not serve here" in page
    same = {**settings.BEAMMCP, "VIEW_SANDBOX_ORIGIN": "http://testserver"}
    with override_settings(BEAMMCP=same):
        page = (await client.get(CHART)).content.decode()
    assert "this admin&#x27;s own origin: the sandbox proxy must be served from another" in page
    page = (await client.get(CHART)).content.decode()
    config = json.loads(
        page.split('id="mcp-view-preview-config" type="application/json">')[1].split("</script>")[0]
    )
    assert config["sandbox"] == "http://localhost:8000" + SANDBOX
    assert config["endpoint"] == ENDPOINT
    assert [tool["name"] for tool in config["tools"]] == ["get_forecast", "refresh_forecast"]
    assert config["tools"][1]["visibility"] == ["app"]


def test_the_preview_endpoint_answers_staff_only_under_the_csrf_check(staff):
    async_to_sync(_the_preview_endpoint_answers_staff_only_under_the_csrf_check)(staff)


async def _the_preview_endpoint_answers_staff_only_under_the_csrf_check(staff: User) -> None:
    body = json.dumps(INITIALIZE)
    headers = {"accept": "application/json, text/event-stream"}
    anonymous = await AsyncClient().post(ENDPOINT, body, "application/json", headers=headers)
    assert anonymous.status_code == 403
    assert (
        anonymous.content == b"the view preview's endpoint answers the admin's logged-in staff only"
    )

    # Logged in, but not staff: the admin's own rule.
    member = AsyncClient()
    await member.aforce_login(await User.objects.acreate(username="member"))
    refused = await member.post(ENDPOINT, body, "application/json", headers=headers)
    assert refused.status_code == 403

    guarded = AsyncClient(enforce_csrf_checks=True)
    await guarded.aforce_login(staff)
    refused = await guarded.post(ENDPOINT, body, "application/json", headers=headers)
    assert refused.status_code == 403
    assert b"CSRF" in refused.content
    # With the page's token (the cookie's, in the header), the same request is served.
    page = await guarded.get(CHART)
    token = page.cookies["csrftoken"].value
    served = await guarded.post(
        ENDPOINT, body, "application/json", headers={**headers, "x-csrftoken": token}
    )
    assert served.status_code == 200, served.content


def test_the_preview_endpoint_is_off_without_a_sandbox_origin_and_on_the_sandbox_s(staff):
    async_to_sync(_the_preview_endpoint_is_off_without_a_sandbox_origin_and_on_the_sandbox_s)(staff)


async def _the_preview_endpoint_is_off_without_a_sandbox_origin_and_on_the_sandbox_s(
    staff: User,
) -> None:
    client = AsyncClient()
    await client.aforce_login(staff)
    body, headers = json.dumps(INITIALIZE), {"accept": "application/json, text/event-stream"}
    with override_settings(BEAMMCP={**settings.BEAMMCP, "VIEW_SANDBOX_ORIGIN": None}):
        off = await client.post(ENDPOINT, body, "application/json", headers=headers)
    assert off.status_code == 404
    # Asked on the sandbox's origin (the sync client sets the Host header as given).
    elsewhere = Client()
    await sync_to_async(elsewhere.force_login)(staff)
    there = await sync_to_async(elsewhere.post)(
        ENDPOINT, body, "application/json", headers={**headers, "host": SANDBOX_HOST}
    )
    assert there.status_code == 404


def test_a_preview_s_caller_is_asked_again_and_refused_once_logged_out(staff):
    from beammcp_django.admin.view_preview import PreviewCaller, _still_admitted

    client = Client()
    client.force_login(staff)
    caller = PreviewCaller(staff.pk, client.session.session_key, admin.site)
    assert _still_admitted(caller) == staff
    staff.is_staff = False
    staff.save()
    assert isinstance(_still_admitted(caller), Refusal)
    staff.is_staff = True
    staff.save()
    client.logout()
    assert isinstance(_still_admitted(caller), Refusal)


async def listed_tools(user: User) -> set[str]:
    """The tools ``tools/list`` names through the preview endpoint, logged in as ``user``."""
    client = AsyncClient()
    await client.aforce_login(user)
    headers = {"accept": "application/json, text/event-stream"}
    response = await client.post(
        ENDPOINT, json.dumps(INITIALIZE), "application/json", headers=headers
    )
    assert response.status_code == 200, response.content
    headers = {
        **headers,
        "mcp-session-id": response["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    answer = await client.post(ENDPOINT, json.dumps(listing), "application/json", headers=headers)
    assert answer.status_code == 200, answer.content
    return {tool["name"] for tool in json.loads(answer.content)["result"]["tools"]}


def test_the_preview_endpoint_serves_mcp_as_the_logged_in_user(staff):
    async_to_sync(_the_preview_endpoint_serves_mcp_as_the_logged_in_user)(staff)


async def _the_preview_endpoint_serves_mcp_as_the_logged_in_user(staff: User) -> None:
    # delete_observation is listed to users holding its permission: the superuser, not a
    # staff user holding none (nor any caller of the sample's endpoint, who is no one).
    staffer = await User.objects.acreate(username="staffer", is_staff=True)
    assert "delete_observation" in await listed_tools(staff)
    assert "delete_observation" not in await listed_tools(staffer)
