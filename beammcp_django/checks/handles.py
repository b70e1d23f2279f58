"""The system check of server-minted handles (``beammcp_django/handles``): each registered
``HandleKind`` held to its rules (a name, a prefix, lifetimes, a bound), no two kinds with one
name or one prefix (an id would name either), and every kind a tool ``mints`` registered."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, register

from beammcp_django.checks.ids import check_id
from beammcp_django.conf import load_catalog
from beammcp_django.handles.kinds import BAD_HANDLE_KIND, HandleKind, kind_name, kind_problems
from beammcp_django.registry import Tool

_HINT = (
    "A kind is 1 to 63 of a-z 0-9 _, its prefix 1 to 8 of a-z 0-9, its idle lifetime no "
    "longer than its lifetime; each kind and prefix belongs to one HandleKind; a tool mints "
    "only registered kinds."
)


@register("beammcp")
def check_handle_kinds(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        declarations = getattr(load_catalog(), "declarations", ())
    except Exception:
        return []  # an unloadable catalog is check_catalog's to report
    found: list[tuple[str, str]] = []
    kinds = [d for d in declarations if issubclass(d, HandleKind)]
    names: dict[Any, str] = {}
    prefixes: dict[Any, str] = {}
    for declaration in kinds:
        subject = f"handle kind {declaration.__qualname__}"
        if not (hasattr(declaration, "kind") and hasattr(declaration, "prefix")):
            continue  # an incomplete declaration: the catalog's check names it
        spec = declaration.spec()
        found.extend((subject, problem) for problem in kind_problems(spec))
        for seen, value, what in ((names, spec.kind, "kind"), (prefixes, spec.prefix, "prefix")):
            if value in seen:
                found.append((subject, f"has the {what} {value!r} of {seen[value]} too"))
            seen.setdefault(value, declaration.__qualname__)
    for declaration in declarations:
        if not issubclass(declaration, Tool):
            continue
        for minted in getattr(declaration, "mints", ()):
            if kind_name(minted) not in names:
                found.append(
                    (
                        f"tool {getattr(declaration, 'name', declaration.__qualname__)}",
                        f"mints {str(kind_name(minted) or minted)[:64]!r}, which no "
                        "registered HandleKind declares",
                    )
                )
    return [
        Error(f"{subject}: {problem}", hint=_HINT, obj=subject, id=check_id(BAD_HANDLE_KIND))
        for subject, problem in found
    ]
