"""A view's scripts and styles inlined into its document at render: a view is one HTML
document, which a host frames with a policy that lets it load nothing it did not declare.

The files are the project's static files (found as ``collectstatic`` finds them), read once
a process. A script's ``</`` is written ``<\\/`` (the same text to JavaScript, no end of the
element to HTML); a style holding ``</style`` is refused, CSS having no such spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.contrib.staticfiles import finders

_STYLE_END = re.compile(r"</style", re.IGNORECASE)


class MissingAsset(LookupError):
    """A static file a view inlines is not among the project's static files."""


@lru_cache(maxsize=256)
def static_text(path: str) -> str:
    """The text of the static file ``path`` (UTF-8), read once."""
    found = finders.find(path)
    if not found:
        raise MissingAsset(
            f"no static file '{path[:200]}' (is its app installed, or its folder in "
            "STATICFILES_DIRS?)"
        )
    return Path(found if isinstance(found, str) else found[0]).read_text(encoding="utf-8")


def script_element(path: str) -> str:
    return "<script>" + static_text(path).replace("</", "<\\/") + "</script>"


def style_element(path: str) -> str:
    text = static_text(path)
    if _STYLE_END.search(text):
        raise ValueError(f"the style '{path[:200]}' holds '</style', which would end it early")
    return "<style>" + text + "</style>"
