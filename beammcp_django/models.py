"""The package's tables: the merged store of observed edges, and the tasks extension's tasks.

Observed edges are every process's counts, side by side.

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


class McpTask(models.Model):
    """One task of the tasks extension: the durable record ``tasks/get`` reads and the worker
    moves (``tasks/store.py``). Every transition is a compare-and-set on ``status``, so two
    workers never both move one task; a task is found only with its owner's key, so another
    principal's task is answered exactly as an unknown one."""

    STATUSES = [
        ("working", "working"),
        ("input_required", "input required"),
        ("completed", "completed"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
    ]

    # Minted with secrets.token_urlsafe(32): unguessable, the only handle a client holds.
    task_id = models.CharField(max_length=64, primary_key=True)
    owner = models.CharField(max_length=255, help_text="the key of the principal that made it")
    tool = models.CharField(max_length=128)
    arguments = models.JSONField(help_text="what the worker calls the tool with")
    # What the request that made it carried, as the tool sees it in the worker: its token's
    # scopes (null: none known) and the client capabilities its _meta declared.
    scopes = models.JSONField(null=True)
    client_capabilities = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=STATUSES)
    status_message = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    ttl_ms = models.PositiveBigIntegerField(null=True, help_text="null: kept until purged")
    expires_at = models.DateTimeField(null=True)
    poll_interval_ms = models.PositiveIntegerField()
    result = models.JSONField(null=True)
    error = models.JSONField(null=True)
    # Input requests still unanswered (key -> request), the answers accepted for them and not
    # yet handed to the tool, and every key ever issued: a key is used once in a task's life.
    input_requests = models.JSONField(default=dict)
    input_responses = models.JSONField(default=dict)
    issued_keys = models.JSONField(default=list)
    # What the tool's last InputRequired kept (its ``state``), handed back on the next run.
    request_state = models.JSONField(null=True)
    cancel_requested = models.BooleanField(default=False)
    # The running attempt's lease: a worker that dies leaves a lease that runs out.
    lease_until = models.DateTimeField(null=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "MCP task"
        indexes = [
            models.Index(fields=["owner", "status"], name="beammcp_task_owner"),
            models.Index(fields=["expires_at"], name="beammcp_task_expiry"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool} task {self.task_id[:8]}… ({self.status})"


class McpTaskOwner(models.Model):
    """One row per principal that ever made a task: the lock its task-making calls take in
    turn, in the database, so the bound on its live tasks (``BEAMMCP["TASKS"]
    ["PER_PRINCIPAL"]``) holds across processes and machines (``task_store.create_within``),
    and when its tasks were last served (the workers' fair share, ``task_store.claim_next``)."""

    owner = models.CharField(max_length=255, primary_key=True)
    # When a call of this principal last took the lock (the write that takes it).
    locked_at = models.DateTimeField()
    # When a worker last took one of its tasks: the principal served longest ago (or never)
    # is served first (``task_store.claim_next``), so one backlog starves nobody.
    served_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = "MCP task owner"
        # Internal: no admin and no one's to change, so no permission either.
        default_permissions = ()


class McpHandle(models.Model):
    """One server-minted handle (``beammcp_django/handles``): state a tool keeps across calls
    without a session, named by an opaque id the model carries from the tool that minted it
    to the tools that take it. It is found only with its owner's key and while it lives, so
    another principal's handle, an ended one and an expired one are answered alike: as an
    unknown one."""

    # The kind's prefix, "_", and 32 characters of secrets.token_urlsafe(24): 192 bits.
    handle_id = models.CharField(max_length=64, primary_key=True)
    kind = models.CharField(max_length=64)
    owner = models.CharField(max_length=255, help_text="the key of the principal that minted it")
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField()
    # The earlier of: the last use plus the kind's idle lifetime, the creation plus its
    # absolute one; moved on at every use, never past the absolute end.
    expires_at = models.DateTimeField()
    ends_at = models.DateTimeField(
        help_text="the absolute end: its creation plus the kind's lifetime"
    )
    # The host's own data (JSON), never shown in the admin unless the kind allows it.
    data = models.JSONField(default=dict)

    class Meta:
        verbose_name = "MCP handle"
        indexes = [
            models.Index(fields=["owner", "kind"], name="beammcp_handle_owner_kind"),
            models.Index(fields=["expires_at"], name="beammcp_handle_expires"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.handle_id[:12]}…"


class McpHandleOwner(models.Model):
    """One row per principal and kind that ever minted a handle: the lock its mints take in
    turn, so the bound on its live handles of that kind holds across processes and machines
    (``handles.store.mint_within``), as ``McpTaskOwner`` does for tasks."""

    owner = models.CharField(max_length=255)
    kind = models.CharField(max_length=64)
    locked_at = models.DateTimeField()

    class Meta:
        verbose_name = "MCP handle owner"
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(fields=["owner", "kind"], name="beammcp_handle_owner_once")
        ]
