"""The MCP server in the Django admin: the merged store read-only, the catalog browser and the
connectome page, each an entry of the app on the admin index.

The two pages are the change lists of proxy models (``McpCatalog``, ``Connectome``): their
``ModelAdmin``s serve only the page and its sub-pages, each wrapped in
``admin_site.admin_view`` (staff-only, with the admin's login redirect and context), and say
through the permission methods the index reads who sees the entry. The catalog needs staff
status only; the connectome page and its downloads also need the view permission on observed
edges. This works on the default ``admin.site`` and on any ``AdminSite`` a project registers
them on; no site has to be swapped. Nobody adds, changes or deletes a row here: only the
serving processes write the store.

The tasks of the tasks extension are listed read-only too, with no argument value, result or
input request shown: their status, owner, tool, age and a one-line summary. A user with the
change permission on tasks may cancel them, through the same transition ``tasks/cancel``
makes.

The pages' first URLs, under the observed edges' admin (``observededge/catalog/``...), answer
with a permanent redirect to these, so a bookmark keeps working.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, F, Max, Min, OuterRef, QuerySet, Subquery, Sum, Value
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.urls import URLPattern, path
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from beammcp_django.admin import view_preview
from beammcp_django.admin.catalog_browser import catalog_entry_view, catalog_view
from beammcp_django.admin.connectome_page import connectome_view, export_view
from beammcp_django.admin.pages import catalog_url, connectome_url, page_url, url_name
from beammcp_django.conf import load_catalog
from beammcp_django.connectome.core.drawing import DRAWING_CAP
from beammcp_django.connectome.exports import as_typed
from beammcp_django.connectome.resources import may_read_connectome
from beammcp_django.connectome.store import process_label
from beammcp_django.handles.book import kinds_of
from beammcp_django.models import Connectome, McpCatalog, McpHandle, McpTask, ObservedEdge
from beammcp_django.tasks import store as task_store
from beammcp_django.templatetags.mcp_text import process_name


class ReadOnly(admin.ModelAdmin):
    """Nobody adds, changes or deletes here, superusers included."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def _folds_processes(request: HttpRequest) -> bool:
    """Whether this is the observed edges' list with no process named: one row an edge.

    The change pages and a list filtered by process or by edge read the rows as stored.
    """
    match = request.resolver_match
    named = any(key.startswith(("node", "edge_key")) for key in request.GET)
    return bool(match and match.url_name == url_name(ObservedEdge, "changelist") and not named)


def _node(identity: str) -> str:
    return format_html('<span class="mcp-id" title="{}">{}</span>', identity, as_typed(identity))


def _moment(when: datetime) -> str:
    """A date and time that stay on one line in a narrow column, to the second."""
    return date_format(localtime(when), "Y-m-d\u00a0H:i:s")


def _is_staff(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff)


class ProcessFilter(admin.SimpleListFilter):
    """The observed edges of one process, each process named as a reader reads it."""

    title = "process"
    parameter_name = "node"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        nodes = ObservedEdge.objects.order_by("node").values_list("node", flat=True).distinct()
        return [(node, process_label(node)) for node in nodes]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(node=self.value()) if self.value() else queryset


@admin.register(ObservedEdge)
class ObservedEdgeAdmin(ReadOnly):
    """The observed edges, one row an edge, with what every process counted of it summed.

    The store keeps one row an edge and a process (each process writes its own rows); the
    list folds them, and an edge counted by several processes links to its rows, one a
    process, named readably with the raw name on hover. Filtering by process shows that
    process's rows as they are. Node ids are shown without the server's name (whole on
    hover), the way the connectome page's forms take them.
    """

    list_display = ("edge_source", "edge_target", "kind", "counted_by", "calls", "first", "last")
    list_filter = (ProcessFilter, "kind")
    ordering = ("source", "target", "kind", "node")
    search_fields = ("source", "target")
    change_list_template = "admin/beammcp_django/observededge/change_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[ObservedEdge]:
        rows = super().get_queryset(request)
        if not _folds_processes(request):
            return rows.annotate(
                total=F("count"), processes=Value(1), first=F("first_seen"), last=F("last_seen")
            )
        same_edge = ObservedEdge.objects.filter(edge_key=OuterRef("edge_key")).order_by()
        # The edge_key grouping of one correlated subquery an aggregate: portable SQL.
        by_edge = same_edge.values("edge_key")
        return rows.filter(pk=Subquery(same_edge.order_by("pk").values("pk")[:1])).annotate(
            total=Subquery(by_edge.annotate(v=Sum("count")).values("v")),
            processes=Subquery(by_edge.annotate(v=Count("pk")).values("v")),
            first=Subquery(by_edge.annotate(v=Min("first_seen")).values("v")),
            last=Subquery(by_edge.annotate(v=Max("last_seen")).values("v")),
        )

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        links = {
            "catalog_url": catalog_url(self.admin_site, request),
            "connectome_url": connectome_url(self.admin_site, request),
        }
        return super().changelist_view(request, {**links, **(extra_context or {})})

    @admin.display(description="source", ordering="source")
    def edge_source(self, edge: ObservedEdge) -> str:
        return _node(edge.source)

    @admin.display(description="target", ordering="target")
    def edge_target(self, edge: ObservedEdge) -> str:
        return _node(edge.target)

    @admin.display(description="counted by", ordering="processes")
    def counted_by(self, edge: ObservedEdge) -> str:
        """The one process that counted the edge, or how many, linking to their rows."""
        processes = edge.processes  # type: ignore[attr-defined]
        if processes == 1:
            return process_name(edge.node)
        return format_html('<a href="?edge_key={}">{} processes</a>', edge.edge_key, processes)

    @admin.display(description="calls", ordering="total")
    def calls(self, edge: ObservedEdge) -> int:
        return int(edge.total)  # type: ignore[attr-defined]

    @admin.display(description="first seen", ordering="first")
    def first(self, edge: ObservedEdge) -> str:
        return _moment(edge.first)  # type: ignore[attr-defined]

    @admin.display(description="last seen", ordering="last")
    def last(self, edge: ObservedEdge) -> str:
        return _moment(edge.last)  # type: ignore[attr-defined]

    def get_urls(self) -> list[URLPattern]:
        # Before the default patterns: their "<path:object_id>/" would take these paths.
        moved = [
            ("catalog/", McpCatalog, "changelist", "catalog"),
            ("catalog/<str:kind>/<str:quoted>/", McpCatalog, "entry", "catalog_entry"),
            ("connectome/", Connectome, "changelist", "connectome"),
            ("connectome/<str:name>.json", Connectome, "export", "connectome_export"),
        ]
        return [
            path(route, self._moved(model, suffix), name=url_name(ObservedEdge, old))
            for route, model, suffix, old in moved
        ] + super().get_urls()

    def _moved(self, model: type[ObservedEdge], suffix: str) -> Any:
        def redirect(request: HttpRequest, **kwargs: str) -> HttpResponse:
            target = page_url(self.admin_site, model, suffix, *kwargs.values())
            query = request.META.get("QUERY_STRING", "")
            return HttpResponsePermanentRedirect(f"{target}?{query}" if query else target)

        return redirect


@admin.register(McpCatalog)
class McpCatalogAdmin(ReadOnly):
    """The catalog browser: what the endpoint tells any client, so staff status suffices."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_staff(request)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return _is_staff(request)

    def get_urls(self) -> list[URLPattern]:
        page = self.admin_site.admin_view
        return [
            path("", page(self.changelist_view), name=url_name(self.model, "changelist")),
            # The view preview's sandbox proxy (served to anyone, from the second origin) and
            # endpoint (the admin's staff, their CSRF token): admin/view_preview.py.
            path(
                "view-sandbox/",
                view_preview.sandbox_view,
                name=url_name(self.model, "view_sandbox"),
            ),
            path(
                "view-endpoint/",
                csrf_protect(never_cache(self.view_endpoint)),
                name=url_name(self.model, "view_endpoint"),
            ),
            path(
                "<str:kind>/<str:quoted>/",
                page(self.entry_view),
                name=url_name(self.model, "entry"),
            ),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return catalog_view(request, self)

    def entry_view(self, request: HttpRequest, kind: str, quoted: str) -> HttpResponse:
        return catalog_entry_view(request, self, kind, quoted)

    async def view_endpoint(self, request: HttpRequest) -> HttpResponse:
        return await view_preview.endpoint_view(request, self.admin_site)


@admin.register(Connectome)
class ConnectomeAdmin(ReadOnly):
    """The connectome page and its downloads: the view (or change) permission on observed
    edges, the rule the ``connectome://`` resources are gated by (``may_read_connectome``)."""

    # The connectome page draws no graph with more edges than this (docs/admin.md).
    drawing_cap = DRAWING_CAP

    def has_module_permission(self, request: HttpRequest) -> bool:
        return may_read_connectome(request.user)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return may_read_connectome(request.user)

    def get_urls(self) -> list[URLPattern]:
        page = self.admin_site.admin_view
        return [
            path("", page(self.changelist_view), name=url_name(self.model, "changelist")),
            path("<str:name>.json", page(self.export_view), name=url_name(self.model, "export")),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return connectome_view(request, self)

    def export_view(self, request: HttpRequest, name: str) -> HttpResponse:
        return export_view(request, self, name)


SUMMARY_CHARS = 120


@admin.register(McpTask)
class McpTaskAdmin(ReadOnly):
    """The tasks, newest first: who made each, which tool, where it stands. Nothing the
    client sent or the tool answered is shown; the cancel action needs the change
    permission on tasks and goes through ``task_store.request_cancel``."""

    list_display = ("short_id", "tool", "status", "owner", "created_at", "ttl", "summary")
    list_filter = ("status", "tool")
    fields = (
        "task_id",
        "tool",
        "status",
        "summary",
        "owner",
        "created_at",
        "updated_at",
        "expires_at",
        "attempts",
        "cancel_requested",
    )
    readonly_fields = fields
    actions = ("cancel_tasks",)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # The list's cancel action asks this with no object; no task is ever edited.
        return obj is None and admin.ModelAdmin.has_change_permission(self, request)

    @admin.display(description="task")
    def short_id(self, task: McpTask) -> str:
        return task.task_id[:12] + "…"

    @admin.display(description="TTL")
    def ttl(self, task: McpTask) -> str:
        # A no-break space: the number and its unit stay on one line in a narrow column.
        return "unlimited" if task.ttl_ms is None else f"{task.ttl_ms / 1000:g}\u00a0s"

    @admin.display(description="summary")
    def summary(self, task: McpTask) -> str:
        """One line of where the task stands: its message, its error's message, how many
        content blocks its result holds, or how many inputs it waits for."""
        if task.status_message:
            line = task.status_message
        elif task.error:
            line = f"error {task.error.get('code')}: {task.error.get('message', '')}"
        elif task.result is not None:
            blocks = len(task.result.get("content") or [])
            flagged = " (isError)" if task.result.get("isError") else ""
            line = f"result of {blocks} content block(s){flagged}"
        elif task.input_requests:
            line = f"waiting for {len(task.input_requests)} input(s)"
        else:
            line = "—"
        return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"

    @admin.action(description="Cancel the selected tasks", permissions=["change"])
    def cancel_tasks(self, request: HttpRequest, queryset: QuerySet[McpTask]) -> None:
        asked = [
            task
            for task in queryset.only("task_id", "owner", "status")
            if task_store.request_cancel(task.task_id, task.owner)
        ]
        self.message_user(
            request,
            f"Cancellation asked for {len(asked)} task(s): a running one stops when its "
            "tool next looks, a finished one is left as it ended.",
            messages.SUCCESS,
        )


@admin.register(McpHandle)
class McpHandleAdmin(ReadOnly):
    """The server-minted handles, by kind and principal, with their ages: never their data,
    unless the kind says the admin may show it (``data_in_admin``). A user with the delete
    permission on handles may end them: the next call naming one answers as for an unknown
    one."""

    list_display = ("short_id", "kind", "principal", "created_at", "last_used_at", "expires_at")
    list_filter = ("kind",)
    search_fields = ("owner",)
    ordering = ("-last_used_at",)
    actions = ("end_handles",)

    def get_fields(self, request: HttpRequest, obj: McpHandle | None = None) -> list[str]:
        fields = ["handle_id", "kind", "principal", "created_at", "last_used_at", "expires_at"]
        return [*fields, "ends_at", *(["shown_data"] if _data_shown(obj) else [])]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return self.get_fields(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Asked by the list's end action with no object; no handle is deleted one by one.
        return obj is None and admin.ModelAdmin.has_delete_permission(self, request)

    @admin.display(description="handle")
    def short_id(self, handle: McpHandle) -> str:
        return handle.handle_id[:12] + "…"

    @admin.display(description="principal", ordering="owner")
    def principal(self, handle: McpHandle) -> str:
        return handle.owner or "(no principal: a bearer name)"

    @admin.display(description="data")
    def shown_data(self, handle: McpHandle) -> str:
        return format_html("<pre>{}</pre>", json.dumps(handle.data, indent=2, ensure_ascii=False))

    @admin.action(description="End the selected handles", permissions=["delete"])
    def end_handles(self, request: HttpRequest, queryset: QuerySet[McpHandle]) -> None:
        ended = queryset.delete()[0]
        self.message_user(
            request,
            f"Ended {ended} handle(s): a call naming one is answered as for an unknown one.",
            messages.SUCCESS,
        )


def _data_shown(handle: McpHandle | None) -> bool:
    """Whether the admin may show this handle's data: its kind says so."""
    if handle is None:
        return False
    spec = kinds_of(load_catalog()).get(handle.kind)
    return spec is not None and spec.data_in_admin
