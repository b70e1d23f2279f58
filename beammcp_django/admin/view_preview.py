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
import re
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import import_module
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.admin import AdminSite, ModelAdmin
from django.contrib.auth import get_user
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseForbidden,
)
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
    VISIBILITIES,
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
_CALLER: ContextVar[PreviewCaller] = ContextVar("beammcp_view_preview_caller")


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
    if _on_sandbox_origin(request):
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
                    "visibility": list(view_meta(tool.meta).get("visibility", VISIBILITIES)),
                    "demands": who_may_use(tool),
                }
                for tool in tools
            ],
        }
    return {"preview": {"reason": reason, "config": config}}


# An origin a page may be at: a scheme, a host name or a bracketed IPv6 literal, a port.
_PAGE_ORIGIN = re.compile(
    r"https?://([a-z0-9]([a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(:[0-9]{1,5})?", re.IGNORECASE
)


def _sandbox_host() -> str | None:
    """The host (and port) of ``VIEW_SANDBOX_ORIGIN``, lower-case; None: no preview."""
    sandbox = get_settings()["VIEW_SANDBOX_ORIGIN"]
    return urlsplit(sandbox).netloc.lower() if sandbox is not None else None


def _on_sandbox_origin(request: HttpRequest) -> bool:
    return request.get_host().lower() == _sandbox_host()


@xframe_options_exempt
def sandbox_view(request: HttpRequest) -> HttpResponse:
    """The sandbox proxy, served on ``VIEW_SANDBOX_ORIGIN`` alone (404 elsewhere, and when
    the preview is off): framed by the page at ``host``, answering only it, the view's policy
    (from ``csp``) its own response header. It holds nothing: a page that frames it gets its
    own HTML drawn in an opaque origin, nothing else."""
    if _sandbox_host() is None or not _on_sandbox_origin(request):
        raise Http404("the view sandbox is served on VIEW_SANDBOX_ORIGIN alone")
    host = request.GET.get("host", "")
    csp_text = request.GET.get("csp", "{}")
    problem = ""
    if not _PAGE_ORIGIN.fullmatch(host) or urlsplit(host).netloc.lower() == _sandbox_host():
        problem = "the host parameter is not the origin of another page, scheme://host[:port]"
    elif len(csp_text) > CSP_QUERY_LIMIT:
        problem = f"the csp parameter is longer than {CSP_QUERY_LIMIT} characters"
    csp: Any = None
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


@dataclass(frozen=True)
class PreviewCaller:
    """Who opened the preview: the user, the session they logged in with, the admin site
    whose rule let them in. Asked again before every delivery to an open stream."""

    user_pk: Any
    session_key: str
    site: AdminSite


def _still_admitted(caller: PreviewCaller) -> Any:
    """The user, while their session still names them (not logged out, password unchanged)
    and the admin's rule still lets them in; else a ``Refusal``."""
    store = import_module(settings.SESSION_ENGINE).SessionStore(caller.session_key)
    user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
    try:
        admitted = user.pk == caller.user_pk and caller.site.has_permission(
            SimpleNamespace(user=user)  # type: ignore[arg-type]
        )
    except Exception:  # a site's own rule that reads more of the request: refuse
        admitted = False
    return user if admitted else Refusal(403, "the view preview's user is no longer admitted")


async def _the_admin_user(info: HttpRequestInfo) -> Any:
    """The preview endpoint's ``AUTHORIZE``: the user ``endpoint_view`` admitted, asked
    again each time (a stream's re-authorization too)."""
    caller = _CALLER.get(None)
    if caller is None:
        return Refusal(403, "the view preview names no admin user")
    return await sync_to_async(_still_admitted)(caller)


def _preview_policy(policy: HttpPolicy) -> HttpPolicy:
    """The endpoint's policy with the admin's user as the caller: any origin (Django's CSRF
    check has held the request to this site's own), no body hook (it signs for clients)."""
    return replace(policy, authorize=_the_admin_user, authorize_body=None, allowed_origins=None)


@lru_cache(maxsize=1)
def _preview_endpoint() -> ObservedEndpoint:
    from beammcp_django.asgi import build_endpoint

    derived: list[tuple[HttpPolicy, HttpPolicy]] = []

    def policy() -> HttpPolicy:
        source = get_http_policy()
        if not derived or derived[0][0] is not source:
            derived[:] = [(source, _preview_policy(source))]
        return derived[0][1]

    # Django's handler sends the request signals for the admin's requests.
    return build_endpoint(request_signals=False, policy=policy)


async def endpoint_view(request: HttpRequest, site: AdminSite) -> HttpResponse:
    """The MCP endpoint for the preview, as the logged-in user: only where the preview is on
    (``VIEW_SANDBOX_ORIGIN``), never on the sandbox's origin, for whom the admin's own rule
    lets in (``has_permission``), every unsafe method under Django's CSRF check (the URL
    wraps this in ``csrf_protect``)."""
    if _sandbox_host() is None or _on_sandbox_origin(request):
        raise Http404("the view preview is off: VIEW_SANDBOX_ORIGIN is not set")
    user = await request.auser()
    session_key = request.session.session_key
    if session_key is None or not await sync_to_async(site.has_permission)(request):
        return HttpResponseForbidden(
            "the view preview's endpoint answers the admin's logged-in staff only",
            content_type="text/plain; charset=utf-8",
        )
    token = _CALLER.set(PreviewCaller(user.pk, session_key, site))
    try:
        return await relay(request, _preview_endpoint())
    finally:
        _CALLER.reset(token)
