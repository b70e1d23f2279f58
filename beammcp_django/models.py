"""The merged store of observed edges: every process's counts, side by side.

Each serving process (an HTTP worker, a stdio server) flushes its cumulative counts here, one
row per (process, edge). A process writes only rows carrying its own ``node`` id, so two
processes' claims never overwrite each other; the admin sums them for the merged picture and
lists them for attribution. Rows hold edge identity and counts only, never an argument, a
result or a message byte.
"""

from __future__ import annotations

from django.db import models


class ObservedEdge(models.Model):
    node = models.CharField(
        max_length=200, help_text="the process that counted: host name, process id, start time"
    )
    # The edge, as node ids of the connectome (docs/connectome.md), and a digest of the three
    # for the unique constraint (ids are long; some databases cap indexed lengths).
    source = models.TextField()
    target = models.TextField()
    kind = models.CharField(max_length=20)
    edge_key = models.CharField(max_length=64, editable=False)
    count = models.PositiveBigIntegerField()
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    flushed_at = models.DateTimeField()

    class Meta:
        verbose_name = "observed edge"
        constraints = [
            models.UniqueConstraint(fields=["node", "edge_key"], name="beammcp_edge_once_per_node")
        ]
        indexes = [models.Index(fields=["edge_key"], name="beammcp_edge_key")]
        ordering = ["source", "target", "kind", "node"]

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.kind}) on {self.node}: {self.count}"


class McpCatalog(ObservedEdge):
    """The catalog browser's entry on the admin index.

    A proxy model, so the admin lists the page as an entry of this app with Django's own
    machinery (``ModelAdmin``, the index, the app page, breadcrumbs) and works on the
    default ``admin.site``: no table, no permission rows (``default_permissions = ()``; its
    admin decides who sees it), and nothing ever queries it.
    """

    class Meta:
        proxy = True
        default_permissions = ()
        verbose_name = verbose_name_plural = "MCP catalog"


class Connectome(ObservedEdge):
    """The connectome page's entry on the admin index: a proxy over the store it reads, with
    no permission of its own (its admin asks for the view permission on observed edges)."""

    class Meta:
        proxy = True
        default_permissions = ()
        verbose_name = verbose_name_plural = "connectome"
