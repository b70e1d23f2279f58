"""Settings for the real-server HTTP tests: the sample project, ``tests.faultapp``,
``tests.http.mcphttp_app`` (a cancellation-watching tool and a scriptable authorize hook) and
``tests.principals`` (tools that answer who is calling).

Environment switches, read when the server process starts:

- ``BEAMMCP_TEST_RUNSERVER``, when set, keeps the sample's ``daphne`` app, which
  ``manage.py runserver`` serves through (left out otherwise);
- ``BEAMMCP_TEST_BODY_TIMEOUT`` replaces ``BEAMMCP["BODY_READ_TIMEOUT_SECONDS"]`` (the tests
  use 1 s so a drip body is cut off quickly);
- ``BEAMMCP_TEST_HEADER_TIMEOUT`` replaces ``BEAMMCP["HEADER_TIMEOUT_SECONDS"]``;
- ``BEAMMCP_TEST_REDIS_URL``, when set, makes Channels' Redis layer the subscription layer
  and Redis the default cache (the cross-worker tests start their own redis-server);
  ``BEAMMCP_TEST_GROUP_ADD_DELAY`` then slows the layer's ``group_add`` by that many seconds,
  and ``BEAMMCP_TEST_SHARED_SESSIONS`` keeps 2025-11-25 sessions in that Redis
  (``BEAMMCP["SESSION_CACHE"]``), shared by every worker;
- ``BEAMMCP_TEST_FLUSH_SECONDS`` replaces ``BEAMMCP["CONNECTOME_FLUSH_SECONDS"]``;
- ``BEAMMCP_TEST_SUBSCRIPTION_QUEUE_LIMIT`` replaces ``BEAMMCP["SUBSCRIPTION_QUEUE_LIMIT"]``;
- ``BEAMMCP_TEST_ANY_ORIGIN``, when set, makes ``BEAMMCP["ALLOWED_ORIGINS"]`` the string
  ``"any"`` (an environment list cannot spell it);
- ``BEAMMCP_TEST_MODERN_ONLY``, when set, turns ``BEAMMCP["HTTP_LEGACY_SESSIONS"]`` off;
- ``MCPHTTP_RECORD_DIR`` is where the hook and the tool write what they saw (see
  ``tests/http/mcphttp_app``).
"""

import os

from sample_project import settings as _sample

globals().update({name: value for name, value in vars(_sample).items() if name.isupper()})

# Daphne only for `runserver` (BEAMMCP_TEST_RUNSERVER): it serves the sample's runserver and
# nothing else, and importing it (Twisted and its reactor) was a third of each server's start
# (tests/stdio_settings.py has the figures); uvicorn, mcp_serve and daphne's own command
# serve the project without it.
INSTALLED_APPS = [
    *(
        app
        for app in _sample.INSTALLED_APPS
        if app != "daphne" or os.environ.get("BEAMMCP_TEST_RUNSERVER")
    ),
    "tests.faultapp",
    "tests.http.mcphttp_app",
    "tests.principals",
]

BEAMMCP = dict(_sample.BEAMMCP)
BEAMMCP["AUTHORIZE"] = "tests.http.mcphttp_app.hooks.authorize"
BEAMMCP["AUTHORIZE_BODY"] = "tests.http.mcphttp_app.hooks.authorize_body"
if os.environ.get("BEAMMCP_TEST_BODY_TIMEOUT"):
    BEAMMCP["BODY_READ_TIMEOUT_SECONDS"] = float(os.environ["BEAMMCP_TEST_BODY_TIMEOUT"])

if os.environ.get("BEAMMCP_TEST_SUBSCRIPTION_QUEUE_LIMIT"):
    BEAMMCP["SUBSCRIPTION_QUEUE_LIMIT"] = int(os.environ["BEAMMCP_TEST_SUBSCRIPTION_QUEUE_LIMIT"])

if os.environ.get("BEAMMCP_TEST_ANY_ORIGIN"):
    BEAMMCP["ALLOWED_ORIGINS"] = "any"

if os.environ.get("BEAMMCP_TEST_MODERN_ONLY"):
    BEAMMCP["HTTP_LEGACY_SESSIONS"] = False

if os.environ.get("BEAMMCP_TEST_HEADER_TIMEOUT"):
    BEAMMCP["HEADER_TIMEOUT_SECONDS"] = float(os.environ["BEAMMCP_TEST_HEADER_TIMEOUT"])

if os.environ.get("BEAMMCP_TEST_FLUSH_SECONDS"):
    BEAMMCP["CONNECTOME_FLUSH_SECONDS"] = float(os.environ["BEAMMCP_TEST_FLUSH_SECONDS"])

if os.environ.get("BEAMMCP_TEST_REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": os.environ["BEAMMCP_TEST_REDIS_URL"], "socket_timeout": 30}]
            },
        }
    }
    if os.environ.get("BEAMMCP_TEST_GROUP_ADD_DELAY"):
        layer = "tests.http.mcphttp_app.slow_layer.SlowJoinRedisChannelLayer"
        CHANNEL_LAYERS["default"]["BACKEND"] = layer
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["BEAMMCP_TEST_REDIS_URL"],
        }
    }
    if os.environ.get("BEAMMCP_TEST_SHARED_SESSIONS"):
        BEAMMCP["SESSION_CACHE"] = "default"
