"""x-mcp-header annotations: which are valid, and how a header value is held against the body."""

import pytest

from beammcp_django.protocol.header_params import header_parameters, header_problems


def schema(**properties):
    return {"type": "object", "properties": properties}


def test_a_top_level_string_property_is_mirrored_under_its_lower_cased_header():
    (parameter,) = header_parameters(schema(region={"type": "string", "x-mcp-header": "Region"}))
    assert parameter.header == "mcp-param-region"
    assert parameter.path == ("region",)
    assert parameter.body_value({"region": "eu"}) == "eu"


def test_a_nested_property_reached_through_properties_alone_is_valid():
    nested = schema(
        where={
            "type": "object",
            "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}},
        }
    )
    assert header_problems(nested) == []
    (parameter,) = header_parameters(nested)
    assert parameter.body_value({"where": {"zone": 3}}) == 3
    assert parameter.body_value({"where": "flat"}) is None


@pytest.mark.parametrize(
    ("annotated", "fault"),
    [
        ({"type": "number", "x-mcp-header": "N"}, "not string, integer or boolean"),
        ({"type": "object", "x-mcp-header": "O"}, "not string, integer or boolean"),
        ({"type": "string", "x-mcp-header": ""}, "RFC 9110 token"),
        ({"type": "string", "x-mcp-header": "Has Space"}, "RFC 9110 token"),
        ({"type": "string", "x-mcp-header": "Line\r\nBreak"}, "RFC 9110 token"),
    ],
)
def test_an_invalid_annotation_is_a_startup_problem_naming_the_property(annotated, fault):
    (problem,) = header_problems(schema(p=annotated))
    assert fault in problem
    assert " p " in problem or "at p" in problem or "RFC 9110" in problem


def test_an_annotation_under_items_or_composition_is_not_reachable():
    inside_items = schema(list={"type": "array", "items": {"type": "string", "x-mcp-header": "I"}})
    inside_any_of = {"type": "object", "anyOf": [schema(a={"type": "string", "x-mcp-header": "A"})]}
    assert any("not reached" in p for p in header_problems(inside_items))
    assert any("not reached" in p for p in header_problems(inside_any_of))
    assert header_parameters(inside_items) == ()


def test_two_annotations_equal_case_insensitively_are_refused():
    problems = header_problems(
        schema(
            a={"type": "string", "x-mcp-header": "Region"},
            b={"type": "string", "x-mcp-header": "REGION"},
        )
    )
    assert any("repeats 'Region'" in p for p in problems)


def test_an_annotation_key_inside_const_data_is_not_an_annotation():
    assert header_problems(schema(a={"const": {"x-mcp-header": 5}})) == []


@pytest.mark.parametrize(
    ("kind", "header", "body", "equal"),
    [
        ("string", "eu-west", "eu-west", True),
        ("string", "EU-WEST", "eu-west", False),
        ("integer", "42", 42, True),
        ("integer", "42.0", 42, True),
        ("integer", "42.5", 42, False),
        ("integer", "x", 42, False),
        ("integer", "1", True, False),
        ("boolean", "true", True, True),
        ("boolean", "false", False, True),
        ("boolean", "True", True, False),
        ("boolean", "1", True, False),
    ],
)
def test_header_values_compare_as_the_spec_says(kind, header, body, equal):
    (parameter,) = header_parameters(schema(v={"type": kind, "x-mcp-header": "V"}))
    assert parameter.matches(header, body) is equal
