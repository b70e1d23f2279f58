"""The ASGI application a production server (daphne, uvicorn) is pointed at:
``sample_project.asgi:application``. ``runserver`` serves it through daphne.

The MCP endpoint (``/mcp``) is routed before Django reads the body; every other path is
Django's.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sample_project.settings")

from beammcp_django.asgi import get_asgi_application

application = get_asgi_application()
