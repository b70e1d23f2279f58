"""The MCP server in the Django admin: the merged store read-only, the catalog browser and the
connectome page.

``ObservedEdgeAdmin`` lists the store (one row per process and edge, filterable by process
and kind, searchable by endpoint) and adds its pages through ``get_urls``, each wrapped in
``admin_site.admin_view``: staff-only, with the admin's login redirect and context. The
catalog needs staff status only; the connectome page and its downloads also need the view
permission on observed edges. Nobody adds, changes or deletes a row here: only the serving
processes write the store.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

from beammcp_django.admin_views import url_name
from beammcp_django.admin_views.catalog import catalog_entry_view, catalog_view
from beammcp_django.admin_views.connectome import connectome_view, export_view
from beammcp_django.connectome.drawing import DRAWING_CAP
from beammcp_django.models import ObservedEdge


@admin.register(ObservedEdge)
class ObservedEdgeAdmin(admin.ModelAdmin):
    list_display = ("source", "target", "kind", "node", "count", "first_seen", "last_seen")
    list_filter = ("node", "kind")
    search_fields = ("source", "target")
    change_list_template = "admin/beammcp_django/observededge/change_list.html"
    # The connectome page draws no graph with more edges than this (docs/admin.md).
    drawing_cap = DRAWING_CAP

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        page = self.admin_site.admin_view
        # Before the default patterns: their "<path:object_id>/" would take these paths.
        return [
            path("catalog/", page(self.catalog), name=url_name(self, "catalog")),
            path(
                "catalog/<str:kind>/<str:quoted>/",
                page(self.catalog_entry),
                name=url_name(self, "catalog_entry"),
            ),
            path("connectome/", page(self.connectome), name=url_name(self, "connectome")),
            path(
                "connectome/<str:name>.json",
                page(self.connectome_export),
                name=url_name(self, "connectome_export"),
            ),
            *super().get_urls(),
        ]

    def catalog(self, request: HttpRequest) -> HttpResponse:
        return catalog_view(request, self)

    def catalog_entry(self, request: HttpRequest, kind: str, quoted: str) -> HttpResponse:
        return catalog_entry_view(request, self, kind, quoted)

    def connectome(self, request: HttpRequest) -> HttpResponse:
        return connectome_view(request, self)

    def connectome_export(self, request: HttpRequest, name: str) -> HttpResponse:
        return export_view(request, self, name)
