"""Host schemas checked once, arguments validated, violations described without values."""

from __future__ import annotations

import json
import socket

import pytest
from referencing.exceptions import Unresolvable

from beammcp_django.protocol.schema import CompiledSchema, dialect_of, schema_problems

SECRET = "sk-live-NEVER-ECHO-ME"


def violation(schema, instance, root="arguments"):
    assert schema_problems(schema) == []
    return CompiledSchema(schema).violation(instance, root)


@pytest.fixture
def no_network(monkeypatch):
    """Fail the test if anything tries to open a socket."""

    def refuse(*args, **kwargs):
        raise AssertionError("the schema code tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


# -- checking the host's schemas -----------------------------------------------------------


def test_a_schema_without_dollar_schema_is_json_schema_2020_12():
    from jsonschema import Draft202012Validator

    assert dialect_of({"type": "object"}) is Draft202012Validator


def test_a_declared_draft_7_schema_uses_the_draft_7_validator():
    from jsonschema import Draft7Validator

    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert dialect_of(schema) is Draft7Validator
    assert schema_problems(schema) == []


def test_a_plain_object_schema_has_no_problems():
    assert schema_problems({"type": "object", "additionalProperties": False}) == []


def test_a_declared_dialect_the_server_does_not_know_is_a_problem():
    problems = schema_problems({"$schema": "https://example.com/my-dialect", "type": "object"})
    assert problems == ["declares a $schema dialect this server does not support"]


@pytest.mark.parametrize("schema", [[], "object", 5, None])
def test_a_schema_that_is_not_an_object_is_a_problem(schema):
    assert schema_problems(schema) == ["is not a JSON object"]


def test_an_invalid_schema_is_a_problem_naming_where():
    problems = schema_problems({"type": "object", "properties": {"n": {"type": "integr"}}})
    assert len(problems) == 1
    assert problems[0].startswith("is not a valid JSON Schema at properties/n/type")


def test_a_local_ref_that_resolves_is_not_a_problem():
    schema = {
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/point"}},
        "$defs": {"point": {"type": "array", "items": {"type": "number"}}},
    }
    assert schema_problems(schema) == []
    assert violation(schema, {"point": [1, "x"]}) == "arguments/point/1: must be of type number"


def test_a_local_ref_that_does_not_resolve_is_a_problem():
    schema = {"type": "object", "properties": {"p": {"$ref": "#/$defs/missing"}}}
    assert schema_problems(schema) == [
        "has an unresolvable $ref '#/$defs/missing' (remote references are never fetched)"
    ]


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schemas/point.json",
        "http://127.0.0.1:9/x.json",
        "point.json",
        "file:///etc/passwd",
    ],
)
def test_a_remote_ref_is_a_problem_and_is_never_fetched(no_network, ref):
    schema = {"type": "object", "properties": {"p": {"$ref": ref}}}
    assert schema_problems(schema) == [
        f"has an unresolvable $ref '{ref}' (remote references are never fetched)"
    ]


def test_validating_against_a_schema_with_a_remote_ref_never_fetches_it(no_network):
    schema = {"type": "object", "properties": {"p": {"$ref": "https://example.com/p.json"}}}
    compiled = CompiledSchema(schema)
    with pytest.raises(Unresolvable):
        compiled.violation({"p": 1}, "arguments")


@pytest.mark.parametrize("declared", [[], {}, 7])
def test_a_dollar_schema_that_is_not_a_string_is_a_problem_not_a_crash(declared):
    assert schema_problems({"$schema": declared, "type": "object"}) != []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"const": {"$ref": "#/nowhere"}}}},
        {"enum": [{"$ref": "https://example.com/a"}]},
        {"type": "object", "default": {"$ref": "other.json"}},
        {"type": "object", "examples": [{"$ref": "#/nowhere"}]},
    ],
    ids=["const", "enum", "default", "examples"],
)
def test_a_dollar_ref_key_inside_instance_data_in_the_schema_is_not_a_reference(schema):
    assert schema_problems(schema) == []


# -- describing violations -----------------------------------------------------------------


def test_a_valid_instance_has_no_violation():
    assert violation({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}) is None


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer"}, "must be of type integer"),
        ({"type": ["integer", "null"]}, "must be of type integer or null"),
        ({"type": "string", "maxLength": 3}, "must be at most 3 characters long"),
        ({"type": "string", "pattern": "^[0-9]+$"}, 'must match the pattern "^[0-9]+$"'),
        ({"enum": ["red", "green"]}, 'must be one of ["red","green"]'),
        ({"const": "fixed"}, 'must equal "fixed"'),
        ({"not": {"type": "string"}}, "matches a schema it must not match"),
        ({"type": "string", "format": "email", "minLength": 100}, "at least 100 characters"),
        (
            {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]},
            "arguments/v",
        ),
    ],
)
def test_a_violation_names_the_path_and_the_rule_but_never_the_value(schema, expected):
    wrapped = {"type": "object", "properties": {"v": schema}}
    text = violation(wrapped, {"v": SECRET})
    assert text.startswith("arguments/v")
    assert expected in text
    assert SECRET not in text
    assert "NEVER" not in text


@pytest.mark.parametrize(
    ("schema", "instance", "expected"),
    [
        ({"minimum": 10}, 3, "must be >= 10"),
        ({"maximum": 10}, 30, "must be <= 10"),
        ({"exclusiveMinimum": 0}, 0, "must be > 0"),
        ({"exclusiveMaximum": 0}, 0, "must be < 0"),
        ({"multipleOf": 5}, 3, "must be a multiple of 5"),
        ({"minItems": 2}, [1], "must have at least 2 items"),
        ({"maxItems": 1}, [1, 2], "must have at most 1 item"),
        ({"maxItems": 2}, [1, 2, 3], "must have at most 2 items"),
        ({"minLength": 1}, "", "must be at least 1 character long"),
        ({"uniqueItems": True}, [1, 1], "must not repeat an item"),
        ({"minProperties": 1}, {}, "must have at least 1 property"),
        ({"contains": {"type": "string"}}, [1], "must contain an item the schema describes"),
    ],
)
def test_each_rule_is_described_in_words(schema, instance, expected):
    wrapped = {"type": "object", "properties": {"v": schema}}
    assert violation(wrapped, {"v": instance}) == f"arguments/v: {expected}"


def test_a_false_subschema_is_described_without_the_value():
    text = violation({"type": "object", "properties": {"v": False}}, {"v": SECRET})
    assert text.endswith(": is not allowed here")
    assert SECRET not in text


def test_a_false_subschema_violation_names_its_path():
    text = violation({"type": "object", "properties": {"v": False}}, {"v": SECRET})
    assert text == "arguments/v: is not allowed here"


def test_a_missing_required_property_is_named_from_the_schema():
    schema = {"type": "object", "required": ["start", "end"]}
    assert violation(schema, {"start": 1}) == 'arguments: is missing the required property "end"'


def test_an_additional_property_is_refused_without_naming_it():
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    text = violation(schema, {SECRET: 1})
    assert text == "arguments: has a property the schema does not allow"


def test_a_property_name_with_odd_characters_is_not_echoed_in_the_path():
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    odd = "<script>alert(1)</script>"
    assert violation(schema, {odd: "x"}) == "arguments/*: must be of type integer"


def test_array_indices_appear_in_the_path():
    schema = {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
        },
    }
    assert (
        violation(schema, {"rows": [[1], [2, "x"]]}) == "arguments/rows/1/1: must be of type number"
    )


def test_the_root_name_is_the_callers():
    schema = {"type": "object"}
    assert (
        violation(schema, [], root="structuredContent")
        == "structuredContent: must be of type object"
    )


def test_a_long_schema_value_is_shortened_in_the_description():
    choices = [f"choice-{number:03}" for number in range(100)]
    text = violation({"type": "object", "properties": {"v": {"enum": choices}}}, {"v": "x"})
    assert text.endswith("...")
    assert len(text) < 200


def test_a_description_never_contains_a_nested_secret_whatever_the_rule():
    schema = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "object",
                "properties": {"inner": {"type": "array", "items": {"type": "integer"}}},
            }
        },
    }
    text = violation(schema, {"outer": {"inner": [1, SECRET]}})
    assert text == "arguments/outer/inner/1: must be of type integer"
    assert SECRET not in json.dumps(text)
