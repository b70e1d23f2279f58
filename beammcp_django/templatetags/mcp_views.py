"""The tags a view's template inlines its static assets with (``ui/inline.py``):

{% load mcp_views %}
{% inline_style "weather/forecast.css" %}
{% inline_script "weather/forecast.js" %}
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from beammcp_django.ui.inline import script_element, style_element

register = template.Library()


@register.simple_tag
def inline_script(path: str) -> SafeString:
    """The static file ``path`` as a ``<script>`` element."""
    return mark_safe(script_element(path))  # the project's own file, its "</" escaped


@register.simple_tag
def inline_style(path: str) -> SafeString:
    """The static file ``path`` as a ``<style>`` element."""
    return mark_safe(style_element(path))  # the project's own file, checked
