"""Host patterns run in linear time: a crafted argument cannot make validation backtrack.

``^(a+)+$`` against ``"a" * 60 + "!"`` makes Python's backtracking ``re`` try about 2**60
ways to split the a's; on jsonschema-rs's engine (Rust's ``regex`` crate) it is one pass.
Each check runs in a forked child that gets at most ``WITHIN`` seconds: without the
linear-time engine it would not finish for years, with it it takes microseconds, so the
bound says nothing about the machine's speed. A pattern that engine cannot run is refused
at startup (``unbounded_reasons``, ``beammcp.E021``).
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from typing import Any

import pytest

from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.schema import CompiledSchema, schema_problems, unbounded_reasons

from .conftest import MemoryCatalog, call, make_server, request

WITHIN = 20.0
CATASTROPHIC = "^(a+)+$"
ATTACK = "a" * 60 + "!"
SECRET = "sk-live-NEVER-ECHO-ME"


def within_bound(work: Callable[[], Any]) -> Any:
    """Run ``work`` in a forked child and return its result; fail if it outlasts ``WITHIN``.

    A thread would not do: Python's ``re`` holds the GIL for a whole match, so a thread
    stuck in one never lets the waiting thread's timeout fire. A child can be killed.
    """
    fork = multiprocessing.get_context("fork")
    receiving, sending = fork.Pipe(duplex=False)

    def child() -> None:
        try:
            sending.send((True, work()))
        except BaseException as error:  # reported to the parent, which fails the test
            sending.send((False, repr(error)))

    worker = fork.Process(target=child, daemon=True)
    worker.start()
    try:
        assert receiving.poll(WITHIN), f"validation still running after {WITHIN} s: it backtracks"
        finished, result = receiving.recv()
    finally:
        worker.kill()
        worker.join()
    assert finished, result
    return result


def violation(schema: dict[str, Any], instance: Any) -> str | None:
    assert schema_problems(schema) == []
    return CompiledSchema(schema).violation(instance, "arguments")


def bounded_violation(schema: dict[str, Any], instance: Any) -> str | None:
    """``violation`` for an adversarial instance, which must finish within ``WITHIN``."""
    return within_bound(lambda: violation(schema, instance))


def string_property(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}


# -- catastrophic patterns are bounded ------------------------------------------------------


@pytest.mark.parametrize(
    "pattern", [CATASTROPHIC, "^(a|aa)+$", r"^(\w+\s?)*$", "^(a|a?)+$", "^([a-z]*)*$"]
)
def test_a_catastrophic_pattern_refuses_a_long_adversarial_string_at_once(pattern):
    expected = f"arguments/code: must match the pattern {json.dumps(pattern)}"
    assert bounded_violation(string_property(pattern), {"code": ATTACK}) == expected
    assert violation(string_property(pattern), {"code": "a" * 60}) is None


def test_a_catastrophic_pattern_reached_through_a_ref_is_bounded_too():
    schema = {
        "type": "object",
        "properties": {"code": {"$ref": "#/$defs/code"}},
        "$defs": {"code": {"type": "string", "pattern": CATASTROPHIC}},
    }
    assert bounded_violation(schema, {"code": ATTACK}) == (
        'arguments/code: must match the pattern "^(a+)+$"'
    )


def test_a_catastrophic_pattern_in_a_draft_7_schema_is_bounded_too():
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **string_property(CATASTROPHIC)}
    assert bounded_violation(schema, {"code": ATTACK}) is not None
    assert violation(schema, {"code": "aaa"}) is None


def test_a_property_name_against_catastrophic_pattern_properties_is_refused_at_once():
    schema = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
    }
    assert bounded_violation(schema, {ATTACK: 1}) == (
        "arguments: has a property the schema does not allow"
    )
    assert violation(schema, {"a" * 60: "not an integer"}) == (
        "arguments/" + "a" * 60 + ": must be of type integer"
    )
    assert violation(schema, {"a" * 60: 1}) is None


def test_a_property_name_against_a_catastrophic_additional_properties_schema_is_bounded():
    schema = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {}},
        "additionalProperties": {"type": "string"},
    }
    assert bounded_violation(schema, {ATTACK: 5}) == "arguments/*: must be of type string"


def test_a_property_name_against_a_catastrophic_property_names_pattern_is_refused_at_once():
    schema = {"type": "object", "propertyNames": {"pattern": CATASTROPHIC}}
    # The name is the instance that propertyNames validates: the path stays at the object.
    assert bounded_violation(schema, {ATTACK: 1}) == (
        "arguments: has a property name the schema does not allow"
    )
    assert violation(schema, {"aaaa": 1}) is None


def test_a_tools_call_with_an_adversarial_argument_is_a_tool_error_and_the_tool_never_runs():
    catalog = MemoryCatalog()
    catalog.tools = (*catalog.tools, ToolSpec("lookup", string_property(CATASTROPHIC)))
    catalog.handlers["lookup"] = lambda arguments, context: "looked up"
    server = make_server(catalog)
    message = request("tools/call", {"name": "lookup", "arguments": {"code": ATTACK}})
    reply = within_bound(lambda: call(server, message))
    result = reply["result"]
    assert result["isError"] is True
    assert 'arguments/code: must match the pattern "^(a+)+$"' in result["content"][0]["text"]
    assert catalog.calls == []


# -- patterns only a backtracking engine runs: refused at startup --------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"^(ab)\1$",  # a backreference
        r"^(?!admin$)[a-z]+$",  # a negative lookahead
        r"^[a-z.]+(?<!\.tmp)$",  # a negative lookbehind
        r"^end\Z",  # Python's end-of-text
    ],
)
def test_a_pattern_the_linear_engine_cannot_run_makes_the_schema_unbounded(pattern):
    (reason,) = unbounded_reasons(string_property(pattern))
    assert "/properties/code/pattern" in reason
    assert "linear-time engine" in reason


def test_every_unbounded_pattern_is_named_by_its_json_pointer_and_no_other():
    schema = {
        "type": "object",
        "properties": {
            "linear": {"type": "string", "pattern": CATASTROPHIC},
            "a/b": {"type": "string", "pattern": r"(x)\1"},
            "list": {"type": "array", "items": {"pattern": r"(?=y)y"}},
        },
        "patternProperties": {"^x-(?=z)": {}, "^plain-": {}},
        "$defs": {"d": {"pattern": r"(?<=q)r"}},
    }
    named = [reason.split(" at ", 1)[1].split(" ", 1)[0] for reason in unbounded_reasons(schema)]
    assert sorted(named) == [
        "/$defs/d/pattern",
        "/patternProperties/^x-(?=z)",
        "/properties/a~1b/pattern",
        "/properties/list/items/pattern",
    ]


def test_a_schema_whose_patterns_all_run_in_linear_time_is_bounded():
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": CATASTROPHIC}},
        "patternProperties": {r"^\d+$": {}},
        "propertyNames": {"pattern": r"^\w+$"},
        "examples": [{"pattern": r"(x)\1"}],  # instance data, not a schema
    }
    assert unbounded_reasons(schema) == []
    assert CompiledSchema(schema).bounded


def test_pattern_properties_beside_unevaluated_properties_run_in_linear_time_too():
    schema = {
        "type": "object",
        "patternProperties": {"^x-": {}},
        "unevaluatedProperties": False,
    }
    assert unbounded_reasons(schema) == []
    assert violation(schema, {"x-a": 1}) is None
    assert violation(schema, {"y": 1}) is not None


# -- ECMA-262 meaning, refusals without values ------------------------------------------------


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
@pytest.mark.parametrize(
    ("pattern", "text", "valid"),
    [
        (r"^\d+$", "123", True),
        (r"^\d+$", "\u0663", False),  # ARABIC-INDIC DIGIT THREE: \d is ASCII in ECMA-262
        (r"^\w+$", "\u00e9", False),  # \w is ASCII in ECMA-262
        (r"^\s+$", "\u00a0\u2028\ufeff\x0b", True),  # \s is ECMA's Unicode whitespace
        (r"^\S+$", "a\u00a0b", False),
        (r"^[\s\S]*$", "any\nthing", True),
        (r"^abc$", "abc\n", False),  # $ is the end, not "before a final newline"
        (r"^\u00e9+$", "\u00e9\u00e9", True),  # \uXXXX is a code point
        (r"^[[:alpha:]]$", "[]", True),  # no POSIX classes: "[" is a literal in a class
        (r"^[\b]$", "\b", True),  # \b in a class is backspace
        (r"^[]a]+$", "]a", True),
    ],
)
def test_patterns_keep_their_ecma_262_meaning(pattern, text, valid):
    assert (violation(string_property(pattern), {"code": text}) is None) is valid


def test_a_string_with_a_lone_surrogate_a_pattern_must_read_is_refused_by_name():
    # JSON admits "\ud800"; it is not text a regular expression engine can read.
    assert violation(string_property("^a.b$"), {"code": "a\ud800b"}) == (
        "arguments: holds text that is not valid Unicode (a lone surrogate)"
    )


def test_refusals_name_the_path_and_the_rule_never_the_value():
    refusals = [
        violation(string_property(CATASTROPHIC), {"code": SECRET}),
        violation(
            {"type": "object", "patternProperties": {"^x$": {}}, "additionalProperties": False},
            {SECRET: 1},
        ),
        violation({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}, {SECRET: 1}),
    ]
    assert all(refusal is not None and refusal.startswith("arguments") for refusal in refusals)
    assert all(SECRET not in refusal and "NEVER" not in refusal for refusal in refusals)
