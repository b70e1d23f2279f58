"""Catalogs of views for the MCP Apps tests (``BEAMMCP["CATALOG"]`` names one), with the
templates and static files of this folder (``VIEW_SETTINGS``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from beammcp_django.mcp import Site, Tool, ToolResult, UiResource

HERE = Path(__file__).resolve().parent
VIEW_SETTINGS: dict[str, Any] = {
    "TEMPLATES": [
        {
            "BACKEND": "django.template.backends.django.DjangoTemplates",
            "DIRS": [HERE / "templates"],
            "OPTIONS": {"builtins": []},
        }
    ],
    "STATICFILES_DIRS": [HERE / "static"],
}

VIEWS = Site()


@VIEWS.register
class Chart(UiResource):
    """A chart of one city's forecast."""

    uri = "ui://weather/chart"
    name = "forecast-chart"
    template_name = "mcp_test_views/chart.html"
    csp = {"connectDomains": ["https://api.example.com"]}
    browser_permissions = ("clipboardWrite",)
    prefers_border = True

    def get_context_data(self, context):
        return {"title": "Forecast", "city": "Oslo <north>"}


@VIEWS.register
class Forecast(Tool):
    name = "forecast"
    meta = {"ui": {"resourceUri": "ui://weather/chart"}}

    def call(self, arguments, context):
        return ToolResult(content=[{"type": "text", "text": "Oslo: 12 °C"}])


@VIEWS.register
class Refresh(Tool):
    name = "refresh_chart"
    meta = {"ui": {"resourceUri": "ui://weather/chart", "visibility": ["app"]}}

    def call(self, arguments, context):
        return "refreshed"


LOADS_UNDECLARED = Site()


@LOADS_UNDECLARED.register
class Undeclared(UiResource):
    uri = "ui://weather/undeclared"
    name = "undeclared"
    template_name = "mcp_test_views/loads_undeclared.html"
    csp = {"resourceDomains": ["https://*.example.com"]}


MISSING_PARTS = Site()


@MISSING_PARTS.register
class NoTemplate(UiResource):
    uri = "ui://weather/no-template"
    name = "no-template"
    template_name = "mcp_test_views/nowhere.html"


@MISSING_PARTS.register
class NoAsset(UiResource):
    uri = "ui://weather/no-asset"
    name = "no-asset"
    template_name = "mcp_test_views/missing_asset.html"


BAD_VIEW = Site()


@BAD_VIEW.register
class WrongOrigin(UiResource):
    uri = "ui://weather/wrong-origin"
    name = "wrong-origin"
    template_name = "mcp_test_views/chart.html"
    csp = {"connectDomains": ["*"]}


BAD_TOOL_VIEW = Site()


@BAD_TOOL_VIEW.register
class LinkedToNothing(Tool):
    name = "linked_to_nothing"
    meta = {"ui": {"resourceUri": "ui://weather/none"}}

    def call(self, arguments, context):
        return "nothing"


HAZARDS = Site()


@HAZARDS.register
class Hazards(UiResource):
    uri = "ui://weather/hazards"
    name = "hazards"
    template_name = "mcp_test_views/hazards.html"
    csp = {"resourceDomains": ["https://*.example.com"], "connectDomains": []}


GATED = Site()


@GATED.register
class StaffChart(Chart):
    """The chart, for those who may view observations."""

    permissions = ("demo.view_observation",)
