"""Matching a URI against the two RFC 6570 forms we claim: ``{var}`` and ``{+var}``.

``{var}`` (simple expansion) matches one path segment: no ``/``, ``?`` or ``#``; the value
is percent-decoded once, and a decoded value holding ``/`` or equal to ``.`` or ``..`` does
not match. ``{+var}`` (reserved expansion) may span segments; its decoded value matches only
as a relative path: no leading ``/``, no ``.`` or ``..`` segment. Neither admits a control
character, a backslash, a leading drive letter, or a percent escape surviving the decoding.
So a reader that joins a value to its base directory never leaves it. Every other operator
or modifier is unsupported, and a template using one is refused at startup.

The client's URI is matched on RE2, in time linear in its length: on a backtracking engine
``file:///{+path}.{ext}`` against a URI of dots takes time quadratic in the length (0.38 s at
8,000 characters, 2026-11-29), hours at the 1 MiB message cap.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import re2

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARIABLE = re.compile(r"(\+?)([A-Za-z0-9_]+)")
_TRAVERSAL = {".", ".."}
# What no decoded value may hold: a control character (C0, DEL, C1), a backslash, a
# percent escape.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\\]|%[0-9A-Fa-f]{2}")
# A Windows drive ("C:..." joins as a path on that drive, whatever the base).
_DRIVE = re.compile(r"[A-Za-z]:")


def _matcher_options() -> re2.Options:
    options = re2.Options()
    options.dot_nl = True  # a {+var} spans any character, a raw newline too, as {var} does
    options.log_errors = False
    return options


_MATCHER_OPTIONS = _matcher_options()


class UnsupportedTemplate(ValueError):
    """The template uses an RFC 6570 form this matcher does not claim."""


class UriTemplate:
    __slots__ = ("_pattern", "_reserved", "names", "template")

    def __init__(self, template: str) -> None:
        self.template = template
        pattern = []
        names: list[str] = []
        reserved: set[str] = set()
        position = 0
        for expression in _EXPRESSION.finditer(template):
            literal = template[position : expression.start()]
            if "{" in literal or "}" in literal:
                raise UnsupportedTemplate("has an unbalanced brace")
            pattern.append(re.escape(literal))
            variable = _VARIABLE.fullmatch(expression.group(1))
            if variable is None:
                raise UnsupportedTemplate(
                    f"uses the expression '{{{expression.group(1)}}}'; "
                    "only {name} and {+name} are supported"
                )
            plus, name = variable.groups()
            if name in names:
                raise UnsupportedTemplate(f"repeats the variable '{name}'")
            names.append(name)
            # Groups are positional: a variable name may start with a digit (RFC 6570
            # varchar), which a named group refuses.
            if plus:
                reserved.add(name)
                pattern.append("(.+?)")
            else:
                pattern.append("([^/?#]+)")
            position = expression.end()
        tail = template[position:]
        if "{" in tail or "}" in tail:
            raise UnsupportedTemplate("has an unbalanced brace")
        pattern.append(re.escape(tail))
        self.names = tuple(names)
        self._reserved = frozenset(reserved)
        # Matched as UTF-8 bytes; "surrogatepass" lets a lone surrogate (JSON allows
        # "\ud800") through as a character rather than failing the encoding.
        self._pattern = re2.compile(
            "".join(pattern).encode("utf-8", "surrogatepass"), _MATCHER_OPTIONS
        )

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variables when ``uri`` is an expansion of this template, else None."""
        found = self._pattern.fullmatch(uri.encode("utf-8", "surrogatepass"))
        if found is None:
            return None
        variables = {}
        for name, matched in zip(self.names, found.groups(), strict=True):
            raw = matched.decode("utf-8", "surrogatepass")
            try:
                value = unquote(raw, errors="strict") if "%" in raw else raw
            except UnicodeDecodeError:
                return None
            if not _safe(value, reserved=name in self._reserved):
                return None
            variables[name] = value
        return variables


def _safe(value: str, *, reserved: bool) -> bool:
    """Whether a decoded value may reach a reader: what a path join cannot turn against it.

    Never a NUL or another control character, a backslash (a separator on Windows), a
    leading drive letter (``C:``, which Windows joins on that drive), or a percent escape
    left after the one decoding (``%252e`` decodes to ``%2e``: a reader that
    decodes again would meet a dot). A ``{var}`` value is one segment, not ``.`` or ``..``;
    a ``{+var}`` value is a relative path: no leading ``/`` (``os.path.join`` would drop
    everything before it) and no ``.`` or ``..`` segment.
    """
    if _UNSAFE.search(value) is not None or _DRIVE.match(value) is not None:
        return False
    if reserved:
        return not value.startswith("/") and not any(
            segment in _TRAVERSAL for segment in value.split("/")
        )
    return "/" not in value and value not in _TRAVERSAL
