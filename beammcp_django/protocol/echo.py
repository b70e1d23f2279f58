"""What an error may echo of the client's own input, and how much of it.

A refusal names its cause, and part of a cause is often the client's: the method it asked
for, a tool or prompt name, a resource URI, the path to an argument, a repeated key. Such a
value is echoed only when it is short and drawn from a fixed alphabet with no space, double
quote, angle bracket, backslash or control character (a URI may hold an apostrophe, which
RFC 3986 admits), so that no reply carries a newline, markup or a payload back; any other
value is named by what it is, never shown. An error echoes at most one value; the bounds,
the longest ``MAX_ECHO`` characters:

===========================  ====================================  ====================
value                         alphabet                              at most
===========================  ====================================  ====================
method, tool or prompt name   ``A-Z a-z 0-9 _ . - /``               128 (the spec's name
                                                                    limit)
repeated key                  ``A-Z a-z 0-9 _ . - : / $ @``         64
argument path                 segments of ``A-Z a-z 0-9 _ . -``     64 a segment (``*``
                              (array indexes as numbers)            otherwise), 256 in
                                                                    all, elided inside
resource URI (``data.uri``)   RFC 3986's characters                 512
===========================  ====================================  ====================

The request id is the exception: JSON-RPC makes every reply carry it as it was sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_ECHO = 512
MAX_PATH = 256
_NAME = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")
_KEY = re.compile(r"[A-Za-z0-9_.:/$@\-]{1,64}")
_SEGMENT = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_URI = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]{1," + str(MAX_ECHO) + "}")
_ELIDED = "..."


def name(value: str) -> str | None:
    """A method, tool or prompt name as an error may show it, or None."""
    return value if _NAME.fullmatch(value) else None


def key(value: str) -> str | None:
    """An object key as an error may show it, or None."""
    return value if _KEY.fullmatch(value) else None


def uri(value: str) -> str | None:
    """A resource URI as an error may carry it in ``data``, or None."""
    return value if _URI.fullmatch(value) else None


def path(root: str, parts: Iterable[str | int]) -> str:
    """``root/part/...`` for an instance path: a segment outside the alphabet is ``*``, and
    a path past ``MAX_PATH`` keeps its start and its last segment around ``...``."""
    segments = [root]
    for part in parts:
        if isinstance(part, int):
            segments.append(str(part))
        elif _SEGMENT.fullmatch(part):
            segments.append(part)
        else:
            segments.append("*")
    written = "/".join(segments)
    if len(written) <= MAX_PATH:
        return written
    last = segments[-1]
    room = MAX_PATH - len(last) - len(_ELIDED) - 2
    kept: list[str] = []
    used = 0
    for segment in segments[:-1]:
        if used + len(segment) + 1 > room:
            break
        kept.append(segment)
        used += len(segment) + 1
    return "/".join([*kept, _ELIDED, last])
