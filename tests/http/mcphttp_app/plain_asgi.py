"""Django's own ASGI handler with no MCP router in front: ``/mcp`` reaches the plain view
``beammcp_django.views.endpoint_view`` through the URL resolver (the fallback the tests cover)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.http_settings")

from django.core.asgi import get_asgi_application

application = get_asgi_application()
