"""``beammcp_django.test``: the test client host teams use for their catalog.

Against the sample catalog: each kind of call at both revisions (2026-07-28 through the HTTP
endpoint, 2025-11-25 through the stdio core), pagination, errors as ``McpError`` with the
server's code, message and data, the authorize hook seeing the test's headers, the endpoint's
own rules still holding, header parameters mirrored as a real client must, and the ORM-using
sample tool inside ``TestCase`` (its rows in the test's transaction), ``TransactionTestCase``
and an async ``TestCase`` test. Also: docs/testing.md's example is the sample's test module,
and its command runs it.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import types
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test import TestCase, TransactionTestCase, override_settings
from django.urls import reverse
from django.utils.module_loading import import_string

from beammcp_django.authorization import HttpRequestInfo, Refusal
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.test import AsyncMcpClient, HttpRefusal, McpClient, McpError
from sample_project.demo.models import Observation
from tests.support import REPO_ROOT, SAMPLE_TOOLS, manage

pytestmark = [pytest.mark.django_db, pytest.mark.with_http_endpoint]

REVISIONS = ("2026-07-28", "2025-11-25")
TOOLS = SAMPLE_TOOLS


# -- each kind of call, at both revisions ------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_tool_call_answers_its_content_and_structured_result(revision):
    mcp = McpClient(revision)
    echoed = mcp.call_tool("echo", {"text": "héllo"})
    assert echoed["content"] == [{"type": "text", "text": "héllo"}]
    assert (echoed.text, echoed.is_error, echoed.structured) == ("héllo", False, None)
    forecast = mcp.call_tool("get_forecast", {"city": "oslo", "days": 2})
    assert forecast.structured["city"] == "Oslo"
    assert [day["day"] for day in forecast.structured["days"]] == [1, 2]
    assert json.loads(forecast.text) == forecast.structured  # the text block mirrors it


def test_2026_07_28_goes_through_the_http_endpoint():
    result = McpClient().call_tool("echo", {"text": "x"})
    assert result.status == 200
    assert result.headers["content-type"] == "application/json"
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "beammcp-sample-weather"
    )


def test_2025_11_25_goes_through_the_stdio_core_after_initialize():
    mcp = McpClient("2025-11-25")
    assert mcp.initialize_result is None  # opened on the first request
    result = mcp.call_tool("echo", {"text": "x"})
    assert mcp.initialize_result["protocolVersion"] == "2025-11-25"
    assert mcp.initialize_result["serverInfo"]["name"] == "beammcp-sample-weather"
    # The handshake era's shape: no resultType, no serverInfo in _meta, no HTTP at all.
    assert "resultType" not in result and "_meta" not in result
    assert (result.status, result.headers) == (None, {})


@pytest.mark.parametrize("revision", REVISIONS)
def test_resources_and_prompts_are_read_and_got(revision):
    mcp = McpClient(revision)
    stations = mcp.read_resource("weather://stations")
    assert stations["contents"][0]["uri"] == "weather://stations"
    assert "oslo" in json.loads(stations.text)
    prompt = mcp.get_prompt("forecast_briefing", {"city": "lisbon"})
    assert prompt["description"] == "Briefing for Lisbon"
    assert "plain weather briefing for Lisbon" in prompt.text


@pytest.mark.parametrize("revision", REVISIONS)
def test_everything_the_catalog_offers_is_listed(revision):
    mcp = McpClient(revision)
    assert [tool["name"] for tool in mcp.list_tools()] == TOOLS
    uris = [resource["uri"] for resource in mcp.list_resources()]
    # The connectome resources are shown to the admin's rule's users alone, not to nobody.
    assert "weather://stations" in uris and "connectome://declared" not in uris
    templates = [template["uriTemplate"] for template in mcp.list_resource_templates()]
    assert templates == ["weather://observations/{city}"]
    assert [prompt["name"] for prompt in mcp.list_prompts()] == ["forecast_briefing"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_listings_walk_every_page_and_one_page_is_exposed(revision, settings):
    settings.BEAMMCP = {**settings.BEAMMCP, "PAGE_SIZE": 1}
    mcp = McpClient(revision)
    assert [tool["name"] for tool in mcp.list_tools()] == TOOLS
    first = mcp.list_page("tools/list")
    assert [tool["name"] for tool in first["tools"]] == [TOOLS[0]]
    second = mcp.list_page("tools/list", first["nextCursor"])
    assert [tool["name"] for tool in second["tools"]] == [TOOLS[1]]
    last = second
    for _ in TOOLS[2:]:
        last = mcp.list_page("tools/list", last["nextCursor"])
    assert [tool["name"] for tool in last["tools"]] == [TOOLS[-1]]
    assert "nextCursor" not in last
    with pytest.raises(ValueError, match="method must be one of"):
        mcp.list_page("tools/call")


@pytest.mark.parametrize("revision", REVISIONS)
def test_log_notifications_sent_before_the_result_are_kept_on_it(revision):
    result = McpClient(revision, log_level="info").call_tool(
        "record_observation", {"city": "oslo", "temperature_c": 1.5}
    )
    pk = Observation.objects.get().pk
    assert result.logs == [{"recorded": pk}]
    assert result.notifications[0]["method"] == "notifications/message"
    if revision == "2026-07-28":  # a notification turns the HTTP answer into a stream
        assert result.headers["content-type"] == "text/event-stream"


def test_meta_given_to_a_call_joins_its_params_meta():
    result = McpClient().call_tool(
        "record_observation",
        {"city": "oslo", "temperature_c": 2.5},
        meta={"io.modelcontextprotocol/logLevel": "info"},
    )
    assert result.logs == [{"recorded": Observation.objects.get().pk}]
    quiet = McpClient().call_tool("record_observation", {"city": "oslo", "temperature_c": 3})
    assert quiet.logs == [] and quiet.headers["content-type"] == "application/json"


def test_at_2025_11_25_a_log_level_set_by_request_holds_for_the_session():
    mcp = McpClient("2025-11-25")
    quiet = mcp.call_tool("record_observation", {"city": "oslo", "temperature_c": 1})
    assert quiet.logs == []
    mcp.request("logging/setLevel", {"level": "info"})
    loud = mcp.call_tool("record_observation", {"city": "oslo", "temperature_c": 2})
    assert loud.logs == [{"recorded": Observation.objects.get(temperature_c=2).pk}]


def test_the_clients_calls_are_not_counted_in_the_connectome():
    from beammcp_django.connectome.core.observed import process_collector

    before = process_collector.snapshot()
    for revision in REVISIONS:
        McpClient(revision).call_tool("echo", {"text": "x"})
    assert process_collector.snapshot() == before


def test_subscriptions_listen_is_refused_by_name():
    with pytest.raises(ValueError, match="does not hold subscriptions/listen streams"):
        McpClient().request("subscriptions/listen", {"notifications": {}})


def test_any_other_request_goes_through_request():
    mcp = McpClient()
    discovered = mcp.request("server/discover")
    assert "2026-07-28" in discovered["supportedVersions"]
    completion = mcp.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "forecast_briefing"},
            "argument": {"name": "city", "value": "o"},
        },
    )
    assert completion["completion"]["values"] == ["oslo"]


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("revision", "status", "not_found"), [("2026-07-28", 400, -32602), ("2025-11-25", None, -32002)]
)
def test_json_rpc_errors_are_raised_with_their_code_message_data_and_status(
    revision, status, not_found
):
    mcp = McpClient(revision)
    with pytest.raises(McpError) as unknown_tool:
        mcp.call_tool("no_such_tool")
    assert (unknown_tool.value.code, unknown_tool.value.message) == (
        -32602,
        "unknown tool 'no_such_tool'",
    )
    assert unknown_tool.value.status == status
    assert unknown_tool.value.reply["error"]["code"] == -32602
    with pytest.raises(McpError) as unknown_resource:
        mcp.read_resource("weather://observations/atlantis")
    assert unknown_resource.value.code == not_found
    assert unknown_resource.value.data == {"uri": "weather://observations/atlantis"}
    with pytest.raises(McpError) as unknown_method:
        mcp.request("no/such/method")
    assert unknown_method.value.code == -32601
    assert str(unknown_method.value) == (
        ("HTTP 404, " if status else "")
        + f"JSON-RPC error -32601: method 'no/such/method' is not served at {revision}"
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_tool_error_is_a_result_not_an_exception(revision):
    result = McpClient(revision).call_tool("get_forecast", {"city": "oslo", "days": 30})
    assert result.is_error
    assert "invalid arguments for tool 'get_forecast'" in result.text


def test_an_unknown_revision_and_headers_at_2025_11_25_are_refused_by_name():
    with pytest.raises(ValueError, match="revision must be one of 2026-07-28, 2025-11-25"):
        McpClient("2024-11-05")
    with pytest.raises(ValueError, match="this client takes stdio's path"):
        McpClient("2025-11-25", headers={"Authorization": "Bearer x"})
    with pytest.raises(ValueError, match="served over stdio: no HTTP headers"):
        McpClient("2025-11-25").call_tool("echo", {"text": "x"}, headers={"X-A": "1"})


def test_the_sync_client_refuses_to_run_inside_an_event_loop():
    async def inside_a_loop():
        McpClient().call_tool("echo", {"text": "x"})

    with pytest.raises(RuntimeError, match="AsyncToSync in the same thread as an async event"):
        async_to_sync(inside_a_loop)()


# -- the HTTP endpoint's rules and hooks -------------------------------------------------------

SEEN: list[HttpRequestInfo] = []
THREADS: list[int] = []


def bearer_hook(request: HttpRequestInfo) -> bool | Refusal:
    """Serves ``Authorization: Bearer letmein`` only; a sync hook, as many hosts write."""
    SEEN.append(request)
    THREADS.append(threading.get_ident())
    if request.header("authorization") == "Bearer letmein":
        return True
    return Refusal(401, "no or wrong token", www_authenticate='Bearer realm="weather"')


HOOK = "tests.django_layer.test_test_client.bearer_hook"


@pytest.fixture
def bearer_only(settings) -> list[HttpRequestInfo]:
    """What the hook saw, as settings import it: pytest imports this file under another
    module name (tests/ is no package), so the hook's ``SEEN`` is that import's."""
    seen = import_string(HOOK.replace("bearer_hook", "SEEN"))
    seen.clear()
    import_string(HOOK.replace("bearer_hook", "THREADS")).clear()
    settings.BEAMMCP = {**settings.BEAMMCP, "AUTHORIZE": HOOK}
    return seen


def test_the_authorize_hook_sees_the_headers_the_test_passes(bearer_only):
    mcp = McpClient(headers={"Authorization": "Bearer letmein"})
    assert mcp.call_tool("echo", {"text": "x"}).text == "x"
    (seen,) = bearer_only
    # A sync hook runs on the test's thread, as sync tools do.
    assert import_string(HOOK.replace("bearer_hook", "THREADS")) == [threading.get_ident()]
    assert seen.header("authorization") == "Bearer letmein"
    assert seen.path == reverse("beammcp:endpoint")
    assert seen.header("mcp-method") == "tools/call" and seen.header("mcp-name") == "echo"
    # A call's own headers win over the client's.
    with pytest.raises(HttpRefusal) as refused:
        mcp.call_tool("echo", {"text": "x"}, headers={"Authorization": "Bearer wrong"})
    assert bearer_only[-1].header("authorization") == "Bearer wrong"
    assert refused.value.status == 401
    assert refused.value.headers["www-authenticate"] == 'Bearer realm="weather"'
    assert refused.value.body == b""


def test_without_the_header_the_hook_refuses_before_any_tool_runs(bearer_only):
    with pytest.raises(HttpRefusal, match=r"HTTP 401 \(WWW-Authenticate: Bearer"):
        McpClient().call_tool("record_observation", {"city": "oslo", "temperature_c": 2})
    assert bearer_only[-1].header("authorization") is None
    assert not Observation.objects.exists()


def test_the_endpoint_refuses_a_host_and_an_origin_it_does_not_serve():
    with pytest.raises(McpError) as host:
        McpClient(host="evil.example").call_tool("echo", {"text": "x"})
    assert (host.value.status, host.value.code) == (400, -32600)
    assert "Host header" in host.value.message
    with pytest.raises(McpError) as origin:
        McpClient(headers={"Origin": "http://evil.example"}).call_tool("echo", {"text": "x"})
    assert (origin.value.status, origin.value.code) == (403, -32600)
    allowed = McpClient(headers={"Origin": "http://localhost:8000"})
    assert allowed.call_tool("echo", {"text": "x"}).text == "x"


class RoutedCatalog:
    """One tool whose arguments the client must mirror into ``Mcp-Param-*`` headers."""

    mirrored = {"region": "string", "shard": "integer", "urgent": "boolean"}
    schema = {
        "type": "object",
        "properties": {
            name: {"type": kind, "x-mcp-header": name.capitalize()}
            for name, kind in mirrored.items()
        },
        "required": ["region"],
    }
    tools = (ToolSpec("route", schema),)
    resources = ()
    prompts = ()

    def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> str:
        return json.dumps(arguments, sort_keys=True, ensure_ascii=False)

    def read_resource(self, match: Any, context: Any) -> Any:
        raise AssertionError("no resources")

    def get_prompt(self, name: str, arguments: Any, context: Any) -> Any:
        raise AssertionError("no prompts")


ROUTED_CATALOG = RoutedCatalog()


@pytest.mark.parametrize(
    "arguments",
    [
        {"region": "eu-west"},
        {"region": "Zürich ", "shard": 12, "urgent": True},  # base64 form, a trailing blank
        {"region": "=?base64?QQ==?=", "shard": -3, "urgent": False},  # looks like a sentinel
    ],
)
def test_arguments_the_schema_mirrors_into_headers_are_sent_as_the_endpoint_requires(
    arguments, settings
):
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "CATALOG": "tests.django_layer.test_test_client.ROUTED_CATALOG",
    }
    result = McpClient().call_tool("route", arguments)
    assert not result.is_error, result.text
    assert json.loads(result.text) == arguments


# -- the database: TestCase, TransactionTestCase, async tests ---------------------------------


class RecordInsideTestCase(TestCase):
    """Each test sees exactly its own row: the other's was rolled back with its test, so the
    tool wrote through the test's connection, inside its transaction."""

    def record(self, revision: str) -> None:
        Observation.objects.create(city="oslo", temperature_c=-1)
        mcp = McpClient(revision)
        result = mcp.call_tool("record_observation", {"city": "oslo", "temperature_c": 4})
        self.assertEqual(result.text, "Recorded 4 °C for Oslo.")
        self.assertEqual(Observation.objects.filter(temperature_c=4).count(), 1)
        self.assertTrue(connection.in_atomic_block)
        # The async resource reads the rows through the ORM too: the test's and the tool's.
        read = json.loads(mcp.read_resource("weather://observations/oslo").text)
        self.assertEqual(sorted(o["temperature_c"] for o in read["observations"]), [-1, 4])

    def test_at_2026_07_28(self):
        self.record("2026-07-28")

    def test_at_2025_11_25(self):
        self.record("2025-11-25")

    async def test_the_async_client_in_an_async_test(self):
        mcp = AsyncMcpClient()
        result = await mcp.call_tool("record_observation", {"city": "oslo", "temperature_c": 7})
        self.assertEqual(result.text, "Recorded 7 °C for Oslo.")
        self.assertEqual(await Observation.objects.filter(temperature_c=7).acount(), 1)
        self.assertEqual(await Observation.objects.acount(), 1)


class RecordInsideTransactionTestCase(TransactionTestCase):
    """No transaction around the test: the row is committed, and flushed after the test."""

    def test_the_row_is_committed(self):
        McpClient().call_tool("record_observation", {"city": "nairobi", "temperature_c": 25})
        self.assertFalse(connection.in_atomic_block)
        self.assertEqual(Observation.objects.get().city, "nairobi")


@override_settings(ROOT_URLCONF="tests.django_layer.urls_no_endpoint")
class WithoutTheEndpointInTheUrlconf(TestCase):
    def test_the_client_still_serves_the_catalog(self):
        self.assertEqual(McpClient().call_tool("echo", {"text": "x"}).text, "x")


# -- the documentation -------------------------------------------------------------------------

TESTING_DOC = REPO_ROOT / "docs" / "testing.md"
SAMPLE_TESTS = REPO_ROOT / "sample_project" / "demo" / "tests.py"


def test_the_example_in_docs_testing_is_the_sample_projects_own_test_module():
    blocks = re.findall(r"```python\n(.*?)```", TESTING_DOC.read_text(), re.S)
    example = next(block for block in blocks if "class WeatherToolsTests(TestCase)" in block)
    assert example in SAMPLE_TESTS.read_text()
    assert len(example.splitlines()) > 20


@pytest.mark.slow
def test_the_documented_command_runs_the_sample_tests_with_djangos_runner(tmp_path):
    import os

    command = "python manage.py test sample_project.demo"
    assert f"\n{command}\n" in TESTING_DOC.read_text()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = manage(env, *command.split()[2:])
    output = done.stderr.decode()
    ran = re.search(r"Ran (\d+) tests", output)
    assert ran and int(ran.group(1)) >= 9 and "\nOK\n" in output, output


# -- who is calling -----------------------------------------------------------------------------

PRINCIPALS = "tests.principals.catalog.site"


def naming_hook(request: HttpRequestInfo) -> Any:
    """Names the caller its bearer token carries: ``Bearer as:NAME`` is the user NAME."""
    token = request.header("authorization") or ""
    if not token.startswith("Bearer as:"):
        return Refusal(401, "no token")
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=token.removeprefix("Bearer as:"))


@pytest.mark.parametrize("tool", ["principal_whoami", "principal_whoami_async"])
def test_host_code_sees_the_principal_the_hook_names_and_the_user_given_at_2025_11_25(
    settings, django_user_model, tool
):
    django_user_model.objects.create(username="ada")
    hook = "tests.django_layer.test_test_client.naming_hook"
    settings.BEAMMCP = {**settings.BEAMMCP, "CATALOG": PRINCIPALS, "AUTHORIZE": hook}
    modern = McpClient(headers={"Authorization": "Bearer as:ada"})
    assert modern.call_tool(tool).text == "auth.User:ada"
    user = django_user_model.objects.get(username="ada")
    assert McpClient("2025-11-25", user=user).call_tool(tool).text == "auth.User:ada"
    assert McpClient("2025-11-25").call_tool(tool).text == "nobody"


def test_a_user_for_the_modern_revision_is_refused_by_name():
    with pytest.raises(ValueError, match="AUTHORIZE hook names the principal"):
        McpClient(user=object())


def test_the_who_is_calling_hook_in_the_host_contract_runs_as_written(settings, django_user_model):
    from django.core import signing

    page = (REPO_ROOT / "docs" / "host-contract.md").read_text(encoding="utf-8")
    block = page.split("<!-- host-contract: who-is-calling -->\n```python\n", 1)[1]
    source = block.split("```", 1)[0]
    module = types.ModuleType("docs_host_contract_hook")
    exec(compile(source, "docs/host-contract.md", "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    try:
        django_user_model.objects.create(username="ada")
        hook = f"{module.__name__}.authorize"
        settings.BEAMMCP = {**settings.BEAMMCP, "CATALOG": PRINCIPALS, "AUTHORIZE": hook}
        token = signing.dumps("ada", salt="mcp")
        mcp = McpClient(headers={"Authorization": f"Bearer {token}"})
        assert mcp.call_tool("principal_whoami").text == "auth.User:ada"
        with pytest.raises(HttpRefusal) as refused:
            McpClient(headers={"Authorization": "Bearer forged"}).call_tool("principal_whoami")
        assert refused.value.status == 401
        assert refused.value.headers["www-authenticate"] == 'Bearer realm="mcp"'
    finally:
        del sys.modules[module.__name__]
