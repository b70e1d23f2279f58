"""The connectome as read-only MCP resources, for a host to add to its catalog in one line:

    mcp.site.register(*mcp.CONNECTOME_RESOURCES)

Each answers the canonical bytes of its graph (``application/json``), byte-identical to
``manage.py mcp_connectome export`` and the admin's download. Reading ``connectome://observed``
or ``connectome://diff`` flushes this process's counts to the store first.
"""

from __future__ import annotations

from typing import ClassVar

from beammcp_django.connectome.exports import export
from beammcp_django.protocol.context import RequestContext
from beammcp_django.registry import Resource


class _ConnectomeResource(Resource):
    graph: ClassVar[str]
    mime_type = "application/json"

    def read(self, context: RequestContext) -> str:
        return export(self.graph).data.decode("utf-8")


class DeclaredConnectome(_ConnectomeResource):
    """The declared call graph of this server's catalog: canonical JSON, schema_version 3."""

    uri = "connectome://declared"
    name = "connectome-declared"
    title = "Declared connectome"
    graph = "declared"


class ObservedConnectome(_ConnectomeResource):
    """The calls observed across every process: canonical JSON, schema_version 3."""

    uri = "connectome://observed"
    name = "connectome-observed"
    title = "Observed connectome"
    graph = "observed"


class ConnectomeDiff(_ConnectomeResource):
    """Declared against observed: every edge in one class, with the coverage counts."""

    uri = "connectome://diff"
    name = "connectome-diff"
    title = "Connectome diff"
    graph = "diff"


CONNECTOME_RESOURCES = (DeclaredConnectome, ObservedConnectome, ConnectomeDiff)
