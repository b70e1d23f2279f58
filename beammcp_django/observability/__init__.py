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

The package's face is the names below, the ones the Django layer, the bench and the tests
use; each module owns one concept:

- ``tracing``: the tracer, once a provider is set, and the trace context a span continues;
- ``summary``: what a log line or span shows of a request (its method, target, outcome);
- ``observation``: one request's record, its access-log line and its ``SERVER`` span;
- ``host_spans``: the ``INTERNAL`` span around one call into host code;
- ``request_signals``: Django's request signals, sent when a foreign receiver listens;
- ``observers``: what each transport is given (``ObservedEndpoint``, ``StdioObserver``).
"""

from __future__ import annotations

from beammcp_django.observability import tracing
from beammcp_django.observability.host_spans import host_span
from beammcp_django.observability.observers import ObservedEndpoint, StdioObserver
from beammcp_django.observability.request_signals import RequestSignals
from beammcp_django.observability.tracing import TRACING_INSTALLED

__all__ = [
    "TRACING_INSTALLED",
    "ObservedEndpoint",
    "RequestSignals",
    "StdioObserver",
    "host_span",
    "tracing",
]
