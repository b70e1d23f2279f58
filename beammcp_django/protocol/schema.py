"""JSON Schema: checking the host's schemas once, and validating arguments against them.

One compiled validator per schema, built at startup. A schema without ``$schema`` is JSON
Schema 2020-12 (the spec's default in both revisions); a declared dialect the validator does
not know is a host fault found at startup. No ``$ref`` is ever fetched: the registry refuses
every retrieval, and a ``$ref`` that does not resolve inside the schema is refused at startup.

A violation is described by the instance path and the rule that failed, never by the value:
the value is the client's, and a refusal must not echo it.

``pattern`` and ``patternProperties`` match the client's strings and property names against
the host's regular expressions. jsonschema runs them with Python's backtracking ``re``, where
``^(a+)+$`` against 30 characters takes minutes (``bench/regex.py``). Here they run on RE2,
whose time is linear in the input; a pattern RE2 cannot run (backreferences, lookaround)
keeps Python's ``re`` and is listed by ``backtracking_patterns`` for a startup warning.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import re2
from jsonschema import Draft202012Validator, exceptions, validators
from referencing import Registry
from referencing.exceptions import NoSuchResource

from . import echo


def _refuse_retrieval(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


_NO_RETRIEVAL = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def dialect_of(schema: Mapping[str, Any]) -> type[Any] | None:
    """The validator class for a schema, or None for a declared dialect we do not support."""
    if "$schema" not in schema:
        return Draft202012Validator
    if type(schema["$schema"]) is not str:
        return None
    return validators.validator_for(schema, default=None)  # type: ignore[arg-type]


def schema_problems(schema: Any) -> list[str]:
    """Why a host schema cannot be served, in words for the host; empty when it can."""
    if not isinstance(schema, Mapping):
        return ["is not a JSON object"]
    validator_class = dialect_of(schema)
    if validator_class is None:
        return ["declares a $schema dialect this server does not support"]
    try:
        validator_class.check_schema(schema)
    except exceptions.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        return [f"is not a valid JSON Schema at {where}: {error.message}"]
    return [f"has an unresolvable {ref}" for ref in _unresolvable_refs(schema, validator_class)]


# Keywords whose values are instance data, not subschemas: a "$ref" inside them is a value.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "dependentRequired"})


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield value
            elif key not in _DATA_KEYWORDS:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _unresolvable_refs(schema: Mapping[str, Any], validator_class: type[Any]) -> list[str]:
    validator = validator_class(schema, registry=_NO_RETRIEVAL)
    problems = []
    for ref in _refs(schema):
        try:
            validator._resolver.lookup(ref)
        except Exception:
            problems.append(f"$ref '{ref}' (remote references are never fetched)")
    return problems


# -- regular expressions ---------------------------------------------------------------------

# ECMA-262's WhiteSpace and LineTerminator code points: what \s means in a JSON Schema pattern.
# RE2's own \s is ASCII [\t\n\f\r ] only.
_ECMA_SPACE = (
    r"\x{9}-\x{d}\x{20}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}"
    r"\x{3000}\x{feff}"
)
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")


def _for_re2(pattern: str) -> str:
    r"""The pattern in RE2's syntax, with ECMA-262's meaning where RE2 would read it otherwise.

    ``\s``/``\S`` become ECMA's whitespace class (``\S`` inside a class keeps RE2's ASCII
    meaning), ``\uXXXX`` becomes ``\x{XXXX}``, and inside a class ``[`` and ``\b`` are
    the literal bracket and backspace (RE2 would read ``[:alpha:]`` as a POSIX class). Every
    other construct is passed through: where RE2 cannot compile it, Python's ``re`` runs the
    pattern instead. ``\d``, ``\w`` and ``\b`` are ASCII in RE2, as in ECMA-262, and ``$``
    matches only at the end (Python's also matches before a final newline).
    """
    out: list[str] = []
    in_class = False
    position = 0
    while position < len(pattern):
        char = pattern[position]
        position += 1
        if char == "\\" and position < len(pattern):
            escaped = pattern[position]
            position += 1
            if escaped == "s":
                out.append(_ECMA_SPACE if in_class else f"[{_ECMA_SPACE}]")
            elif escaped == "S" and not in_class:
                out.append(f"[^{_ECMA_SPACE}]")
            elif escaped == "b" and in_class:
                out.append(r"\x{8}")
            elif escaped == "u" and _HEX4.fullmatch(pattern, position, position + 4):
                out.append(f"\\x{{{pattern[position : position + 4]}}}")
                position += 4
            else:
                out.append("\\" + escaped)
        elif in_class:
            out.append(r"\[" if char == "[" else char)
            in_class = char != "]"
        elif char == "[":
            # A "]" right after "[" or "[^" is a literal in Python's re and in RE2.
            opening = "[^" if pattern.startswith("^", position) else "["
            position += len(opening) - 1
            if pattern.startswith("]", position):
                opening += r"\]"
                position += 1
            out.append(opening)
            in_class = True
        else:
            out.append(char)
    return "".join(out)


def _re2_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a pattern RE2 refuses is expected; it falls back to re
    options.never_capture = True  # only "is there a match" is asked
    return options


_RE2_OPTIONS = _re2_options()


@dataclass(frozen=True, slots=True)
class _Pattern:
    """A host pattern compiled once: on RE2 (linear time) when it can, else on Python's re."""

    compiled: Any
    linear: bool

    def found_in(self, text: str) -> bool:
        if not self.linear:
            return self.compiled.search(text) is not None
        # RE2 reads UTF-8. Encoding here is cheaper than the wrapper's str path, and
        # "surrogatepass" lets a lone surrogate (JSON allows "\ud800") through as a character.
        return self.compiled.search(text.encode("utf-8", "surrogatepass")) is not None


# Patterns come from host schemas only, never from clients; the bound is a backstop.
@functools.lru_cache(maxsize=1024)
def _compile_pattern(pattern: str) -> _Pattern:
    try:
        return _Pattern(re2.compile(_for_re2(pattern), _RE2_OPTIONS), linear=True)
    except re2.error:
        return _Pattern(re.compile(pattern), linear=False)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _compile_pattern(pattern).found_in(instance):
        yield exceptions.ValidationError("does not match the pattern")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled = _compile_pattern(pattern)
        for name, value in instance.items():
            if compiled.found_in(name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = [_compile_pattern(pattern) for pattern in schema.get("patternProperties", {})]
    extras = [
        name
        for name in instance
        if name not in named and not any(pattern.found_in(name) for pattern in patterns)
    ]
    if validator.is_type(additional, "object"):
        for name in extras:
            yield from validator.descend(instance[name], additional, path=name)
    elif additional is False and extras:
        yield exceptions.ValidationError("has properties the schema does not allow")


@functools.cache
def _linear_time(validator_class: type[Any]) -> type[Any]:
    """The dialect's validator with every keyword that matches a host pattern on ``_Pattern``.

    ``unevaluatedProperties`` still matches ``patternProperties`` with Python's re inside
    jsonschema; ``backtracking_patterns`` names those patterns.
    """
    return validators.extend(
        validator_class,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


# Keywords whose value maps names to subschemas: their keys are not keywords.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def _schema_objects(node: Any, pointer: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (JSON Pointer, object) in a schema that may be a subschema."""
    if isinstance(node, Mapping):
        yield pointer, node
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            here = f"{pointer}/{_escape(key)}"
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                for name, subschema in value.items():
                    yield from _schema_objects(subschema, f"{here}/{_escape(name)}")
            else:
                yield from _schema_objects(value, here)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _schema_objects(item, f"{pointer}/{index}")


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _patterns(schema: Any) -> Iterator[tuple[str, str, str]]:
    """(JSON Pointer, pattern, keyword) for every ``pattern`` and ``patternProperties`` key."""
    for pointer, node in _schema_objects(schema):
        if isinstance(node.get("pattern"), str):
            yield f"{pointer}/pattern", node["pattern"], "pattern"
        if isinstance(node.get("patternProperties"), Mapping):
            for pattern in node["patternProperties"]:
                where = f"{pointer}/patternProperties/{_escape(pattern)}"
                yield where, pattern, "patternProperties"


def backtracking_patterns(schema: Any) -> list[str]:
    r"""JSON Pointers to the host patterns that client input meets on Python's backtracking
    re, where a crafted string can take exponential time: the patterns RE2 cannot compile
    (backreferences, lookaround, possessive quantifiers, ``\Z``...), and every
    ``patternProperties`` key of a schema that uses ``unevaluatedProperties`` (jsonschema
    matches those itself). Empty when every pattern runs in linear time.
    """
    uses_unevaluated = any("unevaluatedProperties" in node for _, node in _schema_objects(schema))
    found = []
    for pointer, pattern, keyword in _patterns(schema):
        try:
            linear = _compile_pattern(pattern).linear
        except re.error:
            continue  # not a pattern at all: schema_problems reports it
        if not linear or (keyword == "patternProperties" and uses_unevaluated):
            found.append(pointer)
    return found


# The keywords whose meaning jsonschema-rs and jsonschema share exactly (held by
# tests/protocol/test_schema_fast_path.py), and annotations neither asserts. A schema using
# any other keyword is validated by jsonschema alone: patterns (they run on RE2 here),
# multipleOf (rs accepts 0.3 as a multiple of 0.1, jsonschema does not), the unevaluated*,
# contains and dynamic-reference families.
_FAST_KEYWORDS = frozenset(
    {
        "$schema", "$defs", "definitions", "$ref", "$comment", "title", "description",
        "default", "examples", "format", "readOnly", "writeOnly", "deprecated",
        "contentMediaType", "contentEncoding", "type", "enum", "const", "properties",
        "required", "additionalProperties", "minProperties", "maxProperties",
        "dependentRequired", "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
        "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "anyOf", "oneOf", "allOf", "not", "if", "then", "else",
    }
)  # fmt: skip


def _fast_validator(schema: Mapping[str, Any]) -> Any | None:
    """A jsonschema-rs validator used to accept valid arguments quickly (0.2 µs against
    jsonschema's 16 to 20 µs for a one-property object, bench/validator.py), or None when the
    schema uses a keyword outside ``_FAST_KEYWORDS``. It only ever says "valid": a refusal,
    and its description, always come from jsonschema."""
    for _, node in _schema_objects(schema):
        if any(key not in _FAST_KEYWORDS and not key.startswith("x-") for key in node):
            return None
    # Imported here, not at the top: jsonschema_rs imports email.utils, which imports socket.
    # Nothing opens one, but the core's import stays free of socket (test_no_django_in_core).
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(
            dict(schema),
            validate_formats=False,
            offline=True,  # no remote $ref is ever fetched
        )
    except Exception:  # any schema rs cannot take is simply validated by jsonschema alone
        return None


class CompiledSchema:
    """A host schema compiled once; ``violation`` answers None or the first failure, named."""

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        validator_class = _linear_time(dialect_of(schema) or Draft202012Validator)
        self.schema = schema
        self._validator = validator_class(schema, registry=_NO_RETRIEVAL)
        self._fast = _fast_validator(schema)
        for _, pattern, _ in _patterns(schema):
            # Compiled now, at startup; one that compiles nowhere fails where jsonschema's did.
            with contextlib.suppress(re.error):
                _compile_pattern(pattern)

    def violation(self, instance: Any, root: str) -> str | None:
        if self._fast is not None:
            try:
                if self._fast.is_valid(instance):
                    return None
            except Exception:
                pass
        errors = self._validator.iter_errors(instance)
        first = next(errors, None)
        if first is None:
            return None
        best = exceptions.best_match([first, *errors])
        return describe(best, root)


def _shown(value: Any, limit: int = 120) -> str:
    """A schema value (the host's, never the client's), compact and short."""
    rendered = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return rendered if len(rendered) <= limit else rendered[: limit - 3] + "..."


def _rule_text(error: exceptions.ValidationError) -> str:
    rule = error.validator
    expected = error.validator_value
    instance = error.instance
    if rule == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "must be of type " + " or ".join(str(kind) for kind in kinds)
    if rule == "required":
        present = instance if isinstance(instance, Mapping) else {}
        missing = [name for name in expected if name not in present]
        if missing:
            return f"is missing the required property {_shown(missing[0])}"
        return "is missing a required property"
    # Draft 4 writes an exclusive bound as "minimum" plus "exclusiveMinimum": true.
    subschema = error.schema if isinstance(error.schema, Mapping) else {}
    above = ">" if subschema.get("exclusiveMinimum") is True else ">="
    below = "<" if subschema.get("exclusiveMaximum") is True else "<="
    simple = {
        "minimum": f"must be {above} {_shown(expected)}",
        "maximum": f"must be {below} {_shown(expected)}",
        "exclusiveMinimum": f"must be > {_shown(expected)}",
        "exclusiveMaximum": f"must be < {_shown(expected)}",
        "multipleOf": f"must be a multiple of {_shown(expected)}",
        "minLength": f"must be at least {_shown(expected)} characters long",
        "maxLength": f"must be at most {_shown(expected)} characters long",
        "minItems": f"must have at least {_shown(expected)} items",
        "maxItems": f"must have at most {_shown(expected)} items",
        "minProperties": f"must have at least {_shown(expected)} properties",
        "maxProperties": f"must have at most {_shown(expected)} properties",
        "uniqueItems": "must not repeat an item",
        "pattern": f"must match the pattern {_shown(expected)}",
        "format": f"must be a valid {_shown(expected)}",
        "enum": f"must be one of {_shown(expected)}",
        "const": f"must equal {_shown(expected)}",
        "additionalProperties": "has a property the schema does not allow",
        "unevaluatedProperties": "has a property the schema does not allow",
        "unevaluatedItems": "has an item the schema does not allow",
        "propertyNames": "has a property name the schema does not allow",
        "not": "matches a schema it must not match",
        "oneOf": "must match exactly one of the allowed alternatives",
        "anyOf": "must match at least one of the allowed alternatives",
        "contains": "must contain an item the schema describes",
        "dependentRequired": "is missing a property another property requires",
    }
    if rule in simple:
        return simple[rule]
    if rule is None or rule is False:
        return "is not allowed here"
    return f"fails the '{rule}' rule"


def describe(error: exceptions.ValidationError, root: str) -> str:
    """'<root>/<path>: <what the rule demands>' with no part of the offending value."""
    return f"{echo.path(root, error.absolute_path)}: {_rule_text(error)}"
