"""The connectome as read-only MCP resources, for a host to add to its catalog in one line:

    mcp.site.register(*mcp.CONNECTOME_RESOURCES)

Each answers the canonical bytes of its graph (``application/json``). Reading
``connectome://observed`` or ``connectome://diff`` flushes this process's counts to the store
first.

Who may read them is the admin's rule for the connectome page (``may_read_connectome``: an
active staff user with the view or change permission on observed edges); anyone else is
answered as if they did not exist. A host that wants another rule overrides ``visible`` in a
subclass and registers that. A caller who passes sees the part of each graph their gates leave
them: every entry hidden from them, and what it alone owns, is left out (``hiding``), so the
graphs name nothing the catalog hides; the diff is computed over those parts. For a caller
who is hidden nothing, the bytes are ``manage.py mcp_connectome export``'s and the admin's
download, the whole graph.
"""

from __future__ import annotations

from typing import Any, ClassVar

from beammcp_django.conf import load_catalog
from beammcp_django.connectome.exports import Hidden, export
from beammcp_django.models import ObservedEdge
from beammcp_django.protocol.access import admitted
from beammcp_django.protocol.catalog import ENTRY_KINDS
from beammcp_django.protocol.context import RequestContext
from beammcp_django.registry import Resource
from beammcp_django.runtime.database_outages import in_database


def may_read_connectome(user: Any) -> bool:
    """The admin's rule for the whole connectome: an active staff user holding the view or
    the change permission on observed edges (what the admin grants viewing them on). A
    principal that is no Django user (none, a token's claims) may not."""
    has_perm = getattr(user, "has_perm", None)
    if not callable(has_perm):
        return False
    if not (getattr(user, "is_active", False) and getattr(user, "is_staff", False)):
        return False
    opts = ObservedEdge._meta
    return any(
        has_perm(f"{opts.app_label}.{action}_{opts.model_name}") is True
        for action in ("view", "change")
    )


async def hidden_from(context: RequestContext) -> Hidden:
    """The catalog entries the caller's gates hide from them (each gate asked once)."""
    catalog = load_catalog()
    pairs = [(kind.tag, spec) for kind in ENTRY_KINDS for spec in getattr(catalog, kind.list)]
    verdicts = await admitted([spec.access for _, spec in pairs], context)
    return Hidden(
        frozenset(
            (tag, spec.key) for (tag, spec), shown in zip(pairs, verdicts, strict=True) if not shown
        )
    )


class _ConnectomeResource(Resource):
    graph: ClassVar[str]
    mime_type = "application/json"

    def visible(self, context: RequestContext) -> bool:
        return may_read_connectome(context.principal)

    async def read(self, context: RequestContext) -> str:
        hidden = await hidden_from(context)
        # The observed graph and the diff read the store: the database down is PartDown.
        exported = await context.run_sync(in_database, export, self.graph, "sha256", hidden)
        return exported.data.decode("utf-8")


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
