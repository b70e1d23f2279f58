"""The OpenTelemetry SDK set up in the server process: a tracer provider whose spans go to
the SDK's in-memory exporter as each one ends (``SimpleSpanProcessor``)."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()


def install() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)


def finished(trace_id: str) -> list[dict[str, Any]]:
    """The ended spans of one trace (32 hex digits), as the SDK writes them in JSON."""
    return [
        json.loads(span.to_json(indent=None))
        for span in EXPORTER.get_finished_spans()
        if span.context is not None and format(span.context.trace_id, "032x") == trace_id
    ]
