"""What a view's template can be seen to load, read from its source before it serves: the
origins its markup, styles and scripts name as literals, each held to the directive of the
view's ``csp`` that a host applies to it (``beammcp.E033``). A load the host would block is
a view that breaks in every host; one computed at run time is not seen here (the host's
policy still blocks it).

The template is read with what it extends and includes, and the static files it inlines
(``{% inline_script %}``, ``{% inline_style %}``), each named by a literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from django.template import TemplateDoesNotExist, TemplateSyntaxError
from django.template.loader import get_template

from beammcp_django.ui.inline import MissingAsset, hazard, static_text

# The rule, by name (``checks/ids.py`` gives it its id).
VIEW_TEMPLATE = "view_template"

_URL = r"""["'`]?(?P<url>(?:(?:https?|wss?):)?//[^\s"'`<>()]+)"""
# (what loads it, the csp key whose origins may serve it, the pattern finding it)
_LOADS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("a frame", "frameDomains", re.compile(r"<iframe\b[^>]*?\bsrc\s*=\s*" + _URL, re.I)),
    ("the base URI", "baseUriDomains", re.compile(r"<base\b[^>]*?\bhref\s*=\s*" + _URL, re.I)),
    (
        "an element",
        "resourceDomains",
        re.compile(
            r"<(?:script|img|link|audio|video|source|track|input)\b[^>]*?"
            r"\b(?:src|href|poster|srcset)\s*=\s*" + _URL,
            re.I,
        ),
    ),
    # The policy a host builds has object-src 'none': no csp key allows these.
    (
        "a plugin (object-src 'none')",
        "",
        re.compile(r"<(?:embed|object)\b[^>]*?\b(?:src|data)\s*=\s*" + _URL, re.I),
    ),
    ("a style", "resourceDomains", re.compile(r"(?:url\(\s*|@import\s+)" + _URL, re.I)),
    ("a module import", "resourceDomains", re.compile(r"\bimport\b[^;'\"]*?\(?\s*" + _URL)),
    (
        "a connection",
        "connectDomains",
        re.compile(
            r"(?:\b(?:fetch|WebSocket|EventSource|sendBeacon)\s*\(\s*"
            r"|\.open\(\s*['\"][A-Za-z]+['\"]\s*,\s*)" + _URL,
            re.I,
        ),
    ),
)
# A load of the project's own static files by URL, which a framed view cannot make: its
# document has no origin of the project's (it is written into a sandboxed frame).
_STATIC_URL = re.compile(
    r"\b(?:src|href|poster|data|srcset)\s*=\s*[\"']?\{%\s*static\b|url\(\s*[\"']?\{%\s*static\b",
    re.I,
)
_NAMED = re.compile(
    r"{%\s*(?P<tag>extends|include|inline_script|inline_style)\s+"
    r"(?P<q>['\"])(?P<name>[^'\"]+)(?P=q)"
)
_ORIGIN = re.compile(r"(?P<scheme>[a-z]+:)?//(?P<host>[^/:?#]+)(?P<port>:[0-9]+)?", re.I)


@dataclass(frozen=True)
class UndeclaredLoad:
    """One load the view's policy would block: where it is written, what it loads, the
    origin, and the ``csp`` key that would have to declare it."""

    source: str
    what: str
    origin: str
    key: str

    def __str__(self) -> str:
        if not self.key:
            return f"{self.source} loads {self.what} from {self.origin}: a host would block it"
        return (
            f"{self.source} loads {self.what} from {self.origin}, which its csp.{self.key} "
            "does not declare: a host would block it"
        )


def undeclared_loads(
    template_name: str, csp: Mapping[str, Sequence[str]] | None
) -> Iterator[UndeclaredLoad]:
    """Each literal load in the view's template (and what it extends, includes and
    inlines) from an origin its ``csp`` does not declare for that kind of load."""
    declared = {key: tuple(origins) for key, origins in (csp or {}).items()}
    for source, text in _sources(template_name):
        for what, key, pattern in _LOADS:
            for found in pattern.finditer(text):
                origin = _origin(found["url"])
                if origin is not None and not _allowed(origin, declared.get(key, ())):
                    yield UndeclaredLoad(source, what, origin, key)
        if _STATIC_URL.search(text):
            yield UndeclaredLoad(
                source, "a static file by its URL ({% static %})", "the project's origin", ""
            )


def inline_problems(template_name: str) -> list[str]:
    """Why each template or static file the view names cannot be read or inlined."""
    return [problem for _, _, problem in _read(template_name) if problem]


def _sources(template_name: str) -> Iterator[tuple[str, str]]:
    """(where, text) of the template and of everything it names by a literal, once each."""
    for source, text, _ in _read(template_name):
        if text:
            yield source, text


def _read(template_name: str) -> Iterator[tuple[str, str, str]]:
    """(where, text, "") of each source read, or (where, "", why not) of one that is not."""
    pending = [("template", template_name)]
    seen: set[tuple[str, str]] = set()
    while pending:
        kind, name = pending.pop()
        if (kind, name) in seen:
            continue
        seen.add((kind, name))
        where = f"template '{name}'" if kind == "template" else f"static file '{name}'"
        try:
            text = get_template(name).template.source if kind == "template" else static_text(name)
        except MissingAsset as missing:
            yield where, "", f"it inlines {missing}"
            continue
        except TemplateDoesNotExist:
            if name != template_name:
                yield where, "", f"its template names '{name}', which does not exist"
            continue
        except TemplateSyntaxError as error:
            yield where, "", f"{where} is not a valid template: {str(error).splitlines()[0]}"
            continue
        except AttributeError:
            yield where, "", f"{where} has no source this check can read (not Django's engine)"
            continue
        hazard_of = {"inline_script": "script", "inline_style": "style"}.get(kind)
        problem = hazard(name, hazard_of) if hazard_of else None
        yield where, text, problem or ""
        for named in _NAMED.finditer(text):
            next_kind = "template" if named["tag"] in ("extends", "include") else named["tag"]
            pending.append((next_kind, named["name"]))


def _origin(written: str) -> str | None:
    """The origin a load names, ``scheme://host[:port]``; a scheme-relative URL is taken as
    https, the scheme a host frames a view under."""
    match = _ORIGIN.search(written)
    if match is None:
        return None
    scheme = (match["scheme"] or "https:").lower()
    return f"{scheme}//{match['host'].lower()}{match['port'] or ''}"


def _allowed(origin: str, declared: Sequence[str]) -> bool:
    for allowed in declared:
        allowed = allowed.lower()
        if allowed == origin:
            return True
        scheme, _, host = allowed.partition("://")
        if host.startswith("*."):
            wanted_scheme, _, wanted = origin.partition("://")
            if wanted_scheme == scheme and wanted.endswith(host[1:]):
                return True
    return False
