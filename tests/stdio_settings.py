"""Settings for the stdio subprocess tests: the sample project (but daphne) plus
``tests.faultapp`` and ``tests.principals``.

Environment switches, read when the subprocess starts:

- ``BEAMMCP_TEST_CATALOG`` replaces ``BEAMMCP["CATALOG"]`` (the broken-catalog test points it
  at ``tests.broken_catalog.catalog``);
- ``BEAMMCP_TEST_MAX_CONCURRENT`` replaces ``BEAMMCP["STDIO_MAX_CONCURRENT_REQUESTS"]``;
- ``BEAMMCP_TEST_FLUSH_SECONDS`` replaces ``BEAMMCP["CONNECTOME_FLUSH_SECONDS"]``;
- ``BEAMMCP_TEST_STDIO_USER`` sets ``BEAMMCP["STDIO_USER"]``;
- ``BEAMMCP_TEST_RATE_LIMIT`` names ``tests.principals.limits.limit`` as ``RATE_LIMIT``;
- ``BEAMMCP_TEST_PLAIN_ASGI`` points ``ASGI_APPLICATION`` at Django's plain handler (no
  router), the case system check W002 warns of for HTTP.
"""

import os

from sample_project import settings as _sample

globals().update({name: value for name, value in vars(_sample).items() if name.isupper()})

# The servers under test run as in production, DEBUG off, unless a test sets DJANGO_DEBUG:
# with it on an internal error names its cause to the client (protocol/faults.py).
DEBUG = _sample.env.bool("DJANGO_DEBUG", default=False)

# Less daphne: it serves the sample's `runserver` only, which a stdio server never runs, and
# importing it (Twisted and its reactor) was a third of each stdio process's start: 1.52 s
# of CPU with it, 1.04 s without (median of 10 `manage.py mcp_stdio` starts, 2026-12-06).
INSTALLED_APPS = [
    *(app for app in _sample.INSTALLED_APPS if app != "daphne"),
    "tests.faultapp",
    "tests.principals",
]

BEAMMCP = dict(_sample.BEAMMCP)
if os.environ.get("BEAMMCP_TEST_CATALOG"):
    BEAMMCP["CATALOG"] = os.environ["BEAMMCP_TEST_CATALOG"]
if os.environ.get("BEAMMCP_TEST_MAX_CONCURRENT"):
    BEAMMCP["STDIO_MAX_CONCURRENT_REQUESTS"] = int(os.environ["BEAMMCP_TEST_MAX_CONCURRENT"])
if os.environ.get("BEAMMCP_TEST_FLUSH_SECONDS"):
    BEAMMCP["CONNECTOME_FLUSH_SECONDS"] = float(os.environ["BEAMMCP_TEST_FLUSH_SECONDS"])
if os.environ.get("BEAMMCP_TEST_STDIO_USER"):
    BEAMMCP["STDIO_USER"] = os.environ["BEAMMCP_TEST_STDIO_USER"]
if os.environ.get("BEAMMCP_TEST_PLAIN_ASGI"):
    ASGI_APPLICATION = "tests.http.mcphttp_app.plain_asgi.application"
if os.environ.get("BEAMMCP_TEST_RATE_LIMIT"):
    BEAMMCP["RATE_LIMIT"] = "tests.principals.limits.limit"
