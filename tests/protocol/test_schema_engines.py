"""The two engines agree: jsonschema-rs (which validates every request) accepts exactly what
jsonschema (which checks the host's schemas, and validates the output schemas rs cannot
compile) accepts, for every keyword family, integers far past 64 bits included.

Left out by design: a pattern's meaning on non-ASCII text (rs keeps ECMA-262's, Python's
``re`` its own; tests/protocol/test_schema_regex.py holds rs to ECMA), and draft 7's
``contentMediaType``/``contentEncoding`` (asserted by rs, annotations for jsonschema).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from beammcp_django.protocol.schema import CompiledSchema, _fallback_class, unbounded_reasons
from tests.support import examples

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
    {"type": "array", "uniqueItems": True},
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
    {"type": "object", "properties": {"n": {"multipleOf": 3}, "x": {"multipleOf": 0.5}}},
    {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[a-z]{1,3}$"}}},
    {
        "type": "object",
        "patternProperties": {"^x": {"type": "integer"}},
        "additionalProperties": False,
    },
    {"type": "object", "propertyNames": {"maxLength": 1}},
    {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": {"type": "string"}},
    {"type": "array", "prefixItems": [{"type": "integer"}], "unevaluatedItems": False},
    {"type": "array", "contains": {"type": "string"}, "minContains": 1, "maxContains": 2},
    {"type": "object", "dependentSchemas": {"a": {"required": ["x"]}}},
    {"type": "object", "properties": {"v": {"const": 10**30}, "w": {"maximum": 2**70}}},
]

HUGE = st.sampled_from([10**400, -(10**400), 2**64, 2**63 - 1, -(2**63), 10**30, 3 * 10**300])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | HUGE
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.5, 1.5, 3.0, 1e300, -1e-300, 0.1, 0.3])
    | st.text(st.characters(codec="ascii"), max_size=8)
    | st.sampled_from(["oslo", "lisbon", "forbidden", "a", "x", "abc"]),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.sampled_from(
                [
                    "text",
                    "city",
                    "days",
                    "ratio",
                    "a",
                    "x",
                    "xa",
                    "at",
                    "all",
                    "tags",
                    "z",
                    "n",
                    "v",
                    "w",
                    "code",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def reference(schema: dict[str, Any]) -> Any:
    """jsonschema as CompiledSchema falls back to it (uniqueItems hashed, multipleOf exact)."""
    dialect = Draft7Validator if "draft-07" in schema.get("$schema", "") else Draft202012Validator
    return _fallback_class(dialect)(schema)


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_every_family_is_validated_by_the_linear_time_engine(index):
    assert unbounded_reasons(SCHEMAS[index]) == []
    assert CompiledSchema(SCHEMAS[index]).bounded


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=JSON)
@example(instance={"n": 3 * 10**300, "x": 10**400})
@example(instance={"n": 3 * 10**300 + 1})
@example(instance=[10**400, 10**400])
@example(instance=[1, 1.0])
@example(instance={"n": 1.969561678329377e16})  # an integral float: its exact value decides
@example(instance={"x": 0.3, "n": 0.3})
@example(instance={"v": 10**30, "w": 2**70 + 1})
def test_the_engines_accept_exactly_the_same_instances(index, instance):
    schema = SCHEMAS[index]
    accepted = CompiledSchema(schema).violation(instance, "arguments") is None
    assert accepted is reference(schema).is_valid(instance)


def test_a_refusal_names_path_and_rule_never_the_value():
    compiled = CompiledSchema(SCHEMAS[0])
    assert compiled.violation({"text": "hello"}, "arguments") is None
    message = compiled.violation({"text": ""}, "arguments")
    assert message == "arguments/text: must be at least 1 character long"


def test_an_output_schema_rs_cannot_compile_is_validated_by_jsonschema():
    schema = {"type": "object", "properties": {"w": {"type": "string", "pattern": r"^(\w)\1$"}}}
    compiled = CompiledSchema(schema)
    assert not compiled.bounded
    assert compiled.violation({"w": "aa"}, "structuredContent") is None
    assert compiled.violation({"w": "ab"}, "structuredContent") == (
        'structuredContent/w: must match the pattern "^(\\\\w)\\\\1$"'
    )
