"""A view's scripts and styles inlined into its document at render: a view is one HTML
document, which a host frames with a policy that lets it load nothing it did not declare.

The files are the project's static files (found as ``collectstatic`` finds them), read once
a process (every render under ``DEBUG``). A script's ``</`` is written ``<\\/`` (in a string or
a regular expression the same text to JavaScript; no end of the element to HTML); a script
holding ``<!--`` and a style holding ``</style`` are refused (``beammcp.E033`` at startup).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders

_STYLE_END = re.compile(r"</style", re.IGNORECASE)


class MissingAsset(LookupError):
    """A static file a view inlines is not among the project's static files."""


def static_text(path: str) -> str:
    """The text of the static file ``path`` (UTF-8): read once a process, or on every
    render under ``DEBUG`` (a developer's edit shows at once)."""
    if settings.DEBUG:
        return _read(path)
    return _cached(path)


@lru_cache(maxsize=256)
def _cached(path: str) -> str:
    return _read(path)


def _read(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise MissingAsset(
            f"no static file '{path[:200]}' (is its app installed, or its folder in "
            "STATICFILES_DIRS?)"
        )
    try:
        return Path(found).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MissingAsset(f"the static file '{path[:200]}' is not UTF-8 text") from None


def hazard(path: str, kind: str) -> str | None:
    """Why the static file ``path`` cannot be inlined as a ``kind`` (``script`` or
    ``style``) element, or None: what would end the element early, or (``<!--`` before a
    ``<script``) make the HTML parser read on past its end."""
    text = static_text(path)
    if kind == "style" and _STYLE_END.search(text):
        return f"the style '{path[:200]}' holds '</style', which would end it early"
    if kind == "script" and "<!--" in text:
        return (
            f"the script '{path[:200]}' holds '<!--', which can keep the HTML parser inside "
            "the element past its end: write it another way"
        )
    return None


def script_element(path: str) -> str:
    problem = hazard(path, "script")
    if problem is not None:
        raise ValueError(problem)
    return "<script>" + static_text(path).replace("</", "<\\/") + "</script>"


def style_element(path: str) -> str:
    problem = hazard(path, "style")
    if problem is not None:
        raise ValueError(problem)
    return "<style>" + static_text(path) + "</style>"
