"""``manage.py mcp_stdio``: serve the catalog over stdio, both revisions, until stdin closes.

Host code sees as ``context.principal`` the Django user ``--user NAME`` (or
``BEAMMCP["STDIO_USER"]``) names, looked up once at startup: an unknown or inactive user stops
the command before it reads a line. With neither, there is no principal: stdio never runs
as an implicit user.

Standard output carries protocol messages and nothing else. Before Django prints anything,
the process's descriptor 1 is pointed at standard error and the protocol gets a private copy
of the original: Django's own output, a host's ``print()`` and any C extension that writes to
descriptor 1 all land on stderr, where the spec allows any text.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from beammcp_django.conf import get_settings
from beammcp_django.connectome.exports import finish_observing
from beammcp_django.management.startup_checks import StartupChecks
from beammcp_django.observability import StdioObserver
from beammcp_django.process import get_server, prepare_process
from beammcp_django.transports.stdio import StdioConnection


def reserve_stdout_for_protocol() -> int:
    """Point fd 1 (and sys.stdout) at stderr; return a private fd for protocol output."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


class Command(StartupChecks, BaseCommand):
    help = (
        "Serve MCP over stdio (newline-delimited JSON-RPC; 2026-07-28 and 2025-11-25). "
        "Exits with status 0 when stdin closes, 128 + the signal number on SIGINT or SIGTERM."
    )

    # Set when run as a process (manage.py), not through call_command in another program.
    _own_process = False

    def run_from_argv(self, argv: list[str]) -> None:
        self._own_process = True
        super().run_from_argv(argv)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--user",
            metavar="NAME",
            help="the username of the Django user host code sees as context.principal "
            "(default: BEAMMCP['STDIO_USER']; with neither, no principal)",
        )

    def execute(self, *args: Any, **options: Any) -> Any:
        self._protocol_fd = reserve_stdout_for_protocol()
        options["stdout"] = sys.stderr
        return super().execute(*args, **options)

    def check(self, *args: Any, **kwargs: Any) -> None:
        """The system checks, but W002, which is about serving HTTP and means nothing here."""
        from django.conf import settings
        from django.test.utils import override_settings

        silenced = [*settings.SILENCED_SYSTEM_CHECKS, "beammcp.W002"]
        with override_settings(SILENCED_SYSTEM_CHECKS=silenced):
            super().check(*args, **kwargs)

    def handle(self, *args: Any, **options: Any) -> None:
        from django.utils.module_loading import import_string

        values = get_settings()
        principal = stdio_principal(options.get("user") or values["STDIO_USER"])
        prepare_process(stdio=True)
        connection = StdioConnection(
            get_server(stdio=True),
            read_fd=sys.stdin.fileno(),
            write_fd=self._protocol_fd,
            max_concurrent=values["STDIO_MAX_CONCURRENT_REQUESTS"],
            shutdown_grace=values["STDIO_SHUTDOWN_GRACE_SECONDS"],
            observe=StdioObserver(lambda: get_server(stdio=True)),
            principal=principal,
            rate_limit=import_string(values["RATE_LIMIT"]) if values["RATE_LIMIT"] else None,
        )
        loop = asyncio.new_event_loop()
        serving = loop.create_task(connection.serve())
        interrupted: list[int] = []
        if threading.current_thread() is threading.main_thread():
            # An interrupt ends the process through the loop, never as a KeyboardInterrupt
            # raised wherever the main thread happens to be: host code that raises one itself
            # is a host fault, answered -32603.
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, _interrupt, serving, interrupted, signum)
        try:
            loop.run_until_complete(serving)
        except asyncio.CancelledError:
            pass  # interrupted: running calls were cancelled
        except RuntimeError:
            pass  # interrupted twice: the loop was stopped, whatever was still running
        finally:
            loop.close()  # does not wait for worker threads
        # os._exit below skips atexit: the connectome's counts are written here instead.
        finish_observing()
        status = 128 + interrupted[0] if interrupted else 0
        if self._own_process:
            # Not a normal interpreter exit: it joins worker threads, so a sync handler that
            # ignores cancellation would keep the process alive after stdin closed. Protocol
            # output is unbuffered (os.write); only stderr needs flushing.
            sys.stderr.flush()
            os._exit(status)
        if interrupted:
            raise CommandError("interrupted", returncode=status)


def stdio_principal(username: str | None) -> Any:
    """The active Django user named ``username`` (by the user model's natural key), or None
    for no name. Refused by name, before serving: a stdio server must not start as someone
    else than it was told to."""
    if username is None:
        return None
    model = get_user_model()
    try:
        user = model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist:
        raise CommandError(f"mcp_stdio: no user named {username!r} (--user, STDIO_USER)") from None
    if not user.is_active:
        raise CommandError(f"mcp_stdio: the user {username!r} is not active (--user, STDIO_USER)")
    return user


def _interrupt(serving: asyncio.Task[None], interrupted: list[int], signum: int) -> None:
    """The first interrupt cancels the serving (running calls are cancelled and drained);
    a second stops the loop, for a call whose code would not let its cancellation finish."""
    if not interrupted:
        interrupted.append(signum)
        serving.cancel()
    else:
        serving.get_loop().stop()
