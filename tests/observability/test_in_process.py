"""In process, through ``build_endpoint()`` (what ``get_asgi_application()`` routes to): the
observed exchange keeps the hot path's shape, the access log's records carry their fields,
and the request span's parent follows the documented precedence when an outer
instrumentation already made a span for the HTTP request.

The tracer is a real SDK provider's, given to the package's tracer slot for the test only:
setting the process-wide provider would leave it set for every later test.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from beammcp_django import observability
from beammcp_django.asgi import build_endpoint
from tests.asgi.test_exchange_shape import headers_for, serve_once
from tests.observability.conftest import new_span_id, new_trace_id, traceparent
from tests.support import asgi_post, message


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TracerProvider, Any]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(observability.tracing, "tracer", provider.get_tracer("beammcp_django"))
    yield provider, exporter
    provider.shutdown()


def test_an_observed_quick_call_still_starts_no_task(
    provider: tuple[TracerProvider, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="beammcp_django.access")
    sent, created = asyncio.run(serve_once("echo", {"text": "hello"}, endpoint=build_endpoint()))
    assert created == 0
    assert sent[0]["status"] == 200
    (record,) = [r for r in caplog.records if r.name == "beammcp_django.access"]
    assert (record.mcp_transport, record.mcp_method, record.mcp_target) == (
        "http",
        "tools/call",
        "echo",
    )
    assert (record.http_status, record.mcp_outcome, record.mcp_error_code) == (200, "ok", None)
    assert record.http_request == "POST /mcp"
    names = [span.name for span in provider[1].get_finished_spans()]
    assert names == ["execute_tool echo", "tools/call echo"]
    assert format(provider[1].get_finished_spans()[1].context.trace_id, "032x") == record.trace_id


def serve_under(outer: Any, call: dict[str, Any], extra: list[tuple[bytes, bytes]]) -> Any:
    """``call`` through the observed endpoint inside the span ``outer`` starts, as an outer
    ASGI instrumentation would run the application; the span ``outer`` made."""
    body = json.dumps(call).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [*headers_for("echo"), *extra],
    }

    async def run() -> Any:
        with outer.start_as_current_span("POST /mcp", kind=trace.SpanKind.SERVER) as span:
            sent = await asgi_post(build_endpoint(), scope, body)
        assert sent[0]["status"] == 200
        return span

    return asyncio.run(run())


def test_an_outer_span_is_the_parent_when_meta_carries_no_context(
    provider: tuple[TracerProvider, Any],
) -> None:
    outer = provider[0].get_tracer("outer-instrumentation")
    header_trace = new_trace_id()
    ambient = serve_under(
        outer,
        message("ambient-1", "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        [(b"traceparent", traceparent(header_trace, new_span_id()).encode())],
    )
    server = next(s for s in provider[1].get_finished_spans() if s.name == "tools/call echo")
    assert server.parent is not None
    assert server.parent.span_id == ambient.get_span_context().span_id
    assert server.context.trace_id == ambient.get_span_context().trace_id
    assert list(server.links) == []


def test_meta_context_wins_over_an_outer_span_which_becomes_a_link(
    provider: tuple[TracerProvider, Any],
) -> None:
    outer = provider[0].get_tracer("outer-instrumentation")
    meta_trace, meta_span = new_trace_id(), new_span_id()
    ambient = serve_under(
        outer,
        message(
            "ambient-2",
            "tools/call",
            {"name": "echo", "arguments": {"text": "hi"}},
            traceparent=traceparent(meta_trace, meta_span),
            baggage="tenant=blue",
        ),
        [],
    )
    server = next(s for s in provider[1].get_finished_spans() if s.name == "tools/call echo")
    assert format(server.context.trace_id, "032x") == meta_trace
    assert server.parent is not None
    assert format(server.parent.span_id, "016x") == meta_span
    assert [link.context.span_id for link in server.links] == [ambient.get_span_context().span_id]
