"""System checks: a malformed catalog or setting fails ``manage.py check`` and every command
that runs checks (``runserver``, ``mcp_serve``, ``mcp_stdio``), naming the entry and the
offending key. Every id comes from the one table, ``beammcp_django.check_ids``.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
from pathlib import Path
from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from beammcp_django.check_ids import check_id
from beammcp_django.conf import (
    DEFAULTS,
    get_settings,
    load_catalog,
    setting_problems,
    task_settings,
    unknown_keys,
)
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.annotations import findings
from beammcp_django.connectome.core.canonical import node_id
from beammcp_django.notify import idle_stream_problems
from beammcp_django.protocol.audit import audit
from beammcp_django.protocol.legacy_tools import output_schema_fits
from beammcp_django.protocol.task_wire import DISABLED
from beammcp_django.servers.session_cache import session_cache_problem
from beammcp_django.tasks.backend import NO_TASK_BACKEND, backend_problem


@register("beammcp")
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = [
        Error(problem.message, id=check_id(problem.key)) for problem in setting_problems()
    ]
    limit = _hook_problem(get_settings()["RATE_LIMIT"], required=False)
    if limit:
        messages.append(
            Error(
                f"BEAMMCP['RATE_LIMIT'] {limit}",
                hint="Name a function, sync or async, of (principal, method) that returns None "
                "to serve the request or the seconds the caller should wait.",
                id=check_id("RATE_LIMIT"),
            )
        )
    shared = session_cache_problem()
    if shared is not None:
        messages.append(Error(shared, id=check_id("SESSION_CACHE")))
    messages.extend(
        Warning(
            f"BEAMMCP has the unknown key '{key}'",
            hint=_known_keys_hint(key),
            id=check_id("unknown_setting"),
        )
        for key in unknown_keys()
    )
    return messages


def _known_keys_hint(key: str) -> str:
    """The closest key this version reads, if one is close, then all of them: a hint that
    needs no documentation at hand (the package ships without its docs/)."""
    close = difflib.get_close_matches(key, DEFAULTS, n=1)
    known = "The keys this version reads: " + ", ".join(sorted(DEFAULTS)) + "."
    return f"Did you mean '{close[0]}'? {known}" if close else known


@register("beammcp")
def check_catalog(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        catalog = load_catalog()
    except Exception as error:
        return [
            Error(
                f"BEAMMCP['CATALOG'] cannot be loaded: {type(error).__name__}: {error}",
                hint="Give the dotted path of a catalog object, e.g. 'myapp.mcp.catalog'.",
                id=check_id("catalog_unloadable"),
            )
        ]
    problems = audit(catalog)
    class_problems = getattr(catalog, "problems", None)
    if callable(class_problems):
        problems.extend(class_problems())
    messages: list[CheckMessage] = [
        Error(str(problem), hint=problem.hint, obj=problem.subject, id=check_id(problem.rule))
        for problem in problems
    ]
    if not problems:
        messages.extend(_legacy_output_warnings(catalog))
        messages.extend(_task_backend_errors(catalog))
    return messages


def _task_backend_errors(catalog: Any) -> list[CheckMessage]:
    """A tool may run as a task, and the configured backend cannot run one."""
    tasked = [tool.name for tool in catalog.tools if tool.task != DISABLED]
    if not tasked:
        return []
    problem = backend_problem(task_settings()["BACKEND"])
    if problem is None:
        return []
    return [
        Error(
            f"tool '{tasked[0]}' may run as a task, but BEAMMCP['TASKS']['BACKEND'] {problem}",
            hint="Configure settings.TASKS with a backend whose workers run apart from the "
            "server, e.g. django-tasks-db's DatabaseBackend and its db_worker command.",
            obj=f"tool '{tasked[0]}'",
            id=check_id(NO_TASK_BACKEND),
        )
    ]


# The annotation audit's tag of its own: it reads the scope's source, and a host may run it
# apart (``manage.py check --tag beammcp_annotations``); a plain ``manage.py check`` runs it.
ANNOTATIONS_TAG = "beammcp_annotations"


@register(ANNOTATIONS_TAG)
def check_annotations(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A tool's declared graph reaches an effect its annotations say it does not have. Read
    from the source, so known before the first call; the observed side is on the admin's
    connectome page and in the diff record."""
    try:
        catalog = load_catalog()
    except Exception:
        return []  # an unloadable catalog is check_catalog's to report
    if audit(catalog):
        return []  # the catalog's own errors come first (check_catalog)
    server = exports.server_name()
    names = {node_id(server, "tool", spec.key): spec.key for spec in catalog.tools}
    return [
        Warning(
            f"tool '{names[finding.tool]}' is {finding.sentence()}",
            hint="Correct the annotation, or the code, or silence this check by its id if the "
            "reach is intended (the package enforces nothing: annotations are hints).",
            obj=f"tool '{names[finding.tool]}'",
            id=check_id("annotation_contradicted"),
        )
        for finding in findings(exports.declared().graph, catalog.tools, server, "declared")
    ]


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


def _legacy_output_warnings(catalog: Any) -> list[CheckMessage]:
    """A tool's output schema is not an object schema, which 2025-11-25 cannot carry."""
    return [
        Warning(
            f"tool '{tool.name}': the output schema's root is not an object schema, which "
            "2025-11-25 (the stdio handshake era) cannot carry: those clients get the tool "
            "without outputSchema, and its results as JSON text without structuredContent",
            hint='Give the output schema "type": "object" at its root if 2025-11-25 '
            "clients should receive structured results.",
            obj=tool.name,
            id=check_id("legacy_output_schema"),
        )
        for tool in catalog.tools
        if not output_schema_fits(tool.output_schema)
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
    messages: list[CheckMessage] = []
    origins = values["ALLOWED_ORIGINS"]
    if origins != "any" and (
        not isinstance(origins, (list, tuple)) or not all(isinstance(o, str) for o in origins)
    ):
        messages.append(
            Error(
                "BEAMMCP['ALLOWED_ORIGINS'] must be set: a list of origins allowed to call the "
                'MCP endpoint, or "any" written out',
                hint='For local development: ["http://localhost:8000", "http://127.0.0.1:8000"].',
                id=check_id("ALLOWED_ORIGINS"),
            )
        )
    problem = _hook_problem(values["AUTHORIZE"], required=True)
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
    body_problem = _hook_problem(values["AUTHORIZE_BODY"], required=False)
    if body_problem:
        messages.append(
            Error(f"BEAMMCP['AUTHORIZE_BODY'] {body_problem}", id=check_id("AUTHORIZE_BODY"))
        )
    if values["AUTHORIZE"] == "beammcp_django.authorization.allow_all":
        messages.extend(_scopes_without_tokens())
    messages.extend(_resource_path_warnings())
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


def _hook_problem(hook: Any, *, required: bool) -> str | None:
    if hook is None and not required:
        return None
    if not isinstance(hook, str) or not hook:
        return "must be set to the dotted path of an authorization hook"
    try:
        if not callable(import_string(hook)):
            return f"names '{hook}', which is not callable"
    except ImportError:
        return f"names '{hook}', which cannot be imported"
    return None


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
