"""The package's OpenTelemetry tracer, and the W3C trace context a request span continues.

This module owns the optional import of ``opentelemetry-api`` (``trace``, ``otel_context``:
None without it), the tracer once the host has set a real tracer provider (``tracer``,
looked up by ``find``), and reading a trace context from ``params._meta`` or the HTTP
headers (``request_parent``: the request span's parent and links).

``tracer`` is a module global, read as ``tracing.tracer`` by the span code and the
transports' observers: a test gives the package a tracer by setting it here.

Until a provider is set, with the API installed and no SDK, every span would be a
non-recording one, 3.2 µs to make and enter (``start_as_current_span`` through the API's
proxy tracer, ``timeit``, 2026-12-01); so the provider is looked at first, through the API's
module global: ``get_tracer_provider()`` reads the environment on every call (0.6 µs, same
measurement). A provider, once set, is never replaced (the API refuses to), so the tracer
found is kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import beammcp_django

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
except ImportError:  # the optional extra is not installed: no spans, no cost
    otel_context = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

TRACING_INSTALLED = trace is not None
# The API's module global for the provider (None until one is set; a provider once set is
# never replaced). An API without it makes every check take the slow path, ``find``; with no
# API at all, ``getattr(None, ...)`` gives None and nothing is looked for.
PROVIDER_GLOBAL = "_TRACER_PROVIDER"
# The trace context keys 2026-07-28 reserves in ``_meta`` (basic/index.mdx, "OpenTelemetry
# trace context"), also the HTTP header names of W3C Trace Context and Baggage.
_CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")

tracer: Any = None  # the tracer once found
if trace is not None and "OTEL_PYTHON_TRACER_PROVIDER" in os.environ:
    trace.get_tracer_provider()  # loads and sets the provider the variable names


def find() -> Any:
    """The tracer, when a provider is set by now; called only while ``tracer`` is None and
    the API's global says a provider may be there."""
    global tracer
    provider = getattr(trace, PROVIDER_GLOBAL, None)
    if provider is None:  # an API without that global: ask it, at its price
        provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    tracer = provider.get_tracer("beammcp_django", beammcp_django.__version__)
    return tracer


def current() -> Any:
    """The tracer, or None while no provider is set. Inlined where a request pays for it
    (``host_span``, ``ObservedEndpoint``): with no provider it costs one attribute read."""
    found = tracer
    if found is None and getattr(trace, PROVIDER_GLOBAL, trace) is not None:
        found = find()
    return found


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


def request_parent(meta: Any, headers: Any) -> tuple[Any, list[Any]]:
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
