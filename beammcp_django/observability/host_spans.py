"""The ``INTERNAL`` span around one call into host code: ``host_span`` is the core's
``trace_host`` hook (``Server(trace_host=...)``), which the Django layer passes when the
OpenTelemetry API is installed."""

from __future__ import annotations

from typing import Any

from beammcp_django.observability import tracing
from beammcp_django.observability.tracing import PROVIDER_GLOBAL, otel_context, trace
from beammcp_django.protocol.errors import ProtocolError, ResourceNotFound, ToolError

# How a host call's span is named, by the method it serves.
_HOST_SPAN_NAME = {
    "tools/call": "execute_tool",
    "resources/read": "read_resource",
    "prompts/get": "get_prompt",
    "completion/complete": "complete",
}


def host_span(method: str, target: str) -> HostSpan | None:
    """The core's ``trace_host`` hook: a span around one call into host code, current while
    the host code runs (a sync handler's worker thread takes it along with the context), or
    None when no tracer provider is set."""
    tracer = tracing.tracer
    if tracer is None and getattr(trace, PROVIDER_GLOBAL, trace) is not None:
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
