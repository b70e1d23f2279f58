"""Where the test app writes marker and record files: ``$MCPHTTP_RECORD_DIR/<token>.<kind>``."""

from __future__ import annotations

import os
import re
from pathlib import Path

RECORD_DIR_ENV = "MCPHTTP_RECORD_DIR"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def marker_path(token: str, kind: str) -> Path | None:
    """The file for ``token`` and ``kind``; None when the token is not a plain name."""
    directory = os.environ.get(RECORD_DIR_ENV)
    if not directory or not _TOKEN.fullmatch(token):
        return None
    return Path(directory) / f"{token}.{kind}"


def write_marker(token: str, kind: str, text: str) -> None:
    path = marker_path(token, kind)
    if path is None:
        return
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)  # readers never see half a file
