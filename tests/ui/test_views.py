"""MCP Apps' views the Django way: a ``UiResource`` rendered from its template on each read,
its scripts and styles inlined, its ``_meta.ui`` on the listing and the contents, the
extension declared in both eras, tools carrying their link; and the startup checks refusing
a view that loads what its CSP does not declare, or whose parts are missing."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.test import override_settings

from beammcp_django.protocol.apps import EXTENSION, VIEW_MIME_TYPE
from beammcp_django.test import McpClient, McpError

from .sites import VIEW_SETTINGS

SITES = "tests.ui.sites"
DECLARES_APPS = {"extensions": {EXTENSION: {"mimeTypes": [VIEW_MIME_TYPE]}}}
CHART_META = {
    "ui": {
        "csp": {"connectDomains": ["https://api.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
}


def served(site: str) -> override_settings:
    """The sample's settings with one of ``sites.py``'s catalogs and this folder's templates."""
    return override_settings(
        **VIEW_SETTINGS, BEAMMCP={**settings.BEAMMCP, "CATALOG": f"{SITES}.{site}"}
    )


@pytest.fixture
def views():
    with served("VIEWS"):
        yield


def test_a_view_is_read_as_one_document_with_its_assets_inlined(views):
    mcp = McpClient()
    (contents,) = mcp.request("resources/read", {"uri": "ui://weather/chart"})["contents"]
    assert contents["mimeType"] == VIEW_MIME_TYPE
    assert contents["_meta"] == CHART_META
    html = contents["text"]
    assert html.startswith("<!DOCTYPE html>")
    assert "<style>main { font: 14px sans-serif; }\n</style>" in html
    # The script's own "</script>" cannot end the element early.
    assert 'const label = "<\\/script> is written safely";' in html
    assert html.count("</script>") == 1
    # The context is the host's, escaped as any template's.
    assert 'data-city="Oslo &lt;north&gt;"' in html


def test_the_listing_and_the_tools_carry_the_view_s_meta(views):
    mcp = McpClient()
    (listed,) = mcp.request("resources/list")["resources"]
    assert listed == {
        "uri": "ui://weather/chart",
        "name": "forecast-chart",
        "description": "A chart of one city's forecast.",
        "mimeType": VIEW_MIME_TYPE,
        "_meta": CHART_META,
    }
    host = McpClient(capabilities=DECLARES_APPS)
    tools = {tool["name"]: tool for tool in host.request("tools/list")["tools"]}
    assert tools["forecast"]["_meta"] == {"ui": {"resourceUri": "ui://weather/chart"}}
    assert tools["refresh_chart"]["_meta"]["ui"]["visibility"] == ["app"]
    # A client that did not declare the extension is not listed the app-only tool (it would
    # hand it to its model), at either revision; a call is served to whoever the host
    # forwards: refusing a view's call of a model-only tool is the host's.
    assert "refresh_chart" not in [tool["name"] for tool in mcp.list_tools()]
    assert "refresh_chart" not in [tool["name"] for tool in McpClient("2025-11-25").list_tools()]
    assert mcp.call_tool("refresh_chart", {}).text == "refreshed"


def test_a_2025_11_25_host_that_declared_the_extension_is_listed_the_app_only_tool(views):
    host = McpClient("2025-11-25", capabilities=DECLARES_APPS)
    assert "refresh_chart" in [tool["name"] for tool in host.list_tools()]


def test_the_extension_is_declared_in_both_eras(views):
    discovered = McpClient().request("server/discover")["capabilities"]["extensions"]
    assert discovered[EXTENSION] == {}
    legacy = McpClient("2025-11-25")
    legacy.request("ping")
    assert legacy.initialize_result["capabilities"]["extensions"][EXTENSION] == {}


def messages(site: str) -> dict[str, list[str]]:
    with served(site):
        found: dict[str, list[str]] = {}
        for message in run_checks(tags=["beammcp"]):
            found.setdefault(message.id, []).append(message.msg)
        return found


def test_a_literal_load_from_an_undeclared_origin_is_refused_naming_it():
    refused = messages("LOADS_UNDECLARED")["beammcp.E033"]
    shown = "\n".join(refused)
    assert len(refused) == 3, shown
    assert (
        "view ui://weather/undeclared: template 'mcp_test_views/loads_undeclared.html' loads "
        "an element from https://cdn.example.net, which its csp.resourceDomains does not "
        "declare: a host would block it"
    ) in refused
    assert "loads a frame from https://maps.example.org, which its csp.frameDomains" in shown
    assert "loads a connection from https://api.example.com, which its csp.connectDomains" in shown
    # What the wildcard declares is not refused: images. and assets. of example.com.
    assert "images.example.com" not in shown and "assets.example.com" not in shown


def test_a_missing_template_or_inlined_asset_is_refused():
    refused = messages("MISSING_PARTS")["beammcp.E033"]
    assert refused == [
        "view ui://weather/no-template: its template 'mcp_test_views/nowhere.html' does not exist",
        "view ui://weather/no-asset: it inlines no static file 'mcp_test_views/nowhere.js' "
        "(is its app installed, or its folder in STATICFILES_DIRS?)",
    ]


def test_a_view_and_a_link_off_the_extension_s_types_are_refused():
    (bad_view,) = messages("BAD_VIEW")["beammcp.E031"]
    assert "_meta.ui.csp.connectDomains holds '*', not an origin" in bad_view
    (bad_link,) = messages("BAD_TOOL_VIEW")["beammcp.E032"]
    assert "names 'ui://weather/none', which is no view this catalog declares" in bad_link


def test_what_cannot_be_inlined_or_loaded_in_a_frame_is_refused_at_startup():
    refused = "\n".join(messages("HAZARDS")["beammcp.E033"])
    assert "the style 'mcp_test_views/ends_early.css' holds '</style'" in refused
    assert "the script 'mcp_test_views/comment.js' holds '<!--'" in refused
    assert "loads a static file by its URL ({% static %}) from the project's origin" in refused
    assert "loads a plugin (object-src 'none') from https://plugins.example.com" in refused
    # A wildcard covers subdomains, not the bare domain; a backticked URL is a literal too.
    assert "loads an element from https://example.com, which its csp.resourceDomains" in refused
    assert "loads a connection from https://api.example.com, which its csp.connectDomains" in (
        refused
    )


def test_a_view_s_gate_hides_it_as_any_resource_s(settings):
    from django.contrib.auth.models import User

    with served("GATED"):
        outsider = McpClient("2025-11-25", user=User(username="plain", is_active=True))
        assert outsider.request("resources/list")["resources"] == []
        with pytest.raises(McpError) as hidden:
            outsider.request("resources/read", {"uri": "ui://weather/chart"})
        with pytest.raises(McpError) as unknown:
            outsider.request("resources/read", {"uri": "ui://weather/nothing"})
        assert hidden.value.code == unknown.value.code == -32002
        root = User(username="root", is_active=True, is_superuser=True)
        (contents,) = McpClient("2025-11-25", user=root).request(
            "resources/read", {"uri": "ui://weather/chart"}
        )["contents"]
        assert contents["mimeType"] == VIEW_MIME_TYPE
