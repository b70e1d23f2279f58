"""The ASGI application factory that gives the MCP endpoint the raw request.

Django's ASGI handler reads the whole body before any view runs, so a view cannot refuse an
oversized or chunked body before reading it, nor hold a deadline over the read. This factory
routes the path of ``beammcp:endpoint`` (from your URLconf) to the MCP endpoint directly and
everything else to Django::

    # myproject/asgi.py
    import os
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "myproject.settings")
    from beammcp_django.asgi import get_asgi_application
    application = get_asgi_application()

The path is looked up on the first request (URLconfs may not be importable earlier); nothing
depends on the lifespan protocol, which Django's handler does not run.
"""

from __future__ import annotations

from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler

from beammcp_django.transports.http import McpEndpoint, Receive, Scope, Send


class McpRouter:
    """Sends the MCP endpoint's path to ``endpoint`` and every other request to ``django``."""

    def __init__(self, django_app: Any, endpoint: McpEndpoint) -> None:
        self.django_app = django_app
        self.endpoint = endpoint
        self._path: str | None = None

    def endpoint_path(self) -> str:
        if self._path is None:
            from django.urls import reverse

            self._path = reverse("beammcp:endpoint")
        return self._path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._is_endpoint(scope):
            await self.endpoint(scope, receive, send)
        else:
            await self.django_app(scope, receive, send)

    def _is_endpoint(self, scope: Scope) -> bool:
        path = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return path == self.endpoint_path()


def build_endpoint() -> McpEndpoint:
    from beammcp_django.endpoint import get_http_policy, get_server, run_sync_host

    return McpEndpoint(server=get_server, policy=get_http_policy, run_sync=run_sync_host)


def get_asgi_application(django_app: Any = None) -> McpRouter:
    """Django's ASGI application with the MCP endpoint routed in front of it."""
    from beammcp_django.endpoint import prepare_process

    django.setup(set_prefix=False)
    router = McpRouter(django_app or ASGIHandler(), build_endpoint())
    prepare_process(legacy=False)
    return router
