"""``manage.py mcp_serve``: serve the project over HTTP through the hardened path.

uvicorn runs the project's ASGI application (``ASGI_APPLICATION``, or the package's router
when it is unset) with the parser and limits of ``beammcp_django.serving``. Every bound the
threat model documents holds here; ``runserver`` is for development and says what it lacks.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from beammcp_django.conf import get_settings
from beammcp_django.management.startup_checks import StartupChecks
from beammcp_django.servers.http_settings import SERVE_WORKERS
from beammcp_django.serving.plan import (
    ServeOptions,
    configured_application,
    descriptors_for,
    serves_static_files,
    shared_state_problems,
    uvicorn_config,
)

# Each option is a field of ServeOptions, with its default there; --no-access-log aside.
HELP = {
    "host": "interface to bind",
    "port": "port to bind",
    "workers": "worker processes; more than 1 needs a shared cache and channel layer",
    "backlog": "listen queue length",
    "limit_concurrency": "connections or requests per worker beyond which requests get 503",
    "timeout_keep_alive": "seconds an idle keep-alive connection stays open",
    "timeout_graceful_shutdown": "seconds open requests and streams may finish after SIGTERM",
    "forwarded_allow_ips": "proxies whose X-Forwarded-For and X-Forwarded-Proto are believed",
}


class Command(StartupChecks, BaseCommand):
    help = (
        "Serve the project over HTTP with uvicorn and the package's bounds on request heads, "
        "bodies, connections and workers: the production server."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        for option in dataclasses.fields(ServeOptions):
            if option.name in HELP:
                parser.add_argument(
                    f"--{option.name.replace('_', '-')}",
                    type=type(option.default),
                    default=option.default,
                    help=f"{HELP[option.name]} (default {option.default})",
                )
        parser.add_argument(
            "--no-access-log", action="store_true", help="turn off uvicorn's access log"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn

        serve = ServeOptions(
            **{name: options[name] for name in HELP}, access_log=not options["no_access_log"]
        )
        counts = {
            "--workers": serve.workers,
            "--backlog": serve.backlog,
            "--limit-concurrency": serve.limit_concurrency,
        }
        for flag, count in counts.items():
            if count < 1:
                raise CommandError(f"{flag} must be at least 1")
        if serve.workers > 1:
            problems = shared_state_problems()
            if problems:
                raise CommandError(
                    f"--workers {serve.workers} needs state shared between processes: "
                    + "; ".join(problems)
                    + ". Or serve with --workers 1."
                )
        files = descriptors_for(serve.limit_concurrency)
        if files < serve.limit_concurrency:
            raise CommandError(
                f"the open-file limit is {files}, below --limit-concurrency "
                f"{serve.limit_concurrency}: raise the limit (ulimit -n) or the option"
            )
        config = uvicorn_config(serve)
        # As runserver does: unapplied migrations are named before the first request fails.
        # The connection that took is closed, not kept idle for the life of the process.
        self.check_migrations()
        connections.close_all()
        self.stdout.write(describe(serve, config))
        # Read by every worker (http_settings.legacy_sessions_served): sessions held in one
        # process (no SESSION_CACHE) are served by none of several workers.
        os.environ[SERVE_WORKERS] = str(serve.workers)
        uvicorn.run(**config)


def describe(serve: ServeOptions, config: dict[str, Any]) -> str:
    """The banner: what serves, where, and every bound in force."""
    import uvicorn

    values = get_settings()
    workers = f"{serve.workers} worker" + ("s" if serve.workers > 1 else "")
    return (
        f"beammcp-django: {configured_application()[0]} on http://{serve.host}:{serve.port} "
        f"(uvicorn {uvicorn.__version__}, httptools with bounded heads, {workers})\n"
        f"  heads: at most {values['HEADER_MAX_BYTES']} bytes and "
        f"{values['HEADER_MAX_COUNT']} fields, within {values['HEADER_TIMEOUT_SECONDS']:g} s\n"
        f"  MCP bodies: at most 1 MiB, within {values['BODY_READ_TIMEOUT_SECONDS']:g} s\n"
        f"  connections: backlog {serve.backlog}, 503 beyond {serve.limit_concurrency} per "
        f"worker, keep-alive {serve.timeout_keep_alive} s, "
        f"{serve.timeout_graceful_shutdown} s to finish at shutdown\n"
        f"  2025-11-25 sessions: {sessions_line(serve, values)}"
        + (
            f"\n  static files: {settings.STATIC_URL} served from the finders (DEBUG is on)"
            if serves_static_files()
            else ""
        )
    )


def sessions_line(serve: ServeOptions, values: Any) -> str:
    """Whether the workers serve 2025-11-25 sessions, and why not when they do not."""
    if not values["HTTP_LEGACY_SESSIONS"]:
        return "off (HTTP_LEGACY_SESSIONS); 2026-07-28 only"
    if values["SESSION_CACHE"] is not None:
        return f"on, shared by every worker in the Redis of CACHES['{values['SESSION_CACHE']}']"
    if serve.workers > 1:
        return (
            f"off with {serve.workers} workers: a session is held by the worker that opened it, "
            "so initialize is refused (404); set SESSION_CACHE to share them; "
            "2026-07-28 is served by every worker"
        )
    return "on, held in this process"
