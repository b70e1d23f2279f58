"""Settings of the sample project, read from the environment through django-environ.

Every value has a default that runs on a laptop with nothing else installed (SQLite next to
manage.py). Production deployments set them in the environment or a ``.env`` file.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

# The default key is for local development only; DEBUG off requires a real one.
SECRET_KEY = env("DJANGO_SECRET_KEY", default="sample-project-development-key-not-for-production")
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
DEBUG = env.bool("DJANGO_DEBUG", default=True)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    # Above daphne: its runserver then says which MCP bounds the development server lacks.
    "beammcp_django",
    "daphne",  # above staticfiles: `runserver` then serves ASGI through daphne
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "sample_project.demo",
    "django_tasks_db",  # the tasks' queue, in this database; its worker: manage.py db_worker
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "sample_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

ASGI_APPLICATION = "sample_project.asgi.application"
WSGI_APPLICATION = None

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The server and the tasks' worker (manage.py db_worker) write this one file: WAL, and
    # write transactions that take the lock as they begin, so that one process waits for the
    # other (up to the timeout) instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # Each of the server's threads keeps its connection between requests: opening one (and
    # its PRAGMAs) cost a task's poll half its time (docs/performance.md, "Tasks").
    DATABASES["default"]["CONN_MAX_AGE"] = 600
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env("DJANGO_STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The tasks extension's tasks (seasonal_report) run in django-tasks-db's worker, a process of
# its own: `manage.py db_worker` beside the server. A production project may name a queue's
# backend instead (docs/tasks.md).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

BEAMMCP = {
    "SERVER_NAME": "beammcp-sample-weather",
    "SERVER_TITLE": "Sample weather service",
    "INSTRUCTIONS": (
        "A demo weather service: forecast cities, record observations, read stations. "
        "Every figure is made up; nothing here calls the network."
    ),
    "PAGE_SIZE": env.int("BEAMMCP_PAGE_SIZE", default=50),
    # Browsers send Origin; these are the local origins of `runserver`. Production lists its
    # own. Non-browser clients send no Origin and are not affected.
    "ALLOWED_ORIGINS": env.list(
        "BEAMMCP_ALLOWED_ORIGINS",
        default=["http://localhost:8000", "http://127.0.0.1:8000"],
    ),
    # The sample serves everyone on purpose; a real project names its own hook.
    "AUTHORIZE": "beammcp_django.authorization.allow_all",
    "CACHE_HINTS": {
        "server/discover": {"ttl_ms": 60_000, "scope": "public"},
        # Private: delete_observation is listed only to users holding its permission (a
        # list that depends on the caller is private whatever this says).
        "tools/list": {"ttl_ms": 60_000, "scope": "private"},
    },
    # The admin's view preview frames a view through a sandbox proxy served from a second
    # origin (docs/apps.md): the same server under the other loopback name.
    "VIEW_SANDBOX_ORIGIN": env.str("BEAMMCP_VIEW_SANDBOX_ORIGIN", default="http://localhost:8000"),
    # Full collections stop walking Django's startup heap (docs/performance.md).
    "FREEZE_HEAP_AT_STARTUP": True,
    # A worker killed mid-task leaves a lease that runs out; its task is then run again
    # once, and failed if that attempt dies too (docs/tasks.md).
    "TASKS": {
        "LEASE_SECONDS": env.int("BEAMMCP_TASK_LEASE_SECONDS", default=30),
        "MAX_ATTEMPTS": env.int("BEAMMCP_TASK_MAX_ATTEMPTS", default=2),
        # How many tasks one caller may have working or waiting for input at once.
        "PER_PRINCIPAL": env.int("BEAMMCP_TASK_PER_PRINCIPAL", default=100),
        # How many tasks one worker job runs at once (a shift, when more than one).
        "WORKER_CONCURRENCY": env.int("BEAMMCP_TASK_WORKER_CONCURRENCY", default=1),
    },
}

# BEAMMCP_SAMPLE_AUTH=oauth: the sample is its own OAuth authorization server
# (django-oauth-toolkit: login, consent, tokens under /o/) and its endpoint serves bearer
# tokens issued for it alone (docs/authorization.md). Unset, the endpoint serves everyone.
SAMPLE_AUTH = env("BEAMMCP_SAMPLE_AUTH", default="")
if SAMPLE_AUTH == "oauth":
    from urllib.parse import urlsplit

    # The endpoint's public URL, which tokens must be issued for; the issuer is this site's
    # /o (both settings: never the request's Host).
    SAMPLE_RESOURCE = env("BEAMMCP_SAMPLE_RESOURCE", default="http://127.0.0.1:8000/mcp")
    _origin = urlsplit(SAMPLE_RESOURCE)
    SAMPLE_ISSUER = f"{_origin.scheme}://{_origin.netloc}/o"
    INSTALLED_APPS.append("oauth2_provider")
    LOGIN_URL = "/accounts/login/"
    OAUTH2_PROVIDER = {
        "SCOPES": {"demo.read": "Use the weather tools", "demo.write": "Delete observations"},
        "DEFAULT_SCOPES": ["demo.read"],
        "PKCE_REQUIRED": True,
        # The issuer the RFC 8414 metadata names, and its endpoints' origin.
        "OIDC_ISS_ENDPOINT": SAMPLE_ISSUER,
        # OAuth 2.1 (RFC 9700): no implicit or password grant, no "plain" PKCE, and the
        # issuer named in every authorization response (RFC 9207), which a 2026-07-28
        # client checks against the metadata's.
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
        # Clients that register themselves: a client_id that is an https URL names its
        # metadata document, which the toolkit fetches (public addresses only, bounded).
        "CIMD_ENABLED": True,
    }
    BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"
    BEAMMCP["OAUTH"] = {
        "RESOURCE": SAMPLE_RESOURCE,
        "AUTHORIZATION_SERVERS": [SAMPLE_ISSUER],
        "SCOPES_SUPPORTED": ["demo.read"],
    }

# Everything the server logs goes to stderr, which stdio keeps free of protocol bytes.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
    "root": {"handlers": ["stderr"], "level": env("DJANGO_LOG_LEVEL", default="WARNING")},
}
