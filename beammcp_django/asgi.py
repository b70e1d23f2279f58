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
depends on the lifespan protocol, which Django's handler does not run. The router answers it
where the server speaks it (uvicorn does): at shutdown it runs ``on_shutdown`` (the
connectome's last flush), which ``atexit`` would miss where the server ends its process by
re-raising the signal that stopped it (uvicorn 0.54 does, after a graceful shutdown).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler

from beammcp_django.oauth.metadata import serve_metadata
from beammcp_django.observability import ObservedEndpoint
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.types import Receive, Scope, Send

logger = logging.getLogger("beammcp_django")


class McpRouter:
    """Sends the MCP endpoint's path to ``endpoint`` and every other request to ``django``;
    answers the lifespan protocol for Django's handler, which refuses it."""

    def __init__(
        self,
        django_app: Any,
        endpoint: Callable[[Scope, Receive, Send], Awaitable[None]],
        on_shutdown: Callable[[], None] | None = None,
    ) -> None:
        self.django_app = django_app
        self.endpoint = endpoint
        self.on_shutdown = on_shutdown
        self._path: str | None = None
        self._metadata_document: tuple[str | None, bytes] | None = None

    def endpoint_path(self) -> str:
        if self._path is None:
            from django.urls import reverse

            self._path = reverse("beammcp:endpoint")
        return self._path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._is_endpoint(scope):
            await self.endpoint(scope, receive, send)
        elif scope["type"] == "http" and self._is_metadata(scope):
            await serve_metadata(self._metadata[1], scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
        else:
            await self.django_app(scope, receive, send)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not isinstance(self.django_app, ASGIHandler) and await self._host_lifespan(
            scope, receive, send
        ):
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._shut_down()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _host_lifespan(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Hand the protocol to the host's own application, the shutdown hook run as the
        shutdown message passes through. False when that application refuses the protocol
        before answering it (Channels' ``ProtocolTypeRouter`` raises for a lifespan scope):
        then the router answers it itself, having answered the startup the host's took."""
        answered = False
        took_startup = False

        async def receive_then_shut_down() -> Any:
            nonlocal took_startup
            message = await receive()
            if message["type"] == "lifespan.startup":
                took_startup = True
            elif message["type"] == "lifespan.shutdown":
                await self._shut_down()
            return message

        async def send_answering(message: Any) -> None:
            nonlocal answered
            answered = True
            await send(message)

        try:
            await self.django_app(scope, receive_then_shut_down, send_answering)
        except Exception:
            if answered:
                raise
            if took_startup:
                await send({"type": "lifespan.startup.complete"})
            return False
        return True

    async def _shut_down(self) -> None:
        if self.on_shutdown is None:
            return
        try:
            await asyncio.to_thread(self.on_shutdown)  # it may use the ORM
        except Exception:
            logger.exception("the MCP shutdown hook raised")

    def _is_endpoint(self, scope: Scope) -> bool:
        return _routed_path(scope) == self.endpoint_path()

    @property
    def _metadata(self) -> tuple[str | None, bytes]:
        """The path and bytes of the resource's metadata document (``BEAMMCP["OAUTH"]``);
        no path when it is not set. Read once, on the first request."""
        if self._metadata_document is None:
            from beammcp_django.oauth.bearer import configured_resource_server

            server = configured_resource_server()
            self._metadata_document = (
                (server.metadata_path, server.document()) if server is not None else (None, b"")
            )
        return self._metadata_document

    def _is_metadata(self, scope: Scope) -> bool:
        return _routed_path(scope) == self._metadata[0]


def _routed_path(scope: Scope) -> str:
    """The request's path below the application's root (``root_path``)."""
    path = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path


def build_endpoint(
    *, request_signals: bool = True, policy: Callable[[], HttpPolicy] | None = None
) -> ObservedEndpoint:
    """The endpoint with its observation (docs/observability.md). ``request_signals``: send
    Django's request signals for it; off where Django's own handler already sent them.
    ``policy``: the settings' (``get_http_policy``) unless another is given (the admin's view
    preview answers as the logged-in user)."""
    # Imported here, not above: the servers reach the models, which exist after django.setup().
    from beammcp_django.process import get_server
    from beammcp_django.runtime.host_threads import run_sync_host
    from beammcp_django.servers.http_settings import get_http_policy

    endpoint = McpEndpoint(
        server=get_server, policy=policy or get_http_policy, run_sync=run_sync_host
    )
    return ObservedEndpoint(endpoint, McpEndpoint, get_server, request_signals=request_signals)


def get_asgi_application(django_app: Any = None) -> McpRouter:
    """Django's ASGI application with the MCP endpoint routed in front of it."""
    django.setup(set_prefix=False)
    # Imported once the apps are ready: the servers and the connectome reach the models.
    from beammcp_django.connectome.exports import finish_observing
    from beammcp_django.process import prepare_process

    router = McpRouter(django_app or ASGIHandler(), build_endpoint(), finish_observing)
    prepare_process(stdio=False)
    return router
