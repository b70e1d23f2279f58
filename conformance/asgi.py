"""The harness's ASGI application, wired as a user's project is: ``conformance.asgi:application``.

The MCP endpoint (``/mcp``) is routed before Django reads the body; every other path is
Django's.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "conformance.settings")

from beammcp_django.asgi import get_asgi_application

application = get_asgi_application()
