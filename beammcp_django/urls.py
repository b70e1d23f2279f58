"""Include this URLconf where the MCP endpoint lives.

    path("mcp", include("beammcp_django.urls"))

The URL name ``beammcp:endpoint`` is how ``beammcp_django.asgi.get_asgi_application`` finds the
path to route before Django reads the body; the view behind it serves the same endpoint when a
request reaches plain Django anyway (with the pre-body protections inactive; a system check
warns about that).
"""

from django.urls import path

from beammcp_django.views import endpoint_view

app_name = "beammcp"
urlpatterns = [path("", endpoint_view, name="endpoint")]
