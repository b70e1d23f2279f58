"""The system checks of the HTTP endpoint, once it is routed: the settings it has no
default for (``ALLOWED_ORIGINS``, ``AUTHORIZE``), whether the pre-body protections are
active (the project's ASGI application built by the package's router), the OAuth resource's
metadata reachable and its path the endpoint's, scopes no token can carry, and a channel
layer too quick to time out for a quiet listen stream."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register

from beammcp_django.checks.ids import check_id
from beammcp_django.checks.settings import hook_problem, setting_problems
from beammcp_django.conf import get_settings, load_catalog
from beammcp_django.notify import idle_stream_problems
from beammcp_django.protocol.audit import audit


@register("beammcp")
def check_channel_layer(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A Redis layer whose reads time out before a quiet listen stream's next poll."""
    return [
        Warning(
            problem,
            hint="Give each host a longer read bound, e.g. CONFIG: {'hosts': [{'address': "
            "'redis://HOST:6379/0', 'socket_timeout': 30}]}.",
            id=check_id("redis_read_timeout"),
        )
        for problem in idle_stream_problems()
    ]


def _endpoint_is_routed() -> bool:
    from django.urls import NoReverseMatch, reverse

    try:
        reverse("beammcp:endpoint")
    except NoReverseMatch:
        return False
    return True


@register("beammcp")
def check_http_endpoint(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The HTTP settings with no default, and whether the pre-body protections are active."""
    if not _endpoint_is_routed():
        return []
    values = get_settings()
    messages = [*_origins_errors(values["ALLOWED_ORIGINS"]), *_hook_errors(values)]
    if values["AUTHORIZE"] == "beammcp_django.authorization.allow_all":
        messages.extend(_scopes_without_tokens())
    messages.extend(_resource_path_warnings())
    messages.extend(_unprotected_route_findings())
    return messages


def _origins_errors(origins: Any) -> list[CheckMessage]:
    """``ALLOWED_ORIGINS`` has no default: a list of origins, or "any" written out."""
    if origins == "any" or (
        isinstance(origins, (list, tuple)) and all(isinstance(o, str) for o in origins)
    ):
        return []
    return [
        Error(
            "BEAMMCP['ALLOWED_ORIGINS'] must be set: a list of origins allowed to call the "
            'MCP endpoint, or "any" written out',
            hint='For local development: ["http://localhost:8000", "http://127.0.0.1:8000"].',
            id=check_id("ALLOWED_ORIGINS"),
        )
    ]


def _hook_errors(values: dict[str, Any]) -> list[CheckMessage]:
    """``AUTHORIZE`` (no default: ``allow_all`` written out) and ``AUTHORIZE_BODY``."""
    messages: list[CheckMessage] = []
    problem = hook_problem(values["AUTHORIZE"], required=True)
    if problem:
        messages.append(
            Error(
                f"BEAMMCP['AUTHORIZE'] {problem}",
                hint="Name a function, sync or async, that receives a "
                "beammcp_django.authorization.HttpRequestInfo before the body is read and "
                "returns True to serve the request, or False or a "
                "beammcp_django.authorization.Refusal to refuse it, e.g. "
                "'myproject.mcp_auth.authorize'. To serve every caller, write "
                "'beammcp_django.authorization.allow_all'.",
                id=check_id("AUTHORIZE"),
            )
        )
    body_problem = hook_problem(values["AUTHORIZE_BODY"], required=False)
    if body_problem:
        messages.append(
            Error(f"BEAMMCP['AUTHORIZE_BODY'] {body_problem}", id=check_id("AUTHORIZE_BODY"))
        )
    return messages


def _unprotected_route_findings() -> list[CheckMessage]:
    """The OAuth metadata document served by nothing, and an endpoint reached only through
    plain Django (the body read before any check)."""
    messages: list[CheckMessage] = []
    routed = _asgi_application_routes_mcp()
    unreachable = _unreachable_metadata(routed)
    if unreachable:
        messages.append(
            Error(
                f"The OAuth resource's metadata document ({unreachable}) is served by "
                "neither the ASGI factory nor a URL: clients cannot discover the "
                "authorization server",
                hint="Serve the project with beammcp_django.asgi.get_asgi_application "
                "(it serves the document), or add to the root URLconf: path("
                f"'{unreachable.lstrip('/')}', beammcp_django.oauth.metadata.metadata_view).",
                id=check_id("OAUTH"),
            )
        )
    if not routed:
        messages.append(
            Warning(
                "The MCP endpoint is reached only through plain Django: the body is read "
                "before any check, so the size cap, the chunked refusal and the body deadline "
                "are inactive",
                hint="In the project's asgi.py: from beammcp_django.asgi import "
                "get_asgi_application; application = get_asgi_application(). Serve it with "
                "manage.py mcp_serve.",
                id=check_id("plain_django_route"),
            )
        )
    return messages


def _resource_path_warnings() -> list[CheckMessage]:
    """A resource whose path is not the endpoint's (behind a proxy that moves the path, the
    public path is the one to name, and this warning can be silenced by its id)."""
    from urllib.parse import urlsplit

    from django.urls import reverse

    from beammcp_django.oauth.bearer import configured_resource_server

    if setting_problems():
        return []
    server = configured_resource_server()
    if server is None:
        return []
    named, endpoint = urlsplit(server.resource).path, reverse("beammcp:endpoint")
    if named.rstrip("/") == endpoint.rstrip("/"):
        return []
    return [
        Warning(
            f"BEAMMCP['OAUTH']['RESOURCE'] names the path '{named}', and the MCP endpoint "
            f"is at '{endpoint}': a client connecting to the endpoint finds a resource "
            "that is not the URL it uses, and its tokens are issued for that URL",
            hint="Name the endpoint's public URL, e.g. 'https://mcp.example.com"
            f"{endpoint}'; behind a proxy that moves the path, silence this by its id.",
            id=check_id("resource_path"),
        )
    ]


def _unreachable_metadata(routed: bool) -> str | None:
    """The metadata document's path when ``OAUTH`` is set and nothing serves it."""
    from django.urls import Resolver404, resolve

    from beammcp_django.oauth.bearer import configured_resource_server
    from beammcp_django.oauth.metadata import metadata_view

    if setting_problems() or routed:
        return None
    server = configured_resource_server()
    if server is None:
        return None
    try:
        if resolve(server.metadata_path).func is metadata_view:
            return None
    except Resolver404:
        pass
    return server.metadata_path


def _scopes_without_tokens() -> list[CheckMessage]:
    """Entries that declare scopes, served by a hook that names no token's scopes: every use
    of them over HTTP would be challenged, by design (a hook that names no scopes grants
    none), which is surely not what the host meant. An entry that also needs Django
    permissions is left out: ``allow_all`` names no principal, which holds none, so it is
    hidden from every HTTP caller, never challenged (a project whose authorization is
    switched on by a setting keeps such entries declared while it is off)."""
    from beammcp_django.registry import needs_permissions

    try:
        catalog = load_catalog()
        entries = [*catalog.tools, *catalog.resources, *catalog.prompts]
    except Exception:  # check_catalog names what is wrong with the catalog itself
        return []
    if audit(catalog):
        return []  # check_catalog names those first
    scoped = sorted(
        str(entry.key)
        for entry in entries
        if getattr(getattr(entry, "access", None), "scopes", None)
        and not needs_permissions(entry.access)
    )
    if not scoped:
        return []
    return [
        Warning(
            f"entries declare OAuth scopes ({', '.join(scoped[:5])}"
            f"{', ...' if len(scoped) > 5 else ''}), but BEAMMCP['AUTHORIZE'] is allow_all, "
            "which names no token: over HTTP every use of them is challenged 403",
            hint="Serve bearer tokens with 'beammcp_django.oauth.bearer.authorize' "
            "or a hook of your own that answers a "
            "beammcp_django.authorization.Grant naming the token's scopes.",
            id=check_id("scopes_without_tokens"),
        )
    ]


def _asgi_application_routes_mcp() -> bool:
    """Best effort, without importing anything: does an ASGI module the project declares
    build its application with the package's router? The candidates are the module of
    ``ASGI_APPLICATION`` and the ``asgi`` module beside the settings (where ``startproject``
    puts it, and where uvicorn is usually pointed). A server may be given any other callable,
    so the view logs the certain signal when a request actually arrives through it."""
    return any(_wires_the_router(module) for module in _asgi_modules())


def _asgi_modules() -> list[str]:
    from django.conf import settings

    modules = []
    configured = getattr(settings, "ASGI_APPLICATION", None)
    if configured:
        modules.append(configured.rpartition(".")[0])
    package = (settings.SETTINGS_MODULE or "").rpartition(".")[0]
    modules.append(f"{package}.asgi" if package else "asgi")
    return modules


ROUTER_NAMES = {"get_asgi_application", "McpRouter"}


def _wires_the_router(module: str) -> bool:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    try:
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "beammcp_django.asgi"
            and any(alias.name in ROUTER_NAMES for alias in node.names)
        ):
            return True
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ROUTER_NAMES
            and ast.unparse(node.value) == "beammcp_django.asgi"
        ):
            return True
    return False
