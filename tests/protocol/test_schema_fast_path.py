"""The jsonschema-rs fast path accepts exactly what jsonschema accepts, for every keyword it
is trusted with; schemas using any other keyword never take it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from beammcp_django.protocol.schema import CompiledSchema

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 5}},
        "required": ["text"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "city": {"enum": ["oslo", "lisbon", 1, True, None]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        },
        "required": ["city"],
        "minProperties": 1,
        "maxProperties": 3,
        "dependentRequired": {"ratio": ["days"]},
    },
    {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "boolean"}],
        "items": {"type": ["integer", "null"]},
        "minItems": 1,
        "maxItems": 4,
        "uniqueItems": True,
    },
    {
        "anyOf": [{"type": "string"}, {"type": "object", "required": ["a"]}],
        "not": {"const": "forbidden"},
    },
    {
        "oneOf": [{"type": "integer"}, {"type": "number", "minimum": 10}],
        "if": {"type": "integer"},
        "then": {"maximum": 100},
        "else": {"minimum": 0},
    },
    {
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/point"}, "all": {"allOf": [{"type": "array"}]}},
        "additionalProperties": {"type": "string", "format": "email"},
    },
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"tags": {"type": "array", "items": [{"type": "string"}]}},
        "definitions": {"n": {"type": "number"}},
        "additionalProperties": {"$ref": "#/definitions/n"},
    },
]

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["oslo", "lisbon", "forbidden", "a", "x"]),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.sampled_from(["text", "city", "days", "ratio", "a", "x", "at", "all", "tags", "z"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def reference(schema: dict[str, Any]) -> Any:
    validator = Draft7Validator if "draft-07" in schema.get("$schema", "") else Draft202012Validator
    return validator(schema)


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_every_trusted_keyword_schema_gets_the_fast_path(index):
    assert CompiledSchema(SCHEMAS[index])._fast is not None


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=JSON)
def test_the_fast_path_accepts_exactly_what_jsonschema_accepts(index, instance):
    schema = SCHEMAS[index]
    assert CompiledSchema(schema)._fast.is_valid(instance) is reference(schema).is_valid(instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a+$"},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"type": "number", "multipleOf": 0.1},
        {"type": "object", "unevaluatedProperties": False},
        {"type": "array", "contains": {"type": "string"}},
        {"type": "object", "propertyNames": {"maxLength": 3}},
        {"type": "object", "properties": {"deep": {"items": {"pattern": "a"}}}},
    ],
    ids=["pattern", "patternProperties", "multipleOf", "unevaluated", "contains", "names", "deep"],
)
def test_a_schema_with_an_untrusted_keyword_is_validated_by_jsonschema_alone(schema):
    assert CompiledSchema(schema)._fast is None


def test_a_refusal_is_still_described_by_jsonschema_naming_path_and_rule():
    compiled = CompiledSchema(SCHEMAS[0])
    assert compiled.violation({"text": "hello"}, "arguments") is None
    message = compiled.violation({"text": ""}, "arguments")
    assert message is not None and "arguments/text" in message and "hello" not in message


def test_a_lone_surrogate_the_fast_path_cannot_take_falls_back_to_jsonschema():
    compiled = CompiledSchema(SCHEMAS[0])
    assert compiled.violation({"text": "\ud800"}, "arguments") is None
