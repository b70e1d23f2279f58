"""``manage.py runserver``, whichever one the project would otherwise run, saying at start
which of the MCP endpoint's bounds it does not hold.

Django runs the first ``runserver`` it finds in ``INSTALLED_APPS`` order, so this one runs
when ``beammcp_django`` is listed above ``daphne`` and ``django.contrib.staticfiles``; it then
extends the next one in line (daphne's, staticfiles', or Django's own) and changes nothing
but the text printed before the server starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.management import find_commands, load_command_class
from django.core.management.base import BaseCommand
from django.core.management.commands.runserver import Command as DjangoRunserver

from beammcp_django.conf import get_settings

OWN_APP = "beammcp_django"


def next_runserver() -> type[BaseCommand]:
    """The ``runserver`` Django would run if this app had none."""
    for config in apps.get_app_configs():
        if config.name == OWN_APP:
            continue
        if "runserver" in find_commands(str(Path(config.path) / "management")):
            return type(load_command_class(config.name, "runserver"))
    return DjangoRunserver


def missing_bounds(server: str) -> str:
    """What ``runserver`` lacks against ``manage.py mcp_serve``, for ``server``: "daphne" or
    "wsgi" (Django's own development server)."""
    values = get_settings()
    body = values["BODY_READ_TIMEOUT_SECONDS"]
    head = (
        f"{values['HEADER_MAX_BYTES']} bytes, {values['HEADER_MAX_COUNT']} fields, "
        f"{values['HEADER_TIMEOUT_SECONDS']:g} s"
    )
    if server == "daphne":
        lacks = (
            "  - daphne reads every request body in full (into memory, then temporary files) "
            "before the MCP endpoint sees it: the 1 MiB cap, the refusal of chunked bodies and "
            f"the {body:g} s body deadline act only after the whole body has arrived\n"
            "  - it keeps a connection open after a refusal and serves a request pipelined "
            "behind it\n"
            "  - its listen backlog is 50, and it bounds no request head in time "
            f"(mcp_serve: {head})\n"
            "  - its writes never wait for the reader, so a subscriptions/listen stream whose "
            f"reader stopped reading is never cut off at the backlog of "
            f"{values['SUBSCRIPTION_QUEUE_LIMIT']}: everything it was sent stays in memory\n"
        )
    else:
        lacks = (
            "  - Django's development server is WSGI: the MCP endpoint answers 501 there, "
            "needing an ASGI server\n"
        )
    return (
        "beammcp-django: runserver is for development. It does not hold these bounds of the "
        "MCP endpoint:\n" + lacks + "Serve with `manage.py mcp_serve` for every bound.\n"
    )


class BoundsNotice:
    """Prints ``missing_bounds`` once per serving process, before the server starts."""

    def inner_run(self, *args: Any, **options: Any) -> Any:
        base = next_runserver()
        daphne = base.__module__.startswith("daphne.") and options.get("use_asgi", True)
        self.stdout.write(missing_bounds("daphne" if daphne else "wsgi"))  # type: ignore[attr-defined]
        return super().inner_run(*args, **options)  # type: ignore[misc]


Command = type("Command", (BoundsNotice, next_runserver()), {"__module__": __name__})
