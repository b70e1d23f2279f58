"""The dialects docs/host-contract.md promises: 2020-12 by default, older drafts by $schema."""

import pytest

from beammcp_django.protocol.schema import CompiledSchema, schema_problems

DRAFTS = {
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}


@pytest.mark.parametrize("dialect", sorted(DRAFTS))
def test_a_declared_draft_is_accepted_and_enforced(dialect):
    schema = {
        "$schema": DRAFTS[dialect],
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 3}},
    }
    assert schema_problems(schema) == []
    compiled = CompiledSchema(schema)
    assert compiled.violation({"n": 2}, "arguments") is None
    assert compiled.violation({"n": 4}, "arguments") == "arguments/n: must be <= 3"


def test_a_draft_4_exclusive_maximum_keeps_its_boolean_meaning():
    schema = {
        "$schema": DRAFTS["draft-04"],
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 3, "exclusiveMaximum": True}},
    }
    assert schema_problems(schema) == []
    assert CompiledSchema(schema).violation({"n": 3}, "arguments") is not None


def test_a_schema_without_dialect_is_2020_12_so_prefix_items_applies():
    schema = {"type": "object", "properties": {"pair": {"prefixItems": [{"type": "string"}]}}}
    compiled = CompiledSchema(schema)
    assert compiled.violation({"pair": ["a"]}, "arguments") is None
    assert (
        compiled.violation({"pair": [1]}, "arguments") == "arguments/pair/0: must be of type string"
    )


def test_an_unknown_dialect_is_a_startup_problem():
    problems = schema_problems({"$schema": "https://example.com/my-dialect", "type": "object"})
    assert problems == ["declares a $schema dialect this server does not support"]


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (5, "arguments/n: must be > 5"),
        (4, "arguments/n: must be > 5"),
        (9, "arguments/n: must be < 9"),
    ],
)
def test_a_draft_4_exclusive_bound_is_named_as_strict(value, named):
    schema = CompiledSchema(
        {
            "$schema": DRAFTS["draft-04"],
            "type": "object",
            "properties": {
                "n": {
                    "type": "number",
                    "minimum": 5,
                    "exclusiveMinimum": True,
                    "maximum": 9,
                    "exclusiveMaximum": True,
                }
            },
        }
    )
    assert schema.violation({"n": value}, "arguments") == named


def test_a_draft_4_inclusive_bound_is_named_as_inclusive():
    schema = CompiledSchema(
        {"$schema": DRAFTS["draft-04"], "type": "object", "properties": {"n": {"minimum": 5}}}
    )
    assert schema.violation({"n": 4}, "arguments") == "arguments/n: must be >= 5"
