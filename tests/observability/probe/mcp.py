"""Tools for the observability tests: the server's finished spans of one trace, the span and
baggage current in host code (sync, in a worker thread; async, on the loop), a ToolError."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import baggage, trace

from beammcp_django import mcp

TRACE_ID = {
    "type": "object",
    "properties": {"trace_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"}},
    "required": ["trace_id"],
    "additionalProperties": False,
}
NO_ARGUMENTS = {"type": "object", "additionalProperties": False}
# An argument value the access log and the spans must never carry.
SECRET_ARGUMENT = {
    "type": "object",
    "properties": {"secret": {"type": "string"}},
    "additionalProperties": False,
}


def current_span() -> str:
    """The current span's ids and the baggage of the current context, as JSON text."""
    context = trace.get_current_span().get_span_context()
    return json.dumps(
        {
            "trace_id": format(context.trace_id, "032x"),
            "span_id": format(context.span_id, "016x"),
            "baggage": dict(baggage.get_all()),
        }
    )


@mcp.site.register
class Spans(mcp.Tool):
    """The server's finished spans of one trace, as JSON text."""

    name = "probe_spans"
    input_schema = TRACE_ID

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        from tests.observability.probe.spans import finished

        return json.dumps(finished(arguments["trace_id"]))


@mcp.site.register
class CurrentSpan(mcp.Tool):
    """The span current while this sync handler runs in its worker thread."""

    name = "probe_current_span"
    input_schema = SECRET_ARGUMENT

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return current_span()


@mcp.site.register
class CurrentSpanAsync(mcp.Tool):
    """The span current while this coroutine handler runs on the event loop."""

    name = "probe_current_span_async"
    input_schema = NO_ARGUMENTS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return current_span()


@mcp.site.register
class Refuse(mcp.Tool):
    """Answers with ToolError: an execution error the model reads (``isError``)."""

    name = "probe_tool_error"
    input_schema = NO_ARGUMENTS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        raise mcp.ToolError("the probe refuses, as asked")
