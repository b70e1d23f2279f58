"""Template filters for the admin's MCP pages: a host's description, and a process's name,
as a reader reads them."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from beammcp_django.connectome.store import process_label

register = template.Library()

# reStructuredText's inline literal, which docstrings (and so descriptions) use: ``name``.
_LITERAL = re.compile(r"``(.+?)``")


@register.filter
def inline_code(text: str) -> SafeString:
    """``text`` escaped, each ``literal`` shown as code rather than with its backticks."""
    return mark_safe(_LITERAL.sub(r"<code>\1</code>", escape(text)))


@register.filter
def process_name(node: str) -> SafeString:
    """A process's name in the store (``host:pid:start:tag``) readably, its raw name on
    hover; in a narrow column it wraps only between its parts (the admin's ``nowrap``)."""
    parts = process_label(node).split(", ")
    spans = format_html_join(", ", '<span class="nowrap">{}</span>', ((part,) for part in parts))
    return format_html('<span title="{}">{}</span>', node, spans)
