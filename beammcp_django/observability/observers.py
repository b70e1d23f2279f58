"""What each transport is given to observe its requests: over HTTP, the endpoint wrapped
(``ObservedEndpoint``, each request an ``HttpObservation``); over stdio, a callable that
makes each request's ``Observation`` (``StdioObserver``). Each decides per request whether
anything observes it, and costs a request nothing more when nothing does."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from beammcp_django.observability import tracing
from beammcp_django.observability.observation import Observation, access_logger
from beammcp_django.observability.request_signals import RequestSignals
from beammcp_django.observability.tracing import PROVIDER_GLOBAL, trace
from beammcp_django.protocol import echo
from beammcp_django.transports.http import OBSERVATION_KEY

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]


class HttpObservation(Observation):
    """One HTTP request: its status read from the response as it is sent."""

    __slots__ = ("scope", "signals")

    def __init__(
        self,
        scope: Any,
        log: bool,
        tracer: Any,
        signals: RequestSignals | None,
        server: Callable[[], Any],
    ) -> None:
        super().__init__("http", log, tracer, server)
        self.scope = scope
        self.signals = signals
        if log:
            path = scope.get("path")
            shown = echo.uri(path) if type(path) is str else None
            self.request = f"{scope.get('method', '-')} {shown or '?'}"
        if tracer is not None:
            self.client = scope.get("client")
            self.http_version = scope.get("http_version")

    async def start(self, send: Send) -> Send:
        """Send ``request_started`` when wanted; the ``send`` to answer through."""
        if self.signals is not None:
            await self.signals.started(self.scope)

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
            await send(message)

        return watched

    async def close(self) -> None:
        """The response was sent (or the client left): the log line, ``request_finished``."""
        self.write_log()
        if self.signals is not None:
            await self.signals.finished()


class ObservedEndpoint:
    """The MCP endpoint's ASGI application with each request observed: ``request_started``
    before it, the status read from its answer, its observation in the scope (under
    ``OBSERVATION_KEY``, where the endpoint finds it to wrap the core's answer), the log line
    and ``request_finished`` after it. A request nothing observes (the access log off, no
    tracer provider, no foreign signal receiver) goes to the endpoint as it came, without a
    coroutine of this class around it.

    ``server`` returns the core's server (whose catalog names may go in span names);
    ``request_signals`` False where Django's own handler sends them (the plain view).
    """

    def __init__(
        self,
        endpoint: Any,
        sender: Any,
        server: Callable[[], Any],
        *,
        request_signals: bool = True,
    ) -> None:
        self.endpoint = endpoint
        self.server = server
        self.signals = RequestSignals(sender) if request_signals else None
        self._logging = access_logger.isEnabledFor  # cached by the logger until reconfigured

    def __call__(self, scope: Any, receive: Any, send: Send) -> Awaitable[None]:
        if scope["type"] == "http":
            log = self._logging(logging.INFO)
            tracer = tracing.tracer
            if tracer is None and getattr(trace, PROVIDER_GLOBAL, trace) is not None:
                tracer = tracing.find()
            signals = self.signals
            if signals is not None and not signals.wanted():
                signals = None
            if log or tracer is not None or signals is not None:
                observation = HttpObservation(scope, log, tracer, signals, self.server)
                return self._observed(observation, scope, receive, send)
        return self.endpoint(scope, receive, send)

    async def _observed(
        self, observation: HttpObservation, scope: Any, receive: Any, send: Send
    ) -> None:
        watched = await observation.start(send)
        scope[OBSERVATION_KEY] = observation
        try:
            await self.endpoint(scope, receive, watched)
        finally:
            await observation.close()


class StdioObserver:
    """Called by the stdio transport once per request: an ``Observation`` or None.

    stdio sends no Django request signals: there is no HTTP request, and a receiver of
    ``request_started`` expects a WSGI ``environ`` or an ASGI ``scope`` (docs/observability.md
    says what a host does instead)."""

    def __init__(self, server: Callable[[], Any]) -> None:
        self.server = server

    def __call__(self) -> Observation | None:
        log = access_logger.isEnabledFor(logging.INFO)
        tracer = tracing.current()
        if not log and tracer is None:
            return None
        return Observation("stdio", log, tracer, self.server)
