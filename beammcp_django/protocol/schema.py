r"""JSON Schema: checking the host's schemas once, and validating instances against them.

Two engines, each with one job. jsonschema (Python) checks every host schema at startup:
against its dialect's metaschema, and every ``$ref`` resolved inside it (a schema without
``$schema`` is 2020-12, the spec's default in both revisions; no ``$ref`` is ever fetched).
jsonschema-rs validates on the request path: it accepts, and it refuses with its first
error, which ``violation`` describes by the instance path and the rule (never by the value:
the value is the client's, and a refusal must not echo it).

Why rs decides refusals too: its time is linear in the instance for every keyword family,
where jsonschema's is not (``uniqueItems`` compares every pair of objects: 5.7 s for 3,000
small objects; 300,000 type errors are all enumerated to choose one: 5.5 s; one ``minimum``
error at the end of a 140,000-integer array: 0.75 s; measured 2026-12-01 by timing
``violation`` before this change; bench/validation.py has every family at the 1 MiB cap).
Its regular expressions run on Rust's ``regex`` crate: linear time, with ECMA-262's ``\d``,
``\w`` and ``\s``. A schema rs cannot compile (a
pattern that needs backtracking, such as look-around or a back-reference; a dialect it does
not know) is listed by ``unbounded_reasons``: as an input schema it is refused at startup
(``beammcp.E021``); as an output schema (the host's own answers) it is validated by
jsonschema, with ``uniqueItems`` hashed, ``multipleOf`` exact and at most 16 errors weighed.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

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
    # jsonschema's private ``_resolver``: the very resolver the validator will follow while
    # validating, so the check answers for exactly that resolution. It stays because
    # jsonschema has no public accessor, and rebuilding one from ``referencing`` would copy
    # how jsonschema assembles it (meta-schemas, dialect), which could drift without a sound.
    # Checked with jsonschema 4.26.0; if it changes, every $ref reads unresolvable and
    # tests/protocol/test_schema.py::test_a_local_ref_that_resolves_is_not_a_problem fails.
    for ref in _refs(schema):
        try:
            validator._resolver.lookup(ref)
        except Exception:
            problems.append(f"$ref '{ref}' (remote references are never fetched)")
    return problems


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


def _patterns(schema: Any) -> Iterator[tuple[str, str]]:
    """(JSON Pointer, pattern) for every ``pattern`` and ``patternProperties`` key."""
    for pointer, node in _schema_objects(schema):
        if isinstance(node.get("pattern"), str):
            yield f"{pointer}/pattern", node["pattern"]
        if isinstance(node.get("patternProperties"), Mapping):
            for pattern in node["patternProperties"]:
                yield f"{pointer}/patternProperties/{_escape(pattern)}", pattern


# -- the request path: jsonschema-rs ------------------------------------------------------


def _rs_module() -> Any:
    # Imported when first needed, not at the top: jsonschema_rs imports email.utils, which
    # imports socket. Nothing opens one, but the core's import stays free of it
    # (tests/protocol/test_no_django_in_core.py).
    import jsonschema_rs

    return jsonschema_rs


def _rs_validator(schema: Mapping[str, Any]) -> Any:
    """The schema compiled by jsonschema-rs: regular expressions on Rust's ``regex`` crate
    (linear time, no backtracking), formats as annotations, no remote ``$ref`` fetched.
    Raises what rs raises for a schema it cannot take."""
    rs = _rs_module()
    return rs.validator_for(
        dict(schema),
        validate_formats=False,
        offline=True,
        pattern_options=rs.RegexOptions(),
        # Its messages are never sent (``_rs_rule_text`` writes ours), and masked they are
        # not built from the instance: ``validate`` refusing the "$ref, recursive" family of
        # tests/validation_families.py at 1 MiB took 210 ms unmasked, 76 ms masked (one
        # timed call each, 2026-12-01).
        mask="*",
    )


@functools.lru_cache(maxsize=1024)
def _pattern_is_linear(pattern: str) -> bool:
    """Whether the linear-time engine runs ``pattern`` (look-around and back-references need
    a backtracking one). Patterns come from host schemas only; the cache bound is a backstop."""
    try:
        _rs_validator({"pattern": pattern})
    except Exception:
        return False
    return True


def unbounded_reasons(schema: Any) -> list[str]:
    """Why validating a caller's input against ``schema`` could not be bounded, in words for
    the host; empty when it can (jsonschema-rs compiles it). Checked at startup for every
    input schema (``beammcp.E021``): an unbounded schema is refused before it serves."""
    if not isinstance(schema, Mapping) or schema_problems(schema):
        return []  # beammcp.E011 says why
    reasons = [
        f"the pattern at {pointer} is not one the linear-time engine runs (look-around and "
        "back-references need backtracking, whose time a caller's string can make "
        "exponential)"
        for pointer, pattern in _patterns(schema)
        if not _pattern_is_linear(pattern)
    ]
    if not reasons:
        try:
            _rs_validator(schema)
        except Exception as error:
            first_line = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
            reasons.append(f"the linear-time validator cannot compile it ({first_line})")
    return reasons


_RS_SIMPLE = {
    "Minimum": "must be >= {limit}",
    "Maximum": "must be <= {limit}",
    "ExclusiveMinimum": "must be > {limit}",
    "ExclusiveMaximum": "must be < {limit}",
    "MultipleOf": "must be a multiple of {multiple_of}",
    "Pattern": "must match the pattern {pattern}",
    "Enum": "must be one of {options}",
    "Constant": "must equal {expected_value}",
    "Required": "is missing the required property {property}",
}
# Bounds on a count: the rule's words around the count, and what is counted, so that the
# noun agrees with the count ("at least 1 character", "at least 2 characters").
_COUNTS = {
    "minLength": ("must be at least {} long", "character"),
    "maxLength": ("must be at most {} long", "character"),
    "minItems": ("must have at least {}", "item"),
    "maxItems": ("must have at most {}", "item"),
    "additionalItems": ("must have at most {}", "item"),
    "minProperties": ("must have at least {}", "property"),
    "maxProperties": ("must have at most {}", "property"),
    "minContains": ("must contain at least {} the schema describes", "item"),
    "maxContains": ("must contain at most {} the schema describes", "item"),
}
# The rs error kinds of those bounds, by the keyword each reports.
_RS_COUNTS = {
    "MinLength": "minLength",
    "MaxLength": "maxLength",
    "MinItems": "minItems",
    "MaxItems": "maxItems",
    "AdditionalItems": "additionalItems",
    "MinProperties": "minProperties",
    "MaxProperties": "maxProperties",
}
_PLURALS = {"character": "characters", "item": "items", "property": "properties"}


def _count_rule(keyword: str, limit: Any) -> str:
    """A count's rule, its noun agreeing with the limit."""
    words, noun = _COUNTS[keyword]
    return words.format(f"{_shown(limit)} {noun if limit == 1 else _PLURALS[noun]}")


_RS_FIXED = {
    "UniqueItems": "must not repeat an item",
    "AdditionalProperties": "has a property the schema does not allow",
    "UnevaluatedProperties": "has a property the schema does not allow",
    "UnevaluatedItems": "has an item the schema does not allow",
    "PropertyNames": "has a property name the schema does not allow",
    "Not": "matches a schema it must not match",
    "OneOfNotValid": "must match exactly one of the allowed alternatives",
    "OneOfMultipleValid": "must match exactly one of the allowed alternatives",
    "AnyOf": "must match at least one of the allowed alternatives",
    "FromUtf8": "must be valid UTF-8 text",
}
# A false subschema, named by the keyword that holds it.
_FALSE_UNDER = {
    "additionalProperties": "has a property the schema does not allow",
    "unevaluatedProperties": "has a property the schema does not allow",
    "items": "has an item the schema does not allow",
    "unevaluatedItems": "has an item the schema does not allow",
    "additionalItems": "has an item the schema does not allow",
}


def _rs_rule_text(error: Any, schema: Mapping[str, Any]) -> str:
    """What the rule an rs error reports demands, from its kind and the schema's own values
    (the host's), never from the instance. ``unexpected`` (names the caller sent) is never
    read."""
    kind = type(error.kind).__name__
    keyword_path = list(error.schema_path)
    keyword = keyword_path[-1] if keyword_path else None
    if kind == "Type":
        # In the order the schema lists them (rs sorts them).
        declared = _keyword_value(schema, keyword_path)
        kinds = declared if isinstance(declared, list) else error.kind.types
        if isinstance(declared, str):
            kinds = [declared]
        return "must be of type " + " or ".join(str(name) for name in kinds)
    if kind in _RS_COUNTS:
        return _count_rule(_RS_COUNTS[kind], error.kind.as_dict()["limit"])
    if kind in _RS_SIMPLE:
        values = {name: _shown(value) for name, value in error.kind.as_dict().items()}
        if kind == "Required" and keyword == "dependentRequired":
            return "is missing a property another property requires"
        return _RS_SIMPLE[kind].format(**values)
    if kind in _RS_FIXED:
        return _RS_FIXED[kind]
    if kind == "FalseSchema":
        return _FALSE_UNDER.get(str(keyword), "is not allowed here")
    if kind == "Contains":
        if keyword in ("minContains", "maxContains"):
            return _count_rule(str(keyword), _keyword_value(schema, keyword_path))
        return "must contain an item the schema describes"
    if isinstance(keyword, str):
        return f"fails the '{_shown(keyword)[1:-1]}' rule"
    return "is not allowed here"


def _keyword_value(schema: Mapping[str, Any], path: list[Any]) -> Any:
    node: Any = schema
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


# -- outside the request path: jsonschema ---------------------------------------------------


def _canonical(value: Any) -> Any:
    """A hashable form under which two JSON values are equal exactly when JSON Schema's
    equality says so: numbers by value (1 equals 1.0), booleans apart from numbers, objects
    whatever their key order."""
    if value is True or value is False:
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, Mapping):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("other", id(value))


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """uniqueItems in linear time (jsonschema compares every pair of objects or arrays)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    if len({_canonical(item) for item in instance}) != len(instance):
        yield exceptions.ValidationError("has non-unique elements")


def _multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """multipleOf on exact decimal values, as jsonschema-rs decides it (0.3 is a multiple of
    0.1); jsonschema divides floats, and raises OverflowError for an integer past a float's
    range."""
    if not validator.is_type(instance, "number"):
        return
    if _exact(instance) / _exact(step) % 1:
        yield exceptions.ValidationError("is not a multiple")


def _exact(number: float) -> Fraction:
    """An integral number as the exact integer it is; a fraction as the decimal its shortest
    ``repr`` writes (0.1 is a tenth, not the binary float nearest it)."""
    if isinstance(number, int) or number.is_integer():
        return Fraction(number)
    return Fraction(repr(number))


@functools.cache
def _fallback_class(validator_class: type[Any]) -> type[Any]:
    return validators.extend(
        validator_class, {"uniqueItems": _unique_items, "multipleOf": _multiple_of}
    )


# At most this many errors are weighed to choose the one a refusal names (jsonschema's
# best_match); a message of many errors is never enumerated in full.
_ERRORS_WEIGHED = 16


class CompiledSchema:
    """A host schema compiled once; ``violation`` answers None or the first failure, named.

    jsonschema-rs decides, and its first error is the one named. Only a schema it cannot
    compile is validated by jsonschema, which ``unbounded_reasons`` lists and the startup
    checks refuse for every input schema: what is left are output schemas, the host's own.
    """

    __slots__ = ("_fallback", "_rs", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self._fallback: Any = None
        try:
            self._rs: Any = _rs_validator(schema)
        except Exception:
            self._rs = None
            validator_class = _fallback_class(dialect_of(schema) or Draft202012Validator)
            self._fallback = validator_class(schema, registry=_NO_RETRIEVAL)

    @property
    def bounded(self) -> bool:
        """Whether the linear-time engine validates against this schema."""
        return self._rs is not None

    def violation(self, instance: Any, root: str) -> str | None:
        rs = self._rs
        if rs is None:
            return self._fallback_violation(instance, root)
        try:
            rs.validate(instance)  # one pass: as fast as is_valid when valid (0.1 µs)
        except _rs_module().ValidationError as error:
            return f"{echo.path(root, error.instance_path)}: {_rs_rule_text(error, self.schema)}"
        except UnicodeEncodeError:
            # A lone surrogate ("\ud800"), which rs cannot read where a rule reads the text.
            # The decoder refuses a client's; this is a host's structured output.
            return f"{root}: holds text that is not valid Unicode (a lone surrogate)"
        except (ValueError, TypeError, OverflowError):
            return f"{root}: holds a value that is not JSON"
        return None

    def _fallback_violation(self, instance: Any, root: str) -> str | None:
        errors = self._fallback.iter_errors(instance)
        first = next(errors, None)
        if first is None:
            return None
        weighed = [first, *itertools.islice(errors, _ERRORS_WEIGHED - 1)]
        return describe(exceptions.best_match(weighed), root)


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
    if rule in _COUNTS:
        return _count_rule(rule, expected)
    if rule in simple:
        return simple[rule]
    if rule is None or rule is False:
        return "is not allowed here"
    return f"fails the '{rule}' rule"


def describe(error: exceptions.ValidationError, root: str) -> str:
    """'<root>/<path>: <what the rule demands>' with no part of the offending value."""
    return f"{echo.path(root, error.absolute_path)}: {_rule_text(error)}"
