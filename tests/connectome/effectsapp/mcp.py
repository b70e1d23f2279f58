"""Tools whose effects the connectome's tests observe through a real server: a read through
a helper function, mail sent, raw SQL through a cursor, a delete under
``destructiveHint: false``, a write through the async ORM, and a connection, a file written
and a process started. Each takes a free-text argument the tests plant a secret in (never
written anywhere: only filtered on)."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from typing import Any

from django.core.mail import send_mail
from django.db import connection

from beammcp_django import mcp
from beammcp_django.connectome.resources import ObservedConnectome
from sample_project.demo.models import Observation

NOTE = {
    "type": "object",
    "properties": {"note": {"type": "string", "maxLength": 200}},
    "required": ["note"],
    "additionalProperties": False,
}


def readings_like(note: str) -> int:
    """A helper between the tool and its query: the observed chain shows it."""
    return Observation.objects.filter(city=note).count()


@mcp.site.register
class CountReadings(mcp.Tool):
    name = "count_readings"
    input_schema = NOTE
    annotations = mcp.ToolAnnotations(read_only=True, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return str(readings_like(arguments["note"]))


@mcp.site.register
class MailDigest(mcp.Tool):
    """Claims a closed world, yet sends mail."""

    name = "mail_digest"
    input_schema = NOTE
    annotations = mcp.ToolAnnotations(open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        sent = send_mail("digest", "no readings", "mcp@example.com", ["ops@example.com"])
        return f"{sent} sent"


@mcp.site.register
class RawCount(mcp.Tool):
    name = "raw_count"
    input_schema = NOTE

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM demo_observation WHERE city = %s", [arguments["note"]]
            )
            return str(cursor.fetchone()[0])


@mcp.site.register
class PurgeCity(mcp.Tool):
    """Claims not to be destructive, yet deletes."""

    name = "purge_city"
    input_schema = NOTE
    annotations = mcp.ToolAnnotations(destructive=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        deleted, _ = Observation.objects.filter(city=arguments["note"]).delete()
        return f"{deleted} deleted"


@mcp.site.register
class AsyncRecord(mcp.Tool):
    name = "async_record"
    input_schema = NOTE

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await Observation.objects.filter(city=arguments["note"]).aexists()
        row = await Observation.objects.acreate(city="oslo", temperature_c=1.5)
        return str(row.pk)


@mcp.site.register
class TouchTheWorld(mcp.Tool):
    """Connects to a local port the test listens on, writes and removes a file, starts a
    process."""

    name = "touch_the_world"
    input_schema = {
        "type": "object",
        "properties": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
        "required": ["port"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        with socket.create_connection(("localhost", arguments["port"]), timeout=5):
            pass
        path = os.path.join(tempfile.gettempdir(), f"effects-{os.getpid()}.txt")  # noqa: PTH118
        with open(path, "w") as written:  # noqa: PTH123 - the shape the declared side reads
            written.write("x")
        os.remove(path)  # noqa: PTH107
        subprocess.run(["true"], check=True)
        return "touched"


class OpenObservedConnectome(ObservedConnectome):
    """The observed graph read by anyone on this test server (a host's own rule, as
    docs/connectome.md shows): the tests read it as nobody, to see the package's own queries
    inside a host call credited to no tool."""

    def visible(self, context: mcp.RequestContext) -> bool:
        return True


mcp.site.unregister(ObservedConnectome)
mcp.site.register(OpenObservedConnectome)
