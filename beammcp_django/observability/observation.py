"""One request observed: what is recorded of it and the access-log line written when it
ends (``Observation``), and the block around the core's answer (``Serving``), which records
what the request asked for and how it ended and, with a tracer, is the request's ``SERVER``
span, continuing the trace context of ``params._meta`` or of the HTTP headers."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from beammcp_django.observability.summary import UNSHOWN, outcome_of, shown_method, target_of
from beammcp_django.observability.tracing import otel_context, request_parent, trace
from beammcp_django.protocol import echo, jsonrpc, revisions
from beammcp_django.protocol.server import SERVED_METHODS

access_logger = logging.getLogger("beammcp_django.access")
# The most of a request id a span keeps (the client chooses it, at any length).
MAX_REQUEST_ID = 128


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
        observation.method = shown_method(message.get("method"))
        observation.target, self.exact = target_of(
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
        parent, links = request_parent(meta, self.headers)
        known = type(method) is str and method in SERVED_METHODS
        name = method if known else "MCP"
        target = observation.target if observation.target != UNSHOWN else None
        shown = observation.method if observation.method != UNSHOWN else None
        attributes: dict[str, Any] = {
            "mcp.method.name": method if known else (shown or "_OTHER"),
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
        outcome, code, message = outcome_of(self.reply, error)
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
