"""The harness URLconf: the MCP endpoint at ``/mcp``, as the suite is pointed at it."""

from django.urls import include, path

urlpatterns = [
    path("mcp", include("beammcp_django.urls")),
]
