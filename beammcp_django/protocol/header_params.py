"""``x-mcp-header``: tool arguments the client mirrors into ``Mcp-Param-{Name}`` headers.

A property of a tool's input schema may carry ``"x-mcp-header": "<Name>"`` (2026-07-28,
streamable-http.mdx §Custom Headers from Tool Parameters). The annotation is valid only on a
property reached from the root through ``properties`` alone, of type string, integer or
boolean, with a non-empty RFC 9110 token as its name, unique case-insensitively within the
schema. An invalid annotation makes the tool invalid, so it is refused at startup; the HTTP
transport then holds every header against the body value it mirrors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

ANNOTATION = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MIRRORABLE = ("string", "integer", "boolean")
# A decimal number in ASCII digits ("42", "-7", "42.0", "4.2e1"): what "compare numerically"
# admits, and nothing ``float`` also takes ("4_2", " 42", "inf", other scripts' digits).
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True)
class HeaderParameter:
    name: str  # as annotated; the header is f"Mcp-Param-{name}"
    path: tuple[str, ...]  # property names from the root
    type: str

    @property
    def header(self) -> str:
        return f"mcp-param-{self.name.lower()}"

    def body_value(self, arguments: Mapping[str, Any]) -> Any:
        value: Any = arguments
        for key in self.path:
            if type(value) is not dict or key not in value:
                return None
            value = value[key]
        return value

    def matches(self, header_value: str, body_value: Any) -> bool:
        """The header (already sentinel-decoded) equals the body value; integers numerically."""
        if self.type == "boolean":
            return type(body_value) is bool and header_value == ("true" if body_value else "false")
        if self.type == "integer":
            # Exactly, not through float: past 2**53 a float is many integers at once.
            if type(body_value) is not int or not _DECIMAL.fullmatch(header_value):
                return False
            try:
                return Decimal(header_value) == body_value
            except InvalidOperation:  # an exponent past what Decimal can hold
                return False
        return type(body_value) is str and header_value == body_value


def _annotated(
    node: Any, path: tuple[str, ...], reachable: bool
) -> Iterator[tuple[Any, tuple[str, ...], bool]]:
    """Every subschema holding the annotation, with its path and whether properties-only
    reach it."""
    if isinstance(node, Mapping):
        if ANNOTATION in node:
            yield node, path, reachable
        for key, value in node.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, subschema in value.items():
                    yield from _annotated(subschema, (*path, str(name)), reachable)
            elif key not in ("const", "enum", "default", "examples"):
                yield from _annotated(value, path, False)
    elif isinstance(node, list):
        for item in node:
            yield from _annotated(item, path, False)


def header_parameters(schema: Any) -> tuple[HeaderParameter, ...]:
    """The valid annotations of an input schema (invalid ones are startup problems)."""
    found = []
    for node, path, reachable in _annotated(schema, (), True):
        name = node[ANNOTATION]
        kind = node.get("type")
        valid_name = isinstance(name, str) and _TOKEN.fullmatch(name)
        if reachable and path and valid_name and kind in _MIRRORABLE:
            found.append(HeaderParameter(name=name, path=path, type=kind))
    return tuple(found)


def header_problems(schema: Any) -> list[str]:
    problems = []
    seen: dict[str, str] = {}
    for node, path, reachable in _annotated(schema, (), True):
        where = "/".join(path) or "(root)"
        name = node[ANNOTATION]
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            problems.append(f"'{ANNOTATION}' at {where} is not a non-empty RFC 9110 token")
            continue
        if not reachable or not path:
            problems.append(
                f"'{ANNOTATION}' {name!r} at {where} is not reached from the root through "
                "'properties' alone"
            )
        if node.get("type") not in _MIRRORABLE:
            problems.append(
                f"'{ANNOTATION}' {name!r} at {where} is on a property whose type is not "
                "string, integer or boolean"
            )
        folded = name.lower()
        if folded in seen:
            problems.append(
                f"'{ANNOTATION}' {name!r} at {where} repeats {seen[folded]!r} "
                "(names are compared case-insensitively)"
            )
        else:
            seen[folded] = name
    return problems
