"""What an operator sees of the MCP path: Django's request signals, one access-log line per
request, and OpenTelemetry spans (docs/observability.md).

The MCP endpoint is routed in front of Django's ASGI handler, so nothing Django does per
request happens for it: no middleware, no ``request_started``/``request_finished``, no log
line. The transports call the hooks here instead, and each is decided per request, so a
logger enabled or a tracer provider set after start-up is honoured on the next request:

- the access log (logger ``beammcp_django.access``, INFO): one line per request, built only
  when that logger is enabled for INFO;
- spans, when ``opentelemetry-api`` is importable and the host has set a tracer provider:
  one ``SERVER`` span per JSON-RPC request, continuing the W3C trace context of
  ``params._meta`` (or of the HTTP ``traceparent`` header), and one ``INTERNAL`` span per
  call into host code (``host_span``, the core's ``trace_host`` seam);
- Django's request signals (HTTP only), sent as Django's ASGI handler sends them when a
  receiver other than Django's own listens.

With none of them on, a request pays for three checks (bench/observability.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from django.core.cache import close_caches
from django.core.handlers.base import reset_urlconf
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, reset_queries

import beammcp_django
from beammcp_django.protocol import echo, jsonrpc, revisions
from beammcp_django.protocol.catalog import ResourceTemplateSpec
from beammcp_django.protocol.errors import ProtocolError, ResourceNotFound, ToolError
from beammcp_django.protocol.server import SERVED_METHODS
from beammcp_django.transports.http import OBSERVATION_KEY

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
except ImportError:  # the optional extra is not installed: no spans, no cost
    otel_context = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

logger = logging.getLogger("beammcp_django")
access_logger = logging.getLogger("beammcp_django.access")

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

TRACING_INSTALLED = trace is not None
# The requests whose ``params`` name what they act on, and the member that names it.
_TARGET_OF = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
# The trace context keys 2026-07-28 reserves in ``_meta`` (basic/index.mdx, "OpenTelemetry
# trace context"), also the HTTP header names of W3C Trace Context and Baggage.
_CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")
# How a host call's span is named, by the method it serves.
_HOST_SPAN_NAME = {
    "tools/call": "execute_tool",
    "resources/read": "read_resource",
    "prompts/get": "get_prompt",
    "completion/complete": "complete",
}


# -- the tracer -----------------------------------------------------------------------------


class _Tracing:
    """The package's tracer, once the host has set a real tracer provider.

    Until then, with the API installed and no SDK, every span would be a non-recording one,
    3.2 µs to make and enter (``start_as_current_span`` through the API's proxy tracer,
    ``timeit``, 2026-12-01); so the provider is looked at first, through the API's module
    global: ``get_tracer_provider()`` reads the environment on every call (0.6 µs, same
    measurement). A provider, once set, is never replaced (the API refuses to), so the
    tracer found is kept.
    """

    def __init__(self) -> None:
        self.tracer: Any = None  # the tracer once found
        if trace is not None and "OTEL_PYTHON_TRACER_PROVIDER" in os.environ:
            trace.get_tracer_provider()  # loads and sets the provider the variable names

    def find(self) -> Any:
        """The tracer, when a provider is set by now; called only while ``tracer`` is None
        and the API's global says a provider may be there (``provider_set``)."""
        provider = getattr(trace, _PROVIDER, None)
        if provider is None:  # an API without that global: ask it, at its price
            provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            return None
        self.tracer = provider.get_tracer("beammcp_django", beammcp_django.__version__)
        return self.tracer


def _tracer() -> Any:
    """The tracer, or None while no provider is set. Inlined where a request pays for it
    (``host_span``, ``ObservedEndpoint``): with no provider it costs one attribute read."""
    tracer = tracing.tracer
    if tracer is None and getattr(trace, _PROVIDER, trace) is not None:
        tracer = tracing.find()
    return tracer


tracing = _Tracing()
# The API's module global for the provider (None until one is set; a provider once set is
# never replaced). An API without it makes every check take the slow path, ``find``; with no
# API at all, ``getattr(None, ...)`` gives None and nothing is looked for.
_PROVIDER = "_TRACER_PROVIDER"


def _context_from(carrier: Mapping[str, str]) -> tuple[Any, Any]:
    """The context the host's propagators (W3C Trace Context and Baggage by default) read from
    ``carrier``, and the remote span context in it (None when there is no valid one)."""
    if not carrier:
        return None, None
    from opentelemetry import propagate

    extracted = propagate.extract(carrier, context=otel_context.Context())
    remote = trace.get_current_span(extracted).get_span_context()
    return (extracted, remote) if remote.is_valid else (None, None)


def _meta_carrier(meta: Any) -> dict[str, str]:
    """The trace context members of ``params._meta`` that are strings (anything else is
    ignored, as a malformed ``traceparent`` header would be)."""
    if type(meta) is not dict:
        return {}
    return {key: value for key in _CONTEXT_KEYS if type(value := meta.get(key)) is str}


def _header_carrier(headers: Any) -> dict[str, str]:
    carrier = {}
    for key in _CONTEXT_KEYS:
        values = headers.all(key)
        if len(values) == 1:  # a repeat that could disagree is not a context to continue
            carrier[key] = values[0]
    return carrier


def _parent(meta: Any, headers: Any) -> tuple[Any, list[Any]]:
    """The request span's parent context (None: the current one) and its links.

    Precedence (docs/observability.md): the context in ``params._meta``, which belongs to
    the MCP request itself; else the current span, when an outer middleware (an ASGI
    instrumentation) already continued the HTTP request's context; else the HTTP
    ``traceparent`` header. A transport context that did not become the parent is kept as a
    link, as the OpenTelemetry MCP conventions recommend.
    """
    from_meta, meta_span = _context_from(_meta_carrier(meta))
    ambient = trace.get_current_span().get_span_context()
    if not ambient.is_valid:
        ambient = None
    from_header, header_span = (None, None)
    if headers is not None and ambient is None:
        from_header, header_span = _context_from(_header_carrier(headers))
    if from_meta is not None:
        transport = ambient or header_span
        links = [trace.Link(transport)] if transport is not None and transport != meta_span else []
        return from_meta, links
    if ambient is not None:
        return None, []
    return from_header, []


# -- what a request is about ------------------------------------------------------------------


# What a log line shows for a value the client sent that cannot be shown as it is.
UNSHOWN = "?"
# The most of a request id a span keeps (the client chooses it, at any length).
MAX_REQUEST_ID = 128


def _shown_method(method: Any) -> str | None:
    """The method as a log may show it; None when absent, ``UNSHOWN`` when not showable."""
    if type(method) is not str:
        return None
    return echo.name(method) or UNSHOWN


def _target(server: Callable[[], Any] | None, method: Any, params: Any) -> tuple[Any, bool]:
    """What the request names, as the catalog names it: a tool or prompt the catalog has, a
    static resource's URI, the URI template a URI matched, a completion's reference; and
    whether that is the client's value itself (False for a template). ``(None, True)`` when
    the request names nothing; ``UNSHOWN`` when it names what the catalog does not have:
    the client's own bytes are never logged (docs/threat-model.md)."""
    if type(params) is not dict:
        return None, True
    if method == "completion/complete":
        ref = params.get("ref")
        value = (ref.get("name") or ref.get("uri")) if type(ref) is dict else None
    else:
        member = _TARGET_OF.get(method) if type(method) is str else None
        value = params.get(member) if member is not None else None
    if type(value) is not str:
        return None, True
    if server is None:
        return UNSHOWN, True
    index = server().index()
    if method == "tools/call":
        known = value in index.tool_entries
    elif method == "prompts/get":
        known = value in index.prompt_entries
    elif method == "resources/read":
        match = index.match(value)
        if match is not None and isinstance(match.spec, ResourceTemplateSpec):
            return match.spec.uri_template, False
        known = match is not None
    else:
        known = (
            value in index.prompt_entries
            or value in index.resources
            or (value in index.template_keys)
        )
    return (value, True) if known else (UNSHOWN, True)


def _outcome(reply: Any, error: BaseException | None) -> tuple[str, int | None, str | None]:
    """How a request ended: ``ok``, ``tool_error`` (a result with ``isError``), ``error``
    (a JSON-RPC error, with its code and message), ``cancelled`` (the client withdrew it or
    left) or ``failed`` (the transport raised)."""
    if error is not None:
        return ("cancelled" if isinstance(error, asyncio.CancelledError) else "failed"), None, None
    if type(reply) is not dict:
        return "cancelled", None, None  # the client left before its answer
    failure = reply.get("error")
    if type(failure) is dict:
        return "error", failure.get("code"), failure.get("message")
    result = reply.get("result")
    if type(result) is dict and result.get("isError") is True:
        return "tool_error", None, None
    return "ok", None, None


# -- one request ------------------------------------------------------------------------------


class Observation:
    """What is recorded of one request, and the access-log line written when it ends."""

    __slots__ = (
        "client",
        "code",
        "http_version",
        "log",
        "method",
        "outcome",
        "request",
        "server",
        "started",
        "started_ns",
        "status",
        "target",
        "trace_id",
        "tracer",
        "transport",
    )

    def __init__(
        self, transport: str, log: bool, tracer: Any, server: Callable[[], Any] | None = None
    ) -> None:
        self.started = time.perf_counter()
        self.server = server  # the core's Server: whose catalog names may go in a span name
        self.started_ns = time.time_ns() if tracer is not None else 0
        self.transport = transport
        self.log = log
        self.tracer = tracer
        self.request: str | None = None  # HTTP: "POST /mcp"
        self.status: int | None = None
        self.method: str | None = None
        self.target: str | None = None
        self.outcome: str | None = None
        self.code: int | None = None
        self.trace_id: str | None = None
        self.client: Any = None  # HTTP: the ASGI scope's (address, port)
        self.http_version: str | None = None

    def serving(self, message: Any, headers: Any = None, *, version: str | None = None) -> Serving:
        """Around the core's answer to ``message`` (``headers``: the HTTP request's;
        ``version``: a stdio session's revision): records what it asked for and how it ended;
        with a tracer, the request's span, current while the core runs."""
        return Serving(self, message, headers, version)

    def refused(self, code: int) -> None:
        """The message was refused before the core saw it (undecodable, too large)."""
        self.outcome = "error"
        self.code = code

    def write_log(self) -> None:
        if not self.log:
            return
        duration_ms = (time.perf_counter() - self.started) * 1000
        outcome = self.outcome or "-"
        if self.code is not None:
            outcome = f"{outcome} code={self.code}"
        fields = {
            "mcp_transport": self.transport,
            "mcp_method": self.method,
            "mcp_target": self.target,
            "mcp_outcome": self.outcome,
            "mcp_error_code": self.code,
            "http_request": self.request,
            "http_status": self.status,
            "duration_ms": round(duration_ms, 3),
            "trace_id": self.trace_id,
        }
        if self.transport == "http":
            head = 'transport=http request="%s" status=%s '
            values: tuple[Any, ...] = (self.request, "-" if self.status is None else self.status)
        else:
            head, values = "transport=stdio ", ()
        access_logger.info(
            head + "method=%s target=%s outcome=%s duration_ms=%.3f%s",
            *values,
            self.method or "-",
            self.target or "-",
            outcome,
            duration_ms,
            f" trace_id={self.trace_id}" if self.trace_id else "",
            extra=fields,
        )


class Serving:
    """The core's answer to one message: set ``reply`` to what it answered before the block
    ends. A notification or a stray response gets no span, only its method logged."""

    __slots__ = (
        "_token",
        "exact",
        "headers",
        "is_request",
        "message",
        "observation",
        "reply",
        "span",
        "version",
    )

    def __init__(
        self,
        observation: Observation,
        message: Any,
        headers: Any,
        version: str | None,
    ) -> None:
        self.observation = observation
        self.message = message
        self.headers = headers
        self.version = version
        self.reply: Any = None
        self.span: Any = None
        self._token: Any = None
        # A request (an id, and not a response): a notification is only logged.
        self.is_request = "id" in message and not jsonrpc.is_response(message)
        observation.method = _shown_method(message.get("method"))
        observation.target, self.exact = _target(
            observation.server, message.get("method"), message.get("params")
        )

    def __enter__(self) -> Serving:
        if self.is_request and self.observation.tracer is not None:
            self.span = self._start_span()
        return self

    def _start_span(self) -> Any:
        observation = self.observation
        method = self.message.get("method")
        params = self.message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        parent, links = _parent(meta, self.headers)
        known = type(method) is str and method in SERVED_METHODS
        name = method if known else "MCP"
        target = observation.target if observation.target != UNSHOWN else None
        shown_method = observation.method if observation.method != UNSHOWN else None
        attributes: dict[str, Any] = {
            "mcp.method.name": method if known else (shown_method or "_OTHER"),
            "network.transport": "tcp" if observation.transport == "http" else "pipe",
        }
        request_id = jsonrpc.readable_id(self.message)
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)[:MAX_REQUEST_ID]
        version = meta.get(revisions.META_PROTOCOL_VERSION) if type(meta) is dict else None
        version = version if type(version) is str else self.version
        if version is not None and echo.name(version):
            attributes["mcp.protocol.version"] = version
        if target is not None:
            if method == "tools/call":
                attributes["gen_ai.tool.name"] = target
                attributes["gen_ai.operation.name"] = "execute_tool"
            elif method == "prompts/get":
                attributes["gen_ai.prompt.name"] = target
            elif method == "resources/read":
                # The URI asked for when it is the catalog's own; a template's URIs carry the
                # client's values, so the template stands in for them.
                key = "mcp.resource.uri" if self.exact else "beammcp.resource.template"
                attributes[key] = target
            if method in ("tools/call", "prompts/get"):
                name = f"{method} {target}"
        if observation.transport == "http":
            attributes["network.protocol.name"] = "http"
            if observation.http_version:
                attributes["network.protocol.version"] = observation.http_version
            if observation.client:
                attributes["client.address"] = str(observation.client[0])
                attributes["client.port"] = int(observation.client[1])
        span = observation.tracer.start_span(
            name,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
            links=links,
            start_time=observation.started_ns,
        )
        if span.is_recording():
            observation.trace_id = format(span.get_span_context().trace_id, "032x")
        base = parent if parent is not None else otel_context.get_current()
        self._token = otel_context.attach(trace.set_span_in_context(span, base))
        return span

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        if not self.is_request:
            return  # a notification or a response: its HTTP status says how it went
        observation = self.observation
        outcome, code, message = _outcome(self.reply, error)
        observation.outcome = outcome
        observation.code = code if type(code) is int else None
        span = self.span
        if span is None:
            return
        try:
            if span.is_recording():
                if outcome == "error":
                    span.set_attribute("error.type", str(code))
                    span.set_attribute("rpc.response.status_code", str(code))
                    span.set_status(
                        trace.StatusCode.ERROR, message if type(message) is str else None
                    )
                elif outcome == "tool_error":
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(trace.StatusCode.ERROR, "the tool answered isError")
                elif outcome == "cancelled":
                    span.set_attribute("error.type", "cancelled")
                    span.set_status(trace.StatusCode.ERROR, "the request was cancelled")
                if observation.status is not None:
                    span.set_attribute("http.response.status_code", observation.status)
            span.end()
        finally:
            otel_context.detach(self._token)


def host_span(method: str, target: str) -> HostSpan | None:
    """The core's ``trace_host`` hook: a span around one call into host code, current while
    the host code runs (a sync handler's worker thread takes it along with the context), or
    None when no tracer provider is set."""
    tracer = tracing.tracer
    if tracer is None and getattr(trace, _PROVIDER, trace) is not None:
        tracer = tracing.find()
    if tracer is None:
        return None
    return HostSpan(tracer, method, target)


class HostSpan:
    """One call into host code as an ``INTERNAL`` span: error status when the host raised
    (the exception recorded, unless it is one the contract gives the host to raise)."""

    __slots__ = ("_token", "attributes", "name", "span", "tracer")

    def __init__(self, tracer: Any, method: str, target: str) -> None:
        self.tracer = tracer
        prefix = _HOST_SPAN_NAME.get(method, method)
        self.name = f"{prefix} {target}" if target else prefix
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if target:
            attributes["beammcp.host.target"] = target
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
            attributes["gen_ai.tool.name"] = target
        elif method == "prompts/get":
            attributes["gen_ai.prompt.name"] = target
        self.attributes = attributes
        self.span: Any = None
        self._token: Any = None

    def __enter__(self) -> HostSpan:
        self.span = self.tracer.start_span(
            self.name, kind=trace.SpanKind.INTERNAL, attributes=self.attributes
        )
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> None:
        span = self.span
        try:
            if error is not None and span.is_recording():
                if isinstance(error, ToolError):
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(trace.StatusCode.ERROR, "the tool raised ToolError")
                elif isinstance(error, ProtocolError):  # the call deadline
                    span.set_attribute("error.type", str(error.code))
                    span.set_status(trace.StatusCode.ERROR, error.message)
                elif isinstance(error, ResourceNotFound):
                    span.set_attribute("error.type", "resource_not_found")
                    span.set_status(trace.StatusCode.ERROR, "the reader raised ResourceNotFound")
                else:
                    kind_name = f"{type(error).__module__}.{type(error).__qualname__}"
                    span.set_attribute("error.type", kind_name)
                    span.record_exception(error)
                    span.set_status(trace.StatusCode.ERROR, type(error).__name__)
            span.end()
        finally:
            otel_context.detach(self._token)


# -- the transports' observers ----------------------------------------------------------------


class RequestSignals:
    """Whether ``request_started``/``request_finished`` have a receiver for ``sender`` other
    than Django's own, and sending them as Django's ASGI handler does.

    Django's own receivers (``close_old_connections``, ``reset_queries``, ``close_caches``,
    ``reset_urlconf``) look after the thread that served a request; on the MCP path sync host
    code runs in worker threads that close old connections around every call, and the async
    ORM's connection is tidied after the calls that used it (``async_orm``). So for them
    alone the signals would buy nothing and cost about 215 µs a request (their
    ``sync_to_async`` hops; 14 to 19 µs even run inline: bench/observability.py,
    docs/performance.md). A host's own receiver (an APM agent's, a metrics counter) makes
    them worth it: then both are sent with ``asend``, the sync receivers in Django's
    thread-sensitive executor.
    """

    DJANGO_OWN = frozenset({close_old_connections, reset_queries, close_caches, reset_urlconf})

    def __init__(self, sender: Any) -> None:
        self.sender = sender
        self._seen: tuple[list[Any], list[Any]] | None = None
        self._wanted = False

    def wanted(self) -> bool:
        started, finished = request_started.receivers, request_finished.receivers
        seen = self._seen
        if seen is not None and seen[0] == started and seen[1] == finished:
            return self._wanted
        self._seen = (list(started), list(finished))
        self._wanted = self._foreign(request_started) or self._foreign(request_finished)
        return self._wanted

    def _foreign(self, signal: Any) -> bool:
        # Django's private ``Signal._live_receivers(sender)``: its (sync, async) receivers for
        # ``sender``, dead weak references dropped. It stays because no public API names a
        # signal's receivers: ``has_listeners`` is always true here (Django connects its own
        # to both signals), and sending is what this spares. Checked against Django 5.2.19
        # and 6.1.3 (requirements/base.txt); tests/observability/test_signal_receivers.py
        # fails if it changes. Should it change anyway, the fallback sends both signals:
        # slower, never a receiver missed. (``receivers``, read in ``wanted``, only decides
        # when to ask again: any change of it asks again.)
        try:
            sync_receivers, async_receivers = signal._live_receivers(self.sender)
        except (AttributeError, TypeError, ValueError):
            return bool(signal.receivers)  # a Django whose internals moved: send them
        return bool(async_receivers) or any(r not in self.DJANGO_OWN for r in sync_receivers)

    async def started(self, scope: Any) -> None:
        try:
            await request_started.asend(sender=self.sender, scope=scope)
        except Exception:
            logger.exception("a request_started receiver raised; the MCP request is served")

    async def finished(self) -> None:
        try:
            await request_finished.asend(sender=self.sender)
        except Exception:
            logger.exception("a request_finished receiver raised")


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
            if tracer is None and getattr(trace, _PROVIDER, trace) is not None:
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
        tracer = _tracer()
        if not log and tracer is None:
            return None
        return Observation("stdio", log, tracer, self.server)
