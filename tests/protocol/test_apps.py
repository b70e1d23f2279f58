"""MCP Apps in the core (``protocol/apps.py``): a view's and a tool's ``_meta.ui`` held to
the extension's types, a view's contents shaped as the page requires, the extension declared
when a view is served."""

from __future__ import annotations

import asyncio

import pytest

from beammcp_django.protocol.apps import (
    EXTENSION,
    VIEW_MIME_TYPE,
    tool_view_problems,
    view_problems,
)
from beammcp_django.protocol.catalog import ResourceSpec, ToolResult, ToolSpec
from beammcp_django.protocol.methods.base import CacheHint

from .conftest import MemoryCatalog, make_server, request

VIEW = "ui://weather/chart"
PUBLIC_LISTS = {"tools/list": CacheHint(60_000, "public")}


@pytest.mark.parametrize(
    "ui",
    [
        {},
        {"csp": {"connectDomains": ["https://api.example.com", "wss://live.example.com:8443"]}},
        {"csp": {"resourceDomains": ["https://*.cdn.example.com"], "frameDomains": []}},
        {"permissions": {"camera": {}, "clipboardWrite": {}}, "prefersBorder": False},
        {"domain": "a904794854a047f6.claudemcpcontent.com"},
        {"csp": {"connectDomains": ["HTTPS://API.Example.com", "http://[::1]:8000"]}},
    ],
)
def test_a_view_within_the_extension_s_types_passes(ui):
    assert list(view_problems(VIEW, VIEW_MIME_TYPE, {"ui": ui})) == []


@pytest.mark.parametrize(
    ("mime_type", "ui", "cause"),
    [
        ("text/html", {}, "its MIME type must be 'text/html;profile=mcp-app'"),
        (VIEW_MIME_TYPE, {"csp": {"connectDomains": ["*"]}}, "holds '*', not an origin"),
        (VIEW_MIME_TYPE, {"csp": {"scriptDomains": []}}, "the key 'scriptDomains'"),
        (VIEW_MIME_TYPE, {"csp": {"resourceDomains": ["'unsafe-eval'"]}}, "not an origin"),
        (VIEW_MIME_TYPE, {"csp": {"resourceDomains": ["data:"]}}, "not an origin"),
        (VIEW_MIME_TYPE, {"csp": {"connectDomains": ["https://x.com/path"]}}, "not an origin"),
        (VIEW_MIME_TYPE, {"csp": {"connectDomains": "https://x.com"}}, "is not a list"),
        (VIEW_MIME_TYPE, {"csp": {"connectDomains": ["https://x.com:99999"]}}, "not an origin"),
        (VIEW_MIME_TYPE, {"permissions": {"usb": {}}}, "the key 'usb'"),
        (VIEW_MIME_TYPE, {"permissions": {"camera": True}}, "camera is not {}"),
        (VIEW_MIME_TYPE, {"prefersBorder": "yes"}, "prefersBorder is not a boolean"),
        (VIEW_MIME_TYPE, {"domain": ""}, "domain is not a non-empty string"),
        (VIEW_MIME_TYPE, {"theme": "dark"}, "_meta.ui has the key 'theme'"),
    ],
)
def test_a_view_off_the_extension_s_types_is_refused_by_name(mime_type, ui, cause):
    found = list(view_problems(VIEW, mime_type, {"ui": ui}))
    assert any(cause in problem for problem in found), found


@pytest.mark.parametrize(
    ("meta", "cause"),
    [
        ({"ui": {"resourceUri": "ui://weather/none"}}, "which is no view this catalog declares"),
        ({"ui": {"resourceUri": ["x"]}}, "names list, which is no view"),
        ({"ui": {"resourceUri": VIEW, "visibility": ["user"]}}, "of 'model' and 'app'"),
        ({"ui": {"resourceUri": VIEW, "visibility": "app"}}, "is not a list"),
        ({"ui": {"resourceUri": VIEW, "csp": {}}}, "the key 'csp'"),
        ({"ui/resourceUri": "ui://other"}, "names 'ui://other', which is no view"),
        ({"ui": {"resourceUri": VIEW}, "ui/resourceUri": "ui://other"}, "differs from"),
    ],
)
def test_a_tool_s_link_off_the_page_is_refused_by_name(meta, cause):
    found = list(tool_view_problems(meta, {VIEW}))
    assert any(cause in problem for problem in found), found


def test_a_linked_tool_within_the_page_passes_the_deprecated_flat_form_too():
    for visibility in ([], ["model"], ["app"], ["model", "app"]):
        meta = {"ui": {"resourceUri": VIEW, "visibility": visibility}}
        assert list(tool_view_problems(meta, {VIEW})) == []
    assert list(tool_view_problems({"ui/resourceUri": VIEW}, {VIEW})) == []
    both = {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}
    assert list(tool_view_problems(both, {VIEW})) == []


def test_a_ui_template_is_refused_and_a_faulty_view_is_named_once():
    from beammcp_django.protocol.audit import audit
    from beammcp_django.protocol.catalog import ResourceTemplateSpec

    catalog = ViewCatalog(mime_type="text/html")
    catalog.resources = (*catalog.resources, ResourceTemplateSpec("ui://views/{name}", "views"))
    found = [(p.rule, p.subject) for p in audit(catalog) if p.rule.endswith("view")]
    assert found == [
        ("bad_view", f"resource '{VIEW}'"),
        ("bad_view", "resource template 'ui://views/{name}'"),
    ]


class ViewCatalog(MemoryCatalog):
    def __init__(self, mime_type: str = VIEW_MIME_TYPE) -> None:
        super().__init__()
        self.resources = (
            *self.resources,
            ResourceSpec(
                VIEW,
                "chart",
                mime_type=mime_type,
                meta={"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}},
            ),
        )
        self.tools = (
            *self.tools,
            ToolSpec("chart", {"type": "object"}, meta={"ui": {"resourceUri": VIEW}}),
        )
        self.answer: object = "<!DOCTYPE html><html><body>chart</body></html>"

    def read_resource(self, match, context):
        if match.uri == VIEW:
            return self.answer
        return super().read_resource(match, context)


def reply(server, method, params=None):
    return asyncio.run(server.handle(request(method, params or {})))


def test_a_view_s_contents_carry_its_type_and_its_meta_ui():
    server = make_server(ViewCatalog())
    (contents,) = reply(server, "resources/read", {"uri": VIEW})["result"]["contents"]
    assert contents == {
        "uri": VIEW,
        "mimeType": VIEW_MIME_TYPE,
        "text": "<!DOCTYPE html><html><body>chart</body></html>",
        "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}},
    }
    extensions = reply(server, "server/discover")["result"]["capabilities"]["extensions"]
    assert extensions == {EXTENSION: {}}  # the page defines settings for clients only


def test_a_view_s_contents_carry_the_declared_meta_ui_not_the_reader_s():
    catalog = ViewCatalog()
    catalog.answer = [
        {
            "uri": VIEW,
            "text": "<!DOCTYPE html><html></html>",
            "_meta": {"ui": {"csp": {"connectDomains": ["https://anywhere.example"]}}, "x.y/z": 1},
        }
    ]
    (contents,) = reply(make_server(catalog), "resources/read", {"uri": VIEW})["result"]["contents"]
    assert contents["_meta"] == {
        "x.y/z": 1,
        "ui": {"csp": {"connectDomains": ["https://api.example.com"]}},
    }


def test_a_reader_answering_a_view_with_another_type_is_a_host_fault():
    catalog = ViewCatalog()
    catalog.answer = [{"uri": VIEW, "mimeType": "text/plain", "text": "not a view"}]
    error = reply(make_server(catalog), "resources/read", {"uri": VIEW})["error"]
    assert error["code"] == -32603


def test_no_view_no_extension():
    capabilities = reply(make_server(MemoryCatalog()), "server/discover")["result"]["capabilities"]
    assert "extensions" not in capabilities


class AppOnlyCatalog(ViewCatalog):
    """The view's catalog with an app-only tool (its Refresh) beside the model's ``chart``."""

    def __init__(self) -> None:
        super().__init__()
        link = {"resourceUri": VIEW, "visibility": ["app"]}
        self.tools = (*self.tools, ToolSpec("refresh", {"type": "object"}, meta={"ui": link}))
        self.handlers = {**self.handlers, "chart": self.chart, "refresh": self.chart}
        self.chart_answer: object = "Oslo: 4 °C, rain"

    def chart(self, arguments, context):
        return self.chart_answer


DECLARED = {"extensions": {EXTENSION: {"mimeTypes": [VIEW_MIME_TYPE]}}}


def listed(server, capabilities):
    from beammcp_django.protocol.revisions import META_CLIENT_CAPABILITIES

    answer = asyncio.run(
        server.handle(request("tools/list", **{META_CLIENT_CAPABILITIES: capabilities}))
    )["result"]
    return {tool["name"] for tool in answer["tools"]}, answer["cacheScope"]


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        {"extensions": {}},
        {"extensions": {EXTENSION: {}}},
        {"extensions": {EXTENSION: {"mimeTypes": ["text/html"]}}},
        {"extensions": {EXTENSION: {"mimeTypes": VIEW_MIME_TYPE}}},
    ],
)
def test_an_app_only_tool_is_not_listed_to_a_client_that_did_not_declare_views(capabilities):
    names, scope = listed(make_server(AppOnlyCatalog(), cache_hints=PUBLIC_LISTS), capabilities)
    assert "chart" in names and "refresh" not in names
    # The list depends on the client: never a shared cache's, whatever CACHE_HINTS says.
    assert scope == "private"


def test_an_app_only_tool_is_listed_to_a_client_that_declared_views_and_called_by_any():
    server = make_server(AppOnlyCatalog(), cache_hints=PUBLIC_LISTS)
    names, scope = listed(server, DECLARED)
    assert {"chart", "refresh"} <= names and scope == "private"
    # Calls are served to whoever the host forwards: the page leaves refusing them to hosts.
    result = reply(server, "tools/call", {"name": "refresh", "arguments": {}})["result"]
    assert result["content"] == [{"type": "text", "text": "Oslo: 4 °C, rain"}]


def test_a_catalog_with_no_app_only_tool_lists_the_same_to_every_client():
    names, scope = listed(make_server(ViewCatalog(), cache_hints=PUBLIC_LISTS), {})
    assert "chart" in names and scope == "public"


@pytest.mark.parametrize(
    "answer",
    [
        ToolResult(content=[]),
        ToolResult(content=[{"type": "text", "text": "  "}]),
        [],
    ],
)
def test_a_tool_drawn_by_a_view_must_still_say_its_answer_in_its_content(answer):
    catalog = AppOnlyCatalog()
    catalog.chart_answer = answer
    error = reply(make_server(catalog), "tools/call", {"name": "chart", "arguments": {}})["error"]
    assert error["code"] == -32603
    # The app-only tool speaks to its view alone: no fallback is asked of it.
    assert "result" in reply(
        make_server(catalog), "tools/call", {"name": "refresh", "arguments": {}}
    )


@pytest.mark.parametrize(
    "answer",
    [
        "Oslo: 4 °C",
        ToolResult(content=[], structured={"city": "Oslo"}),  # its JSON text is the content
        ToolResult(content=[{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]),
        ToolResult(content=[], is_error=True),
    ],
)
def test_a_tool_drawn_by_a_view_whose_content_says_something_is_served(answer):
    catalog = AppOnlyCatalog()
    catalog.chart_answer = answer
    assert "result" in reply(make_server(catalog), "tools/call", {"name": "chart", "arguments": {}})


def test_the_host_fault_of_a_silent_result_names_the_tool_and_its_view(caplog):
    catalog = AppOnlyCatalog()
    catalog.chart_answer = ToolResult(content=[])
    reply(make_server(catalog), "tools/call", {"name": "chart", "arguments": {}})
    assert f"tool 'chart' is drawn by the view {VIEW} but its content says nothing" in caplog.text
