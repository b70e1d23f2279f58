"""MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865) in the core: what a view resource and
a tool linked to one may declare, held to the extension's types before anything serves.

A *view* is a resource at a ``ui://`` URI whose MIME type is ``text/html;profile=mcp-app``:
a host renders it in a sandboxed iframe beside the conversation, with a Content Security
Policy built from the view's ``_meta.ui.csp`` (and nothing looser). A tool names its view in
``_meta.ui.resourceUri``, and says in ``_meta.ui.visibility`` who may call it: the model,
the view (``"app"``), or both. The host is the one that hides an app-only tool from its
model and refuses a view's call of a model-only tool; this server serves every tool to
every call it admits, as the page leaves it to hosts, and lists an app-only tool only to a
client that declared the extension (``declares_views``): a host that did not would hand it
to its model (the page's "Server Behavior").

Origins in a CSP are written ``scheme://host[:port]``, the host's first label may be ``*``
(``https://*.example.com``): never a bare ``*``, a path, a keyword (``'unsafe-eval'``) or a
scheme alone (``data:``), which would loosen the policy past what the page lets a server ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
SCHEME = "ui://"
VIEW_MIME_TYPE = "text/html;profile=mcp-app"
VISIBILITIES = ("model", "app")
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
_RESOURCE_KEYS = ("csp", "permissions", "domain", "prefersBorder")
_TOOL_KEYS = ("resourceUri", "visibility")
# The flat form of a tool's link, deprecated by the page; honoured only if it agrees.
DEPRECATED_TOOL_KEY = "ui/resourceUri"

# The rules, by name (``checks/ids.py`` gives each its id).
BAD_VIEW = "bad_view"
BAD_TOOL_VIEW = "bad_tool_view"

_ORIGIN = re.compile(
    r"(https?|wss?)://((\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*"
    r"|\[[0-9a-f:.]+\])(:(?P<port>[0-9]{1,5}))?",
    re.IGNORECASE,
)


def is_view(uri: str, mime_type: str | None) -> bool:
    """Whether a resource is a view of this extension: a ``ui://`` URI of the view type."""
    return uri.startswith(SCHEME) and mime_type == VIEW_MIME_TYPE


def view_meta(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The ``_meta.ui`` of a view or of a tool (empty when it declares none)."""
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    return ui if isinstance(ui, Mapping) else {}


def app_only(meta: Mapping[str, Any] | None) -> bool:
    """Whether a tool is for views alone: its ``visibility`` leaves out ``"model"``."""
    visibility = view_meta(meta).get("visibility")
    return isinstance(visibility, list) and "model" not in visibility


def drawn_by(meta: Mapping[str, Any] | None) -> str | None:
    """The view a tool the model may call is drawn by (None: none, or app-only): its result's
    content must still carry the answer, for the model and for hosts without the extension
    (the page's "Graceful Degradation": a tool MUST return meaningful content)."""
    if app_only(meta):
        return None
    uri = view_meta(meta).get("resourceUri")
    if uri is None and isinstance(meta, Mapping):
        uri = meta.get(DEPRECATED_TOOL_KEY)
    return uri if isinstance(uri, str) else None


def carries_answer(blocks: list[Any]) -> bool:
    """Whether a result's content says something: a block that is not empty text."""
    return any(
        not isinstance(block, Mapping)
        or block.get("type") != "text"
        or str(block.get("text", "")).strip()
        for block in blocks
    )


def declares_views(capabilities: Mapping[str, Any]) -> bool:
    """Whether a client declared MCP Apps with this extension's view type: its
    ``capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes``."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, Mapping) else None
    types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(types, list) and VIEW_MIME_TYPE in types


def view_problems(uri: str, mime_type: str | None, meta: Mapping[str, Any] | None) -> Iterator[str]:
    """What is wrong with a resource declared as a view (a ``ui://`` URI): its MIME type, and
    its ``_meta.ui`` against ``McpUiResourceMeta``."""
    if mime_type != VIEW_MIME_TYPE:
        yield f"is at a ui:// URI, so its MIME type must be '{VIEW_MIME_TYPE}', not {mime_type!r}"
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if ui is None:
        return
    if not isinstance(ui, Mapping):
        yield "_meta.ui is not an object"
        return
    yield from _unknown_keys(ui, _RESOURCE_KEYS, "_meta.ui")
    if ui.get("csp") is not None:
        yield from csp_problems(ui["csp"], "_meta.ui.csp")
    permissions = ui.get("permissions")
    if permissions is not None:
        if not isinstance(permissions, Mapping):
            yield "_meta.ui.permissions is not an object"
        else:
            yield from _unknown_keys(permissions, PERMISSIONS, "_meta.ui.permissions")
            for name, value in permissions.items():
                if value != {}:
                    yield f"_meta.ui.permissions.{name} is not {{}} (the page's only value)"
    if "domain" in ui and (not isinstance(ui["domain"], str) or not ui["domain"]):
        yield "_meta.ui.domain is not a non-empty string"
    if "prefersBorder" in ui and not isinstance(ui["prefersBorder"], bool):
        yield "_meta.ui.prefersBorder is not a boolean"


def csp_problems(csp: Any, where: str) -> Iterator[str]:
    """What is wrong with a view's ``csp`` (``McpUiResourceCsp``): its keys, and each list
    of origins."""
    if not isinstance(csp, Mapping):
        yield f"{where} is not an object"
        return
    yield from _unknown_keys(csp, CSP_KEYS, where)
    for key in CSP_KEYS:
        yield from _origin_problems(csp.get(key), f"{where}.{key}")


def frame_policy(csp: Mapping[str, Any] | None) -> str:
    """The Content Security Policy a host frames a view under, from its ``csp`` (already
    held to ``csp_problems``): the page's directives, each naming only the declared origins,
    ``'none'`` where none is declared, plugins and form submissions refused, ``<base>`` the
    page's default. Inline
    scripts and styles run (a view is one document); nothing of the framing origin is
    allowed, which a view cannot count on anyway: each host frames it from its own."""

    inline, own = "'unsafe-inline'", "'self'"

    def origins(key: str) -> str:
        declared = (csp or {}).get(key) or ()
        return " ".join(declared)

    def allowed(*sources: str) -> str:
        named = " ".join(source for source in sources if source)
        return named or "'none'"

    resources = origins("resourceDomains")
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {allowed(inline, resources)}",
            f"style-src {allowed(inline, resources)}",
            f"img-src {allowed('data:', resources)}",
            f"font-src {allowed(resources)}",
            f"media-src {allowed('data:', resources)}",
            f"connect-src {allowed(origins('connectDomains'))}",
            f"frame-src {allowed(origins('frameDomains'))}",
            "object-src 'none'",
            f"base-uri {origins('baseUriDomains') or own}",
            "form-action 'none'",
        )
    )


def tool_view_problems(meta: Mapping[str, Any] | None, views: set[str]) -> Iterator[str]:
    """What is wrong with a tool's link to a view (``McpUiToolMeta``): the view must be one
    of ``views`` (the catalog's), the visibility a non-empty list of ``model`` and ``app``."""
    if not isinstance(meta, Mapping):
        return
    ui = meta.get("ui")
    flat = meta.get(DEPRECATED_TOOL_KEY)
    if ui is None:
        # The page's deprecated flat form, alone: still a link, held to a declared view.
        if flat is not None and (not isinstance(flat, str) or flat not in views):
            yield (
                f"_meta['{DEPRECATED_TOOL_KEY}'] names {_shown(flat)}, which is no view this "
                "catalog declares"
            )
        return
    if not isinstance(ui, Mapping):
        yield "_meta.ui is not an object"
        return
    yield from _unknown_keys(ui, _TOOL_KEYS, "_meta.ui")
    uri = ui.get("resourceUri")
    if uri is not None and (not isinstance(uri, str) or uri not in views):
        yield f"_meta.ui.resourceUri names {_shown(uri)}, which is no view this catalog declares"
    if flat is not None and flat != uri:
        yield f"_meta['{DEPRECATED_TOOL_KEY}'] differs from _meta.ui.resourceUri"
    visibility = ui.get("visibility")
    if visibility is not None and (
        not isinstance(visibility, list) or not all(value in VISIBILITIES for value in visibility)
    ):
        yield "_meta.ui.visibility is not a list of 'model' and 'app'"


def _shown(value: Any) -> str:
    """A value a message names: a short string quoted, anything else by its type."""
    return repr(value) if isinstance(value, str) and len(value) <= 200 else type(value).__name__


def _unknown_keys(value: Mapping[str, Any], known: tuple[str, ...], where: str) -> Iterator[str]:
    for key in value:
        if key not in known:
            yield f"{where} has the key {str(key)[:64]!r}, which the page does not define"


def _origin_problems(origins: Any, where: str) -> Iterator[str]:
    if origins is None:
        return
    if not isinstance(origins, list):
        yield f"{where} is not a list of origins"
        return
    for origin in origins:
        matched = _ORIGIN.fullmatch(origin) if isinstance(origin, str) else None
        if matched is None or int(matched["port"] or 0) > 65535:
            shown = origin[:100] if isinstance(origin, str) else type(origin).__name__
            yield (
                f"{where} holds {shown!r}, not an origin 'scheme://host[:port]' (https, http, "
                "wss or ws; the first label may be '*')"
            )


def view_contents(contents: list[Any], uri: str, meta: Mapping[str, Any] | None) -> list[Any]:
    """A view's ``resources/read`` contents as the page requires them: the view's own entry
    of the view type, carrying the ``_meta.ui`` its declaration holds (a host builds the
    iframe's policy from what it reads, not from the listing). ``ValueError`` when the
    host's reader answered another type for it."""
    ui = view_meta(meta)
    shaped = []
    for item in contents:
        if item.get("uri") == uri:
            if item.get("mimeType", VIEW_MIME_TYPE) != VIEW_MIME_TYPE:
                raise ValueError(
                    f"the view {uri} was read as {str(item.get('mimeType'))[:64]!r}: a view's "
                    f"contents are '{VIEW_MIME_TYPE}'"
                )
            item = {**item, "mimeType": VIEW_MIME_TYPE}
            # The declared _meta.ui, which the startup checks held to the page, whatever the
            # reader wrote: a host builds the frame's policy from what it reads.
            extra = {key: value for key, value in (item.get("_meta") or {}).items() if key != "ui"}
            item["_meta"] = {**extra, "ui": dict(ui)} if ui else extra
            if not item["_meta"]:
                del item["_meta"]
        shaped.append(item)
    return shaped
