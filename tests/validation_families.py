"""The costliest arguments of each JSON Schema keyword family, at a size of your choosing.

Each family is a tool input schema and two argument objects that fill a ``tools/call``
message to about ``size`` bytes: one the schema accepts, and one it refuses at the last place
it looks (the last item, a duplicate at the end, the one extra property). These are the
shapes that made jsonschema's time grow faster than its input (uniqueItems compares every
pair; every error is enumerated to pick one; anyOf collects each alternative's errors),
and the ones that are merely long. ``tests/protocol/test_validation_cost.py`` runs each at
64 KiB under a generous bound; ``bench/validation.py`` times each at the 1 MiB cap against
jsonschema in the same run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The JSON of {"a": ...} inside a tools/call message, less its payload: what a family fills.
_ENVELOPE = 400


@dataclass(frozen=True)
class Family:
    name: str
    schema: dict[str, Any]
    # Build the value of argument "a" from a number of repetitions: accepted, or refused.
    build: Callable[[int, bool], Any]

    def arguments(self, size: int, refused: bool) -> dict[str, Any]:
        """Arguments about ``size`` bytes long once encoded, at most ``size``."""
        one = len(_encoded({"a": self.build(1, refused)}))
        two = len(_encoded({"a": self.build(2, refused)}))
        unit = max(1, two - one)
        count = max(1, (size - _ENVELOPE - one) // unit + 1)
        arguments = {"a": self.build(count, refused)}
        while len(_encoded(arguments)) > size - _ENVELOPE and count > 1:
            count = max(1, count * 9 // 10)
            arguments = {"a": self.build(count, refused)}
        return arguments


def _encoded(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _object(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **more}


def _items(schema: dict[str, Any], **more: Any) -> dict[str, Any]:
    return _object({"a": {"type": "array", "items": schema, **more}})


def _last(good: Any, bad: Any) -> Callable[[int, bool], list[Any]]:
    """``n`` good items, the last one bad when refused."""
    return lambda n, refused: [good] * (n - 1) + [bad if refused else good]


def _unique(make: Callable[[int], Any]) -> Callable[[int, bool], list[Any]]:
    """``n`` distinct items, the last repeating the first when refused."""
    return lambda n, refused: [make(i) for i in range(n - 1)] + [make(0 if refused else n - 1)]


def _keys(extra: dict[str, Any]) -> Callable[[int, bool], dict[str, Any]]:
    """An object of ``n`` keys k0, k1... ``extra`` added to it when refused."""
    return lambda n, refused: {**{f"k{i}": 1 for i in range(n)}, **(extra if refused else {})}


def _capped(cap: int, make: Callable[[int], Any]) -> Callable[[int, bool], Any]:
    """``make(n)`` when refused, ``make(min(n, cap))`` when accepted: a bound on a size."""
    return lambda n, refused: make(n if refused else min(n, cap))


ARRAY = {"type": "array"}
OBJECT = {"type": "object"}
TREE = {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/tree"}}]}

FAMILIES: tuple[Family, ...] = (
    Family("type", _items({"type": "integer"}), _last(1, "x")),
    Family(
        "type, every item wrong",
        _items({"type": "string"}),
        lambda n, refused: [1] * n if refused else ["s"] * n,
    ),
    Family("minimum / maximum", _items({"minimum": 0, "maximum": 9}), _last(5, -1)),
    Family("multipleOf", _items({"type": "number", "multipleOf": 0.01}), _last(0.25, 0.001)),
    Family("enum", _items({"enum": list(range(100))}), _last(42, 500)),
    Family(
        "const",
        _object({"a": {"const": [1, 2, 3]}}),
        lambda n, refused: [1] * n if refused else [1, 2, 3],
    ),
    Family(
        "uniqueItems, objects",
        _object({"a": {**ARRAY, "uniqueItems": True}}),
        _unique(lambda i: {"k": i}),
    ),
    Family(
        "uniqueItems, arrays",
        _object({"a": {**ARRAY, "uniqueItems": True}}),
        _unique(lambda i: [i, i]),
    ),
    Family(
        "uniqueItems, numbers",
        _object({"a": {**ARRAY, "uniqueItems": True}}),
        _unique(lambda i: i + 0.5),
    ),
    Family(
        "minItems / maxItems",
        _object({"a": {**ARRAY, "maxItems": 1000}}),
        _capped(1000, lambda n: [0] * n),
    ),
    Family(
        "pattern, one long string",
        _object({"a": {"type": "string", "pattern": "^(a+)+$"}}),
        lambda n, refused: "a" * n + ("!" if refused else ""),
    ),
    Family(
        "pattern, each item",
        _items({"type": "string", "pattern": "^[a-z]+[0-9]*$"}),
        _last("abc1", "!"),
    ),
    Family(
        "minLength / maxLength",
        _object({"a": {"type": "string", "maxLength": 1000}}),
        _capped(1000, lambda n: "\u00e9" * n),
    ),
    Family("format (annotation)", _items({"type": "string", "format": "email"}), _last("a", 1)),
    Family(
        "additionalProperties, a schema",
        _object({"a": {**OBJECT, "additionalProperties": {"type": "integer"}}}),
        _keys({"z": "x"}),
    ),
    Family(
        "additionalProperties: false",
        _object({"a": {**OBJECT, "properties": {"k": {}}, "additionalProperties": False}}),
        lambda n, refused: {f"x{i}": 1 for i in range(n)} if refused else {"k": [0] * n},
    ),
    Family(
        "required", _items({**OBJECT, "required": ["a", "b"]}), _last({"a": 1, "b": 2}, {"a": 1})
    ),
    Family(
        "patternProperties",
        _object(
            {"a": {**OBJECT, "patternProperties": {"^k[0-9]+$": {}}, "additionalProperties": False}}
        ),
        _keys({"z": 1}),
    ),
    Family(
        "propertyNames",
        _object({"a": {**OBJECT, "propertyNames": {"pattern": "^k"}}}),
        _keys({"z": 1}),
    ),
    Family(
        "minProperties / maxProperties",
        _object({"a": {**OBJECT, "maxProperties": 1000}}),
        _capped(1000, lambda n: {f"k{i}": 1 for i in range(n)}),
    ),
    Family(
        "dependentRequired",
        _items({**OBJECT, "dependentRequired": {"a": ["b"]}}),
        _last({"a": 1, "b": 2}, {"a": 1}),
    ),
    Family(
        "dependentSchemas",
        _items({**OBJECT, "dependentSchemas": {"a": {"required": ["b"]}}}),
        _last({"a": 1, "b": 2}, {"a": 1}),
    ),
    Family(
        "anyOf",
        _items({"anyOf": [{"type": "string"}, {**OBJECT, "required": ["x"]}, {"minimum": 0}]}),
        _last(1, -1),
    ),
    Family("oneOf", _items({"oneOf": [{"type": "integer"}, {"minimum": 0}]}), _last(-1, 1)),
    Family(
        "allOf",
        _items({"allOf": [{"type": "integer"}, {"minimum": 0}, {"maximum": 9}]}),
        _last(5, 10),
    ),
    Family("not", _items({"not": {"type": "string"}}), _last(1, "s")),
    Family(
        "if / then / else",
        _items({"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}}),
        _last(1, -1),
    ),
    Family(
        "prefixItems / items",
        _object(
            {"a": {**ARRAY, "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}}
        ),
        lambda n, refused: ["s", *([1] * (n - 1)), *(["x"] if refused else [])],
    ),
    Family(
        "contains",
        _object({"a": {**ARRAY, "contains": {"const": "needle"}}}),
        lambda n, refused: [1] * n + ([] if refused else ["needle"]),
    ),
    Family(
        "minContains / maxContains",
        _object({"a": {**ARRAY, "contains": {"type": "integer"}, "minContains": 2}}),
        lambda n, refused: ["s"] * n + ([1] if refused else [1, 2]),
    ),
    Family(
        "unevaluatedProperties",
        _object(
            {
                "a": {
                    **OBJECT,
                    "allOf": [{"properties": {"x": {}}}],
                    "unevaluatedProperties": {"type": "integer"},
                }
            }
        ),
        _keys({"z": "s"}),
    ),
    Family(
        "unevaluatedItems",
        _object({"a": {**ARRAY, "prefixItems": [{}], "unevaluatedItems": {"type": "string"}}}),
        _last("s", 1),
    ),
    Family(
        "$ref, recursive",
        {"$defs": {"tree": TREE}, **_object({"a": {"$ref": "#/$defs/tree"}})},
        lambda n, refused: [[[[1, 2], [3]]]] * (n - 1) + [[[["x" if refused else 4]]]],
    ),
)
