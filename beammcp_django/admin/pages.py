"""What the admin's MCP pages share: the catalog browser (``catalog_browser``) and the
connectome (``connectome_page``).

Each page is the change list of a proxy model (``McpCatalog``, ``Connectome``) whose
``ModelAdmin`` (``beammcp_django.admin``) serves it through ``admin_site.admin_view``, so the
admin index lists both as entries of the app, for the users allowed to open them, and the
pages carry the admin's own context. The helpers here give every page the same context, name
its URLs the admin's way (``admin:<app>_<model>_<suffix>``) and find the other page's admin on
the same site, which a project may have unregistered.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite, ModelAdmin
from django.db.models import Model
from django.http import HttpRequest
from django.urls import reverse

from beammcp_django.models import Connectome, McpCatalog


def url_name(model: type[Model], suffix: str) -> str:
    """The URL name of one of a model's pages, without the site's namespace."""
    opts = model._meta
    return f"{opts.app_label}_{opts.model_name}_{suffix}"


def page_url(site: AdminSite, model: type[Model], suffix: str, *args: str) -> str:
    return reverse(f"{site.name}:{url_name(model, suffix)}", args=args, current_app=site.name)


def sibling(site: AdminSite, model: type[Model], request: HttpRequest) -> ModelAdmin | None:
    """The admin of ``model`` on ``site`` when it is registered and lets the user in."""
    if not site.is_registered(model):
        return None
    model_admin = site.get_model_admin(model)
    return model_admin if model_admin.has_view_permission(request) else None


def catalog_url(site: AdminSite, request: HttpRequest) -> str | None:
    """The catalog page, or None where the user may not open it (or it is unregistered)."""
    return page_url(site, McpCatalog, "changelist") if sibling(site, McpCatalog, request) else None


def connectome_url(site: AdminSite, request: HttpRequest) -> str | None:
    """The connectome page, or None where the user may not open it (or it is unregistered):
    no page links to a page that would answer 403."""
    return page_url(site, Connectome, "changelist") if sibling(site, Connectome, request) else None


def page_context(
    request: HttpRequest, model_admin: ModelAdmin, title: str, **extra: Any
) -> dict[str, Any]:
    """The admin's context for every page (sidebar, user links) plus the page's own."""
    site = model_admin.admin_site
    return {
        **site.each_context(request),
        "title": title,
        "opts": model_admin.model._meta,
        "catalog_url": catalog_url(site, request),
        "connectome_url": connectome_url(site, request),
        **extra,
    }
