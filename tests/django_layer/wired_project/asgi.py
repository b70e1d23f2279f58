"""An ``asgi.py`` written as docs/transports.md shows, beside a settings module that does not
set ``ASGI_APPLICATION``: the W002 check must recognise the wiring without importing it (the
settings module named here does not exist, so importing this would fail)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.django_layer.wired_project.settings")

from beammcp_django.asgi import get_asgi_application

application = get_asgi_application()
