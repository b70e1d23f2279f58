"""The admin's preview of an MCP Apps view: the view drawn the way a web host draws it, by the
extension's official host (``AppBridge``, ``static/beammcp_django/vendor/app-bridge.js``,
built by ``assets/app-bridge/build.sh``), its tool calls served as the logged-in user.

Three parts, each the page's rule for a web host (apps.mdx, "Sandbox proxy"):

- the page (``includes/view_preview.html``, ``view_preview.js``): reads the view and the
  tools through the preview endpoint, frames the sandbox proxy, and lets the developer send
  the view a tool input and a tool's result;
- the sandbox proxy (``sandbox_view``), served from ``BEAMMCP["VIEW_SANDBOX_ORIGIN"]``, an
  origin other than the admin's: it loads the view's HTML into an inner frame of its own
  (scripts only, an opaque origin) under the policy ``frame_policy`` builds from the view's
  ``csp``, sent as its own response header, which the inner document inherits, and relays
  every other message between the two;
- the preview endpoint (``endpoint_view``): the MCP endpoint itself, behind the admin's
  login and its CSRF check, whose ``AUTHORIZE`` names the logged-in user: the view's calls
  meet the gates, scopes and connectome of any call, as that user (a session carries no
  OAuth scope, so an entry that demands scopes is refused here, and the page says so).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import replace
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.contrib.admin import AdminSite, ModelAdmin
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseForbidden
from django.middleware.csrf import get_token
from django.template.response import TemplateResponse
from django.views.decorators.clickjacking import xframe_options_exempt

from beammcp_django.admin.pages import page_url
from beammcp_django.authorization import HttpRequestInfo, Refusal
from beammcp_django.conf import get_settings
from beammcp_django.models import McpCatalog
from beammcp_django.observability import ObservedEndpoint
from beammcp_django.protocol.apps import (
    DEPRECATED_TOOL_KEY,
    csp_problems,
    frame_policy,
    is_view,
    view_meta,
)
from beammcp_django.protocol.catalog import ResourceSpec, ToolSpec
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.views import relay

# The longest ``csp`` the sandbox's URL may carry: four lists of origins.
CSP_QUERY_LIMIT = 8192
_PRINCIPAL: ContextVar[Any] = ContextVar("beammcp_view_preview_principal")


def linked_tools(catalog: Any, uri: str) -> list[ToolSpec]:
    """The catalog's tools that name the view ``uri`` (``_meta.ui.resourceUri``, or the
    deprecated flat key alone)."""
    linked = []
    for tool in catalog.tools:
        named = view_meta(tool.meta).get("resourceUri") or (tool.meta or {}).get(
            DEPRECATED_TOOL_KEY
        )
        if named == uri:
            linked.append(tool)
    return linked


def _origin_of(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def why_no_preview(request: HttpRequest) -> str:
    """Why this request's page cannot preview a view, or "" when it can."""
    sandbox = get_settings()["VIEW_SANDBOX_ORIGIN"]
    if getattr(request, "scope", None) is None:
        return (
            "The preview calls the MCP endpoint in this server's process, through ASGI: serve "
            "the admin with manage.py mcp_serve (or your ASGI server), not a WSGI one."
        )
    if get_http_policy().sessions is None:
        return (
            "The preview's client (the official SDK's, as AppBridge 2.0.4 uses it) opens a "
            "2025-11-25 session, which this endpoint does not serve here: "
            "BEAMMCP['HTTP_LEGACY_SESSIONS'] is off, or several mcp_serve workers run without "
            "BEAMMCP['SESSION_CACHE'] to share sessions."
        )
    if sandbox is None:
        return (
            "Set BEAMMCP['VIEW_SANDBOX_ORIGIN'] to an origin other than this admin's where "
            "this project is also served (http://localhost:8000 beside an admin at "
            "http://127.0.0.1:8000, in development): a web host frames a view through a "
            "sandbox proxy on a second origin."
        )
    if sandbox.rstrip("/").lower() == _origin_of(request).lower():
        return (
            f"BEAMMCP['VIEW_SANDBOX_ORIGIN'] is {sandbox}, this admin's own origin: the "
            "sandbox proxy must be served from another one."
        )
    return ""


def preview_context(
    request: HttpRequest, model_admin: ModelAdmin, catalog: Any, spec: Any, who_may_use: Any
) -> dict[str, Any]:
    """The preview section of a view's catalog page; nothing for any other entry."""
    if not isinstance(spec, ResourceSpec) or not is_view(spec.uri, spec.mime_type):
        return {}
    site = model_admin.admin_site
    tools = linked_tools(catalog, spec.uri)
    reason = why_no_preview(request)
    config: dict[str, Any] = {}
    if not reason:
        sandbox = get_settings()["VIEW_SANDBOX_ORIGIN"].rstrip("/")
        config = {
            "uri": spec.uri,
            "endpoint": page_url(site, McpCatalog, "view_endpoint"),
            "sandbox": sandbox + page_url(site, McpCatalog, "view_sandbox"),
            "csrfToken": get_token(request),
            "demands": who_may_use(spec),
            "tools": [
                {
                    "name": tool.name,
                    "visibility": list(view_meta(tool.meta).get("visibility") or ["model", "app"]),
                    "demands": who_may_use(tool),
                }
                for tool in tools
            ],
        }
    return {"preview": {"reason": reason, "config": config, "tools": tools}}


def _origin_problem(host: str) -> str:
    parts = urlsplit(host)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or host != f"{parts.scheme}://{parts.netloc}"
    ):
        return "the host parameter is not an origin, scheme://host[:port]"
    return ""


@xframe_options_exempt
def sandbox_view(request: HttpRequest) -> HttpResponse:
    """The sandbox proxy: framed by the page at ``host``, answering only it, the view's
    policy (from ``csp``) its own response header. It holds nothing and serves anyone: a
    page that frames it gets its own HTML drawn in an opaque origin, nothing else."""
    host = request.GET.get("host", "")
    csp_text = request.GET.get("csp", "{}")
    problem = _origin_problem(host)
    csp: Any = None
    if not problem and len(csp_text) > CSP_QUERY_LIMIT:
        problem = f"the csp parameter is longer than {CSP_QUERY_LIMIT} characters"
    if not problem:
        try:
            csp = json.loads(csp_text)
        except ValueError:
            problem = "the csp parameter is not JSON"
    if not problem:
        problem = next(csp_problems(csp, "the csp parameter"), "")
    if problem:
        return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")
    response = TemplateResponse(request, "beammcp_django/view_sandbox.html")
    # The inner frame's document (srcdoc) inherits this policy; frame-ancestors is the page.
    response["Content-Security-Policy"] = f"{frame_policy(csp)}; frame-ancestors {host}"
    response["Referrer-Policy"] = "no-referrer"
    return response


async def _the_admin_user(info: HttpRequestInfo) -> Any:
    """The preview endpoint's ``AUTHORIZE``: the user ``endpoint_view`` admitted."""
    return _PRINCIPAL.get(None) or Refusal(403, "the view preview names no admin user")


def _preview_policy(policy: HttpPolicy) -> HttpPolicy:
    """The endpoint's policy with the admin's user as the caller: any origin (Django's CSRF
    check has held the request to this site's own), no body hook (it signs for clients)."""
    return replace(policy, authorize=_the_admin_user, authorize_body=None, allowed_origins=None)


@lru_cache(maxsize=1)
def _preview_endpoint() -> ObservedEndpoint:
    from beammcp_django.asgi import build_endpoint

    cached: dict[int, HttpPolicy] = {}

    def policy() -> HttpPolicy:
        settings_policy = get_http_policy()
        if id(settings_policy) not in cached:
            cached.clear()
            cached[id(settings_policy)] = _preview_policy(settings_policy)
        return cached[id(settings_policy)]

    # Django's handler sends the request signals for the admin's requests.
    return build_endpoint(request_signals=False, policy=policy)


async def endpoint_view(request: HttpRequest, site: AdminSite) -> HttpResponse:
    """The MCP endpoint for the preview, as the logged-in user: the admin's own rule for who
    may open it (``has_permission``), every unsafe method under Django's CSRF check (the
    URL wraps this in ``csrf_protect``)."""
    if not await sync_to_async(site.has_permission)(request):
        return HttpResponseForbidden(
            "the view preview's endpoint answers the admin's logged-in staff only",
            content_type="text/plain; charset=utf-8",
        )
    user = await request.auser()
    token = _PRINCIPAL.set(user)
    try:
        return await relay(request, _preview_endpoint())
    finally:
        _PRINCIPAL.reset(token)
