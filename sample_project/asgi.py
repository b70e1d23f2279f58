"""The ASGI application a production server (daphne, uvicorn) is pointed at:
``sample_project.asgi:application``."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sample_project.settings")

application = get_asgi_application()
