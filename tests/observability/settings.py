"""Settings for the observability tests: ``tests.http_settings`` (the sample, faultapp, the
HTTP test app) plus the probe app, the access log at INFO on stderr, and, unless
``OBSERVE_TEST_TRACING=0``, the OpenTelemetry SDK's tracer provider exporting to memory.

The provider is set here, when the server process loads its settings, as a host would set
it up before serving (in settings, ``asgi.py`` or a worker hook)."""

import os

from tests import http_settings as _http

globals().update({name: value for name, value in vars(_http).items() if name.isupper()})

INSTALLED_APPS = [*_http.INSTALLED_APPS, "tests.observability.probe"]
ROOT_URLCONF = "tests.observability.urls"

# The access log on stderr (the server's log file), each line prefixed with the structured
# fields a JSON or key-value formatter would read from the record.
LOGGING = {
    **_http.LOGGING,
    "formatters": {
        "access": {
            "format": "ACCESS %(mcp_transport)s|%(mcp_method)s|%(mcp_target)s|%(http_status)s|"
            "%(mcp_outcome)s|%(mcp_error_code)s|%(duration_ms)s|%(trace_id)s %(message)s"
        }
    },
    "handlers": {
        **_http.LOGGING["handlers"],
        "access": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "access",
        },
    },
    "loggers": {
        "beammcp_django.access": {"level": "INFO", "handlers": ["access"], "propagate": False}
    },
}

if os.environ.get("OBSERVE_TEST_TRACING", "1") == "1":
    from tests.observability.probe.spans import install

    install()
