"""``UiResource``: a view of MCP Apps, rendered from a Django template on every read.

A host declares the view's template, what it is rendered with (``get_context_data``: the
host's choice, never the request's data unless the host puts it there), and what the host
application may let it load (``csp``), use (``browser_permissions``), where it runs
(``domain``) and how it is framed (``prefers_border``): the view's ``_meta.ui``, checked
against the extension's types at startup (``beammcp.E031``). A tool names the view in
``meta = {"ui": {"resourceUri": ...}}`` (``beammcp.E032``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from django.template.loader import render_to_string

from beammcp_django.protocol.apps import VIEW_MIME_TYPE
from beammcp_django.protocol.catalog import ResourceSpec
from beammcp_django.protocol.context import RequestContext
from beammcp_django.registry import Resource


class UiResource(Resource):
    """A view (``ui://`` URI, ``text/html;profile=mcp-app``): one HTML document, rendered
    from ``template_name`` with ``get_context_data(context)``. Its scripts and styles are
    inlined at render (``{% load mcp_views %}``, ``{% inline_script %}``,
    ``{% inline_style %}``) unless ``csp`` declares the origins they load from."""

    mime_type = VIEW_MIME_TYPE
    template_name: ClassVar[str]
    also_required: ClassVar[tuple[str, ...]] = ("template_name",)
    # The origins the view may reach: {"connectDomains": [...], "resourceDomains": [...],
    # "frameDomains": [...], "baseUriDomains": [...]}; none by default.
    csp: ClassVar[Mapping[str, Sequence[str]] | None] = None
    # The browser features it asks for: "camera", "microphone", "geolocation",
    # "clipboardWrite" (``permissions`` is who may use it, as on every entry).
    browser_permissions: ClassVar[Sequence[str]] = ()
    # A dedicated origin, in the format the host application documents.
    domain: ClassVar[str | None] = None
    # Whether the host application draws a border and background around it.
    prefers_border: ClassVar[bool | None] = None

    def get_context_data(self, context: RequestContext) -> dict[str, Any]:
        """What the template is rendered with: nothing by default."""
        return {}

    def read(self, context: RequestContext) -> str:
        return render_to_string(self.template_name, self.get_context_data(context))

    def spec(self) -> ResourceSpec:
        """The resource's spec, its ``_meta.ui`` written from the class's attributes."""
        spec = super().spec()
        declared = dict(spec.meta or {})
        # A `meta["ui"]` written by hand is the view's own: the attributes fill in the rest.
        return replace(spec, meta={**declared, "ui": {**self.ui_meta(), **declared.get("ui", {})}})

    @classmethod
    def ui_meta(cls) -> dict[str, Any]:
        ui: dict[str, Any] = {}
        if cls.csp is not None:
            # A list stays a list; anything else is passed on for the check to name (a string
            # split into characters would hide the mistake).
            ui["csp"] = {
                key: list(origins) if isinstance(origins, (list, tuple)) else origins
                for key, origins in cls.csp.items()
            }
        if cls.browser_permissions:
            ui["permissions"] = {name: {} for name in cls.browser_permissions}
        if cls.domain is not None:
            ui["domain"] = cls.domain
        if cls.prefers_border is not None:
            ui["prefersBorder"] = cls.prefers_border
        return ui
