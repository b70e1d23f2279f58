"""Settings of the conformance harness: the sample project's, minus its demo catalog, plus the
harness app, served at ``/mcp`` on ``127.0.0.1:$CONFORMANCE_PORT``.

``conformance/serve.sh PORT`` sets ``CONFORMANCE_PORT``; the allowed origins are the two local
origins of that port (or of ``CONFORMANCE_PUBLIC_PORT``, the proxy's, behind one), which the
suite's DNS-rebinding scenario sends as the valid case. With ``CONFORMANCE_REDIS_URL``
(``conformance/serve_shared.sh``) the 2025-11-25 sessions live in that Redis, shared by every
worker, and Channels' layer runs on it.
"""

import os

from sample_project import settings as sample
from sample_project.settings import *  # noqa: F403

PORT = int(os.environ.get("CONFORMANCE_PUBLIC_PORT") or os.environ.get("CONFORMANCE_PORT", "8000"))

DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1"]

INSTALLED_APPS = [app for app in sample.INSTALLED_APPS if app != "sample_project.demo"] + [
    "conformance.harness",
]

ROOT_URLCONF = "conformance.urls"
ASGI_APPLICATION = "conformance.asgi.application"

# The tasks fixtures' tasks live in this database, shared by the server and the workers
# that run them (serve.sh makes and migrates one a run, away from the sample's db.sqlite3):
# WAL, and write transactions that take the lock when they begin, so that the processes
# wait for each other rather than fail.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("CONFORMANCE_DB", ":memory:"),
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}

# The tasks run in django-tasks-db's workers (`manage.py db_worker`, started by serve.sh).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

BEAMMCP = {
    "SERVER_NAME": "beammcp-conformance-harness",
    "ALLOWED_ORIGINS": [f"http://localhost:{PORT}", f"http://127.0.0.1:{PORT}"],
    # The suite calls without credentials; the harness serves every caller, and says so.
    "AUTHORIZE": "beammcp_django.authorization.allow_all",
    # The suite polls every 200 ms and waits 10 s at most for a task to settle.
    "TASKS": {"POLL_INTERVAL_MS": 200, "LEASE_SECONDS": 6, "TTL_SECONDS": 3600},
}

if os.environ.get("CONFORMANCE_REDIS_URL"):
    _REDIS = os.environ["CONFORMANCE_REDIS_URL"]
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _REDIS}
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": _REDIS, "socket_timeout": 30}]},
        }
    }
    BEAMMCP["SESSION_CACHE"] = "default"
