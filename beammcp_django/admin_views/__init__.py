"""The admin's MCP pages: the catalog browser (``catalog``) and the connectome (``connectome``).

They are served by ``ObservedEdgeAdmin.get_urls`` (``beammcp_django.admin``) through
``admin_site.admin_view``, so they are staff-only and carry the admin's own context. The
helpers here give every page the same context and name its URLs the admin's way
(``admin:<app>_<model>_<suffix>``, reachable from templates with ``admin_urlname``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import ModelAdmin
from django.http import HttpRequest
from django.urls import reverse


def url_name(model_admin: ModelAdmin, suffix: str) -> str:
    """The URL name of one of the pages, without the site's namespace."""
    opts = model_admin.model._meta
    return f"{opts.app_label}_{opts.model_name}_{suffix}"


def page_url(model_admin: ModelAdmin, suffix: str, *args: str) -> str:
    site = model_admin.admin_site.name
    return reverse(f"{site}:{url_name(model_admin, suffix)}", args=args, current_app=site)


def page_context(
    request: HttpRequest, model_admin: ModelAdmin, title: str, **extra: Any
) -> dict[str, Any]:
    """The admin's context for every page (sidebar, user links) plus the page's own."""
    return {
        **model_admin.admin_site.each_context(request),
        "title": title,
        "opts": model_admin.model._meta,
        "can_view_connectome": model_admin.has_view_permission(request),
        **extra,
    }
