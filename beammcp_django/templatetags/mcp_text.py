"""Template filters for the admin's MCP pages: a host's description as a reader reads it."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# reStructuredText's inline literal, which docstrings (and so descriptions) use: ``name``.
_LITERAL = re.compile(r"``(.+?)``")


@register.filter
def inline_code(text: str) -> SafeString:
    """``text`` escaped, each ``literal`` shown as code rather than with its backticks."""
    return mark_safe(_LITERAL.sub(r"<code>\1</code>", escape(text)))
