"""JSON Schema: checking the host's schemas once, and validating arguments against them.

One compiled validator per schema, built at startup. A schema without ``$schema`` is JSON
Schema 2020-12 (the spec's default in both revisions); a declared dialect the validator does
not know is a host fault found at startup. No ``$ref`` is ever fetched: the registry refuses
every retrieval, and a ``$ref`` that does not resolve inside the schema is refused at startup.

A violation is described by the instance path and the rule that failed, never by the value:
the value is the client's, and a refusal must not echo it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, exceptions, validators
from referencing import Registry
from referencing.exceptions import NoSuchResource


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
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


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


class CompiledSchema:
    """A host schema compiled once; ``violation`` answers None or the first failure, named."""

    __slots__ = ("_validator", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        validator_class = dialect_of(schema) or Draft202012Validator
        self.schema = schema
        self._validator = validator_class(schema, registry=_NO_RETRIEVAL)

    def violation(self, instance: Any, root: str) -> str | None:
        errors = self._validator.iter_errors(instance)
        first = next(errors, None)
        if first is None:
            return None
        best = exceptions.best_match([first, *errors])
        return describe(best, root)


_SAFE_SEGMENT = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _path(root: str, parts: Any) -> str:
    segments = [root]
    for part in parts:
        if isinstance(part, int):
            segments.append(str(part))
        elif _SAFE_SEGMENT.fullmatch(part):
            segments.append(part)
        else:
            segments.append("*")
    return "/".join(segments)


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
    simple = {
        "minimum": f"must be >= {_shown(expected)}",
        "maximum": f"must be <= {_shown(expected)}",
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
    return f"{_path(root, error.absolute_path)}: {_rule_text(error)}"
