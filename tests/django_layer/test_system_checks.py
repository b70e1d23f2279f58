"""System checks: every fault a host can make in its catalog or settings fails ``check``,
with its id from ``beammcp_django.checks.ids`` and a message naming the entry and the offending key.

Each broken catalog lives at module level so ``BEAMMCP["CATALOG"]`` can point at it.
"""

from __future__ import annotations

import io
import socket
import time
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest
from django.core import checks
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from beammcp_django.checks.entries import ANNOTATIONS_TAG
from beammcp_django.checks.ids import check_id
from beammcp_django.conf import DEFAULTS, get_settings
from beammcp_django.protocol.access import Access
from beammcp_django.protocol.catalog import (
    PromptArgument,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolSpec,
)
from beammcp_django.registry import Prompt, Resource, Site, Skill, Tool

OBJECT = {"type": "object", "additionalProperties": False}
ABSENT: Any = object()


def _dispatch(name, arguments, context):
    return "ok"


def _read_resource(match, context):
    return "ok"


def _get_prompt(name, arguments, context):
    return []


def catalog(**overrides: Any) -> SimpleNamespace:
    """A plain catalog with empty lists and every handler; ``ABSENT`` drops an attribute."""
    attributes: dict[str, Any] = {
        "tools": (),
        "resources": (),
        "prompts": (),
        "dispatch": _dispatch,
        "read_resource": _read_resource,
        "get_prompt": _get_prompt,
    }
    attributes.update(overrides)
    return SimpleNamespace(**{k: v for k, v in attributes.items() if v is not ABSENT})


def path(name: str) -> str:
    return f"{__name__}.{name}"


def beammcp_messages(catalog_name: str | None = None, **settings: Any) -> list[Any]:
    values = dict(settings)
    if catalog_name is not None:
        values["CATALOG"] = path(catalog_name)
    with override_settings(BEAMMCP=values):
        return run_checks(tags=["beammcp"])


def with_id(messages: list[Any], check_id: str) -> list[str]:
    return [message.msg for message in messages if message.id == check_id]


def only(messages: list[Any], check_id: str) -> str:
    found = with_id(messages, check_id)
    assert len(found) == 1, [(m.id, m.msg) for m in messages]
    return found[0]


# -- catalogs ------------------------------------------------------------------------------

EMPTY = catalog()
EMPTY_WITHOUT_HANDLERS = SimpleNamespace(tools=(), resources=(), prompts=())
NO_TOOLS = catalog(tools=ABSENT)
NO_RESOURCES = catalog(resources=ABSENT)
NO_PROMPTS = catalog(prompts=ABSENT)
TOOLS_NONE = catalog(tools=None)
TOOLS_STRING = catalog(tools="echo")

WRONG_TOOL_ENTRY = catalog(tools=("echo",))
WRONG_RESOURCE_ENTRY = catalog(resources=(ToolSpec("echo", OBJECT),))
WRONG_PROMPT_ENTRY = catalog(prompts=(ResourceSpec("weather://x", "x"),))
WRONG_PROMPT_ARGUMENT = catalog(prompts=(PromptSpec("brief", arguments=("city",)),))

REPEATED_TOOL = catalog(tools=(ToolSpec("twice", OBJECT), ToolSpec("twice", OBJECT)))
REPEATED_RESOURCE = catalog(
    resources=(ResourceSpec("weather://same", "one"), ResourceSpec("weather://same", "two"))
)
REPEATED_TEMPLATE = catalog(
    resources=(
        ResourceTemplateSpec("weather://{city}", "one"),
        ResourceTemplateSpec("weather://{city}", "two"),
    )
)
REPEATED_PROMPT = catalog(prompts=(PromptSpec("brief"), PromptSpec("brief")))
REPEATED_ARGUMENT = catalog(
    prompts=(PromptSpec("brief", arguments=(PromptArgument("city"), PromptArgument("city"))),)
)

TOOLS_WITHOUT_DISPATCH = catalog(tools=(ToolSpec("echo", OBJECT),), dispatch=ABSENT)
TOOLS_WITH_STRING_DISPATCH = catalog(tools=(ToolSpec("echo", OBJECT),), dispatch="dispatch")
RESOURCES_WITHOUT_READER = catalog(
    resources=(ResourceSpec("weather://x", "x"),), read_resource=ABSENT
)
TEMPLATES_WITHOUT_READER = catalog(
    resources=(ResourceTemplateSpec("weather://{city}", "city"),), read_resource=None
)
PROMPTS_WITHOUT_RENDERER = catalog(prompts=(PromptSpec("brief"),), get_prompt=ABSENT)

LONG_NAME = "a" * 129
NAME_WITH_SPACE = catalog(tools=(ToolSpec("two words", OBJECT),))
NAME_TOO_LONG = catalog(tools=(ToolSpec(LONG_NAME, OBJECT),))
NAME_EMPTY = catalog(tools=(ToolSpec("", OBJECT),))
NAME_LONGEST = catalog(tools=(ToolSpec("a" * 128, OBJECT), ToolSpec("A-z_0.9", OBJECT)))

BAD_TYPE = {"type": "object", "properties": {"x": {"type": 5}}}
UNKNOWN_DIALECT = {"$schema": "https://example.com/no-such-dialect", "type": "object"}
REMOTE_REF_URL = "https://example.com/s.json"
REMOTE_REF = {"type": "object", "properties": {"x": {"$ref": REMOTE_REF_URL}}}
LOCAL_REF = {
    "type": "object",
    "$defs": {"city": {"type": "string"}},
    "properties": {"x": {"$ref": "#/$defs/city"}},
}
INVALID_INPUT_SCHEMA = catalog(tools=(ToolSpec("bad_input", BAD_TYPE),))
INVALID_OUTPUT_SCHEMA = catalog(tools=(ToolSpec("bad_output", OBJECT, output_schema=BAD_TYPE),))
UNKNOWN_DIALECT_SCHEMA = catalog(tools=(ToolSpec("dialect", UNKNOWN_DIALECT),))
REMOTE_REF_SCHEMA = catalog(tools=(ToolSpec("remote", REMOTE_REF),))
LOCAL_REF_SCHEMA = catalog(tools=(ToolSpec("local", LOCAL_REF),))

STRING_ROOT = catalog(tools=(ToolSpec("stringly", {"type": "string"}),))
NO_TYPE_ROOT = catalog(tools=(ToolSpec("untyped", {}),))

BACKTRACKING_PATTERN = catalog(
    tools=(
        ToolSpec(
            "twice",
            {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a+)\\1$"}}},
        ),
        ToolSpec(
            "linear",
            {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}}},
        ),
    )
)
BACKTRACKING_OUTPUT = catalog(
    tools=(
        ToolSpec(
            "answer",
            OBJECT,
            output_schema={
                "type": "object",
                "properties": {"word": {"type": "string", "pattern": "^(a+)\\1$"}},
            },
        ),
    )
)
LIST_OUTPUT = catalog(
    tools=(
        ToolSpec("primes", OBJECT, output_schema={"type": "array", "items": {"type": "integer"}}),
    )
)
TEMPLATE_QUERY = catalog(resources=(ResourceTemplateSpec("weather://search{?q}", "q"),))
TEMPLATE_FRAGMENT = catalog(resources=(ResourceTemplateSpec("weather://page{#x}", "f"),))
TEMPLATE_EXPLODE = catalog(resources=(ResourceTemplateSpec("weather://list/{x*}", "e"),))
TEMPLATE_MULTIPLE = catalog(resources=(ResourceTemplateSpec("weather://pair/{a,b}", "m"),))
SUPPORTED_TEMPLATES = catalog(
    resources=(
        ResourceTemplateSpec("weather://{city}", "one"),
        ResourceTemplateSpec("file:///{+path}", "two"),
    )
)

RELATIVE_BARE = catalog(resources=(ResourceSpec("stations", "bare"),))
RELATIVE_PATH = catalog(resources=(ResourceSpec("/stations", "path"),))
RELATIVE_SPACE = catalog(resources=(ResourceSpec("weather://two words", "space"),))
RELATIVE_EMPTY = catalog(resources=(ResourceSpec("", "empty"),))

NON_CALLABLE_COMPLETE = catalog(complete=5)
NONE_COMPLETE = catalog(complete=None)

HEADER_ON_AN_OBJECT = {
    "type": "object",
    "properties": {"where": {"type": "object", "x-mcp-header": "Where"}},
}
BAD_HEADER_ANNOTATION = catalog(tools=(ToolSpec("located", HEADER_ON_AN_OBJECT),))

MALFORMED_TEMPLATE_FIELD = catalog(resources=(ResourceTemplateSpec(None, "nameless"),))  # type: ignore[arg-type]
MALFORMED_PROMPT_ARGUMENTS = catalog(prompts=(PromptSpec("brief", arguments=None),))  # type: ignore[arg-type]


# -- a registry site with incomplete classes -----------------------------------------------

INCOMPLETE_SITE = Site()


@INCOMPLETE_SITE.register
class NamelessTool(Tool):
    def call(self, arguments, context):
        return "ok"


@INCOMPLETE_SITE.register
class CallLessTool(Tool):
    name = "call_less"


@INCOMPLETE_SITE.register
class UriLessResource(Resource):
    name = "uri_less"

    def read(self, context):
        return "ok"


@INCOMPLETE_SITE.register
class GetLessPrompt(Prompt):
    name = "get_less"


UNNAMED_SITE = Site()  # a class that misses only its name


@UNNAMED_SITE.register
class OnlyNamelessTool(Tool):
    def call(self, arguments, context):
        return "ok"


COMPLETE_SITE = Site()


@COMPLETE_SITE.register
class FineTool(Tool):
    name = "fine"

    def call(self, arguments, context):
        return "ok"


# -- E001 and the catalog lists --------------------------------------------------------------


def test_an_unimportable_catalog_path_is_e001_naming_the_setting():
    with override_settings(BEAMMCP={"CATALOG": "no_such_package.mcp.catalog"}):
        messages = run_checks(tags=["beammcp"])
    message = only(messages, "beammcp.E001")
    assert "BEAMMCP['CATALOG']" in message
    assert "no_such_package" in message


def test_a_catalog_path_naming_a_missing_attribute_is_e001():
    message = only(beammcp_messages("no_such_catalog"), "beammcp.E001")
    assert "no_such_catalog" in message


def test_an_empty_catalog_is_legal_and_warned_of_once():
    (warning,) = beammcp_messages("EMPTY")
    assert warning.id == "beammcp.W009" and warning.level == checks.WARNING
    assert warning.msg == (
        "the MCP catalog serves nothing: no tool, resource or prompt is registered, so "
        "tools/list, resources/list and prompts/list answer empty"
    )
    assert "INSTALLED_APPS" in warning.hint and "SILENCED_SYSTEM_CHECKS" in warning.hint


def test_an_empty_catalog_served_on_purpose_silences_the_warning_by_its_id():
    (warning,) = beammcp_messages("EMPTY")
    assert not warning.is_silenced()
    with override_settings(SILENCED_SYSTEM_CHECKS=["beammcp.W009"]):
        assert warning.is_silenced()


def test_empty_lists_need_no_handlers():
    assert [m.id for m in beammcp_messages("EMPTY_WITHOUT_HANDLERS")] == ["beammcp.W009"]


@pytest.mark.parametrize(
    ("catalog_name", "list_name"),
    [("NO_TOOLS", "tools"), ("NO_RESOURCES", "resources"), ("NO_PROMPTS", "prompts")],
)
def test_an_absent_list_is_e002_naming_the_list(catalog_name, list_name):
    message = only(beammcp_messages(catalog_name), "beammcp.E002")
    assert f"'{list_name}'" in message


@pytest.mark.parametrize("catalog_name", ["TOOLS_NONE", "TOOLS_STRING"])
def test_a_tools_value_that_is_not_a_sequence_is_e002(catalog_name):
    message = only(beammcp_messages(catalog_name), "beammcp.E002")
    assert "'tools'" in message


@pytest.mark.parametrize(
    ("catalog_name", "where", "found"),
    [
        ("WRONG_TOOL_ENTRY", "catalog.tools[0]", "str"),
        ("WRONG_RESOURCE_ENTRY", "catalog.resources[0]", "ToolSpec"),
        ("WRONG_PROMPT_ENTRY", "catalog.prompts[0]", "ResourceSpec"),
    ],
)
def test_an_entry_of_the_wrong_type_is_e003_naming_its_list_and_position(
    catalog_name, where, found
):
    message = only(beammcp_messages(catalog_name), "beammcp.E003")
    assert where in message
    assert found in message


def test_a_prompt_argument_of_the_wrong_type_is_e003_naming_the_prompt_and_key():
    message = only(beammcp_messages("WRONG_PROMPT_ARGUMENT"), "beammcp.E003")
    assert "prompt 'brief'" in message
    assert "'arguments[0]'" in message


# -- repeats ---------------------------------------------------------------------------------


def test_a_repeated_tool_name_is_e004_naming_the_tool_and_key():
    message = only(beammcp_messages("REPEATED_TOOL"), "beammcp.E004")
    assert "tool 'twice'" in message
    assert "'name'" in message


def test_a_repeated_resource_uri_is_e005_naming_the_resource_and_key():
    message = only(beammcp_messages("REPEATED_RESOURCE"), "beammcp.E005")
    assert "resource 'weather://same'" in message
    assert "'uri'" in message


def test_a_repeated_resource_template_is_e006_naming_the_template_and_key():
    message = only(beammcp_messages("REPEATED_TEMPLATE"), "beammcp.E006")
    assert "resource template 'weather://{city}'" in message
    assert "'uri_template'" in message


def test_a_repeated_prompt_name_is_e007_naming_the_prompt_and_key():
    message = only(beammcp_messages("REPEATED_PROMPT"), "beammcp.E007")
    assert "prompt 'brief'" in message
    assert "'name'" in message


def test_a_repeated_prompt_argument_is_e008_naming_the_prompt_and_argument():
    message = only(beammcp_messages("REPEATED_ARGUMENT"), "beammcp.E008")
    assert "prompt 'brief'" in message
    assert "'city'" in message


# -- handlers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("catalog_name", "list_name", "handler"),
    [
        ("TOOLS_WITHOUT_DISPATCH", "tools", "dispatch"),
        ("TOOLS_WITH_STRING_DISPATCH", "tools", "dispatch"),
        ("RESOURCES_WITHOUT_READER", "resources", "read_resource"),
        ("TEMPLATES_WITHOUT_READER", "resources", "read_resource"),
        ("PROMPTS_WITHOUT_RENDERER", "prompts", "get_prompt"),
    ],
)
def test_listed_entries_without_a_callable_handler_are_e009_naming_list_and_handler(
    catalog_name, list_name, handler
):
    message = only(beammcp_messages(catalog_name), "beammcp.E009")
    assert list_name in message
    assert f"'{handler}'" in message


# -- tool names and schemas ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("catalog_name", "name"),
    [("NAME_WITH_SPACE", "two words"), ("NAME_TOO_LONG", LONG_NAME), ("NAME_EMPTY", "")],
)
def test_a_tool_name_outside_the_rule_is_e010_naming_the_tool_and_key(catalog_name, name):
    message = only(beammcp_messages(catalog_name), "beammcp.E010")
    assert f"tool '{name}'" in message
    assert "'name'" in message


def test_tool_names_of_128_allowed_characters_pass():
    assert beammcp_messages("NAME_LONGEST") == []


def test_an_invalid_input_schema_is_e011_naming_the_tool_key_and_place():
    message = only(beammcp_messages("INVALID_INPUT_SCHEMA"), "beammcp.E011")
    assert "tool 'bad_input'" in message
    assert "'inputSchema'" in message
    assert "properties/x/type" in message


def test_an_invalid_output_schema_is_e011_naming_the_tool_and_key():
    message = only(beammcp_messages("INVALID_OUTPUT_SCHEMA"), "beammcp.E011")
    assert "tool 'bad_output'" in message
    assert "'outputSchema'" in message


def test_an_unknown_schema_dialect_is_e011_naming_the_tool_and_key():
    message = only(beammcp_messages("UNKNOWN_DIALECT_SCHEMA"), "beammcp.E011")
    assert "tool 'dialect'" in message
    assert "'inputSchema'" in message
    assert "$schema" in message


@pytest.fixture
def no_network(monkeypatch):
    """Record (and refuse) every attempt to reach the network."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("the network is off in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return attempts


def test_a_remote_ref_is_e011_and_is_never_fetched(no_network):
    started = time.monotonic()
    messages = beammcp_messages("REMOTE_REF_SCHEMA")
    elapsed = time.monotonic() - started
    message = only(messages, "beammcp.E011")
    assert "tool 'remote'" in message
    assert "'inputSchema'" in message
    assert REMOTE_REF_URL in message
    assert no_network == []
    assert elapsed < 2.0


def test_a_ref_resolving_inside_the_schema_passes():
    assert beammcp_messages("LOCAL_REF_SCHEMA") == []


@pytest.mark.parametrize(
    ("catalog_name", "tool"), [("STRING_ROOT", "stringly"), ("NO_TYPE_ROOT", "untyped")]
)
def test_an_input_schema_whose_root_is_not_an_object_is_e012_naming_tool_and_key(
    catalog_name, tool
):
    message = only(beammcp_messages(catalog_name), "beammcp.E012")
    assert f"tool '{tool}'" in message
    assert "'inputSchema'" in message


# -- resources -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("catalog_name", "template"),
    [
        ("TEMPLATE_QUERY", "weather://search{?q}"),
        ("TEMPLATE_FRAGMENT", "weather://page{#x}"),
        ("TEMPLATE_EXPLODE", "weather://list/{x*}"),
        ("TEMPLATE_MULTIPLE", "weather://pair/{a,b}"),
    ],
)
def test_an_unsupported_uri_template_expression_is_e013_naming_template_and_key(
    catalog_name, template
):
    message = only(beammcp_messages(catalog_name), "beammcp.E013")
    assert f"resource template '{template}'" in message
    assert "'uri_template'" in message


def test_simple_and_reserved_template_expressions_pass():
    assert beammcp_messages("SUPPORTED_TEMPLATES") == []


@pytest.mark.parametrize(
    ("catalog_name", "name"),
    [
        ("RELATIVE_BARE", "bare"),
        ("RELATIVE_PATH", "path"),
        ("RELATIVE_SPACE", "space"),
        ("RELATIVE_EMPTY", "empty"),
    ],
)
def test_a_resource_uri_that_is_not_absolute_is_e014_naming_resource_and_key(catalog_name, name):
    message = only(beammcp_messages(catalog_name), "beammcp.E014")
    assert f"resource '{name}'" in message
    assert "'uri'" in message


def test_a_complete_that_is_not_callable_is_e016_naming_the_key():
    message = only(beammcp_messages("NON_CALLABLE_COMPLETE"), "beammcp.E016")
    assert "'complete'" in message


def test_a_complete_set_to_none_means_no_completion_and_passes():
    assert [m.id for m in beammcp_messages("NONE_COMPLETE")] == ["beammcp.W009"]  # empty


@pytest.mark.parametrize("catalog_name", ["MALFORMED_TEMPLATE_FIELD", "MALFORMED_PROMPT_ARGUMENTS"])
def test_a_malformed_field_of_an_entry_is_reported_rather_than_crashing_the_check(catalog_name):
    messages = beammcp_messages(catalog_name)
    assert any(message.id.startswith("beammcp.E0") for message in messages)


# -- settings --------------------------------------------------------------------------------


def test_a_page_size_of_zero_is_its_own_id_naming_the_key():
    message = only(beammcp_messages("EMPTY", PAGE_SIZE=0), check_id("PAGE_SIZE"))
    assert "PAGE_SIZE" in message


@pytest.mark.parametrize(
    ("hints", "words"),
    [
        ({"tools/call": {"ttl_ms": 1, "scope": "public"}}, "'tools/call'"),
        ({"tools/list": {"ttl_ms": 1, "scope": "everyone"}}, "['scope']"),
        ({"tools/list": {"ttl_ms": -1, "scope": "public"}}, "['ttl_ms']"),
        ({"tools/list": {"ttl": 1}}, "'tools/list'"),
        (["tools/list"], "CACHE_HINTS"),
    ],
    ids=["unknown-method", "bad-scope", "negative-ttl", "unknown-hint-key", "not-a-dict"],
)
def test_bad_cache_hints_are_their_own_id_naming_the_method_and_key(hints, words):
    message = only(beammcp_messages("EMPTY", CACHE_HINTS=hints), check_id("CACHE_HINTS"))
    assert "CACHE_HINTS" in message
    assert words in message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("STDIO_SHUTDOWN_GRACE_SECONDS", -1),
        ("STDIO_MAX_CONCURRENT_REQUESTS", 0),
        ("STDIO_USER", ""),
        ("STDIO_USER", 7),
        ("PAGE_SIZE", 1001),
        ("PAGE_SIZE", True),
        ("CALL_TIMEOUT_SECONDS", 0),
        ("CALL_TIMEOUT_SECONDS", "30"),
        ("CONNECTOME_FLUSH_SECONDS", -5),
        ("CONNECTOME_SCOPE", "sample_project"),
        ("CONNECTOME_SCOPE", ["sample_project", ""]),
        ("CONNECTOME_TRACE", {"MAX_EVENTS": 1000}),
        ("CONNECTOME_TRACE", {"MAX_EVENTS": 0, "MAX_SECONDS": 5}),
        ("CONNECTOME_TRACE", {"MAX_EVENTS": 1000, "MAX_SECONDS": True}),
        ("FREEZE_HEAP_AT_STARTUP", "yes"),
        ("FREEZE_HEAP_AT_STARTUP", 1),
    ],
)
def test_other_bad_values_are_their_keys_own_id_naming_the_key(key, value):
    message = only(beammcp_messages("EMPTY", **{key: value}), check_id(key))
    assert key in message


def test_an_unknown_settings_key_is_w001_naming_it():
    messages = beammcp_messages("EMPTY", PAGE_SZE=10)
    message = only(messages, "beammcp.W001")
    assert "'PAGE_SZE'" in message
    assert sorted(m.id for m in messages) == ["beammcp.W001", "beammcp.W009"]  # W009: empty


def test_overridden_settings_are_read_afresh_and_restored_afterwards():
    before = get_settings()
    assert get_settings() is before  # cached
    with override_settings(BEAMMCP={"PAGE_SIZE": 3}):
        assert get_settings()["PAGE_SIZE"] == 3
        assert get_settings() is get_settings()
        assert get_settings()["CATALOG"] == DEFAULTS["CATALOG"]
    after = get_settings()
    assert after == before
    assert after["PAGE_SIZE"] != 3


# -- registered classes ----------------------------------------------------------------------


def test_a_registered_class_missing_name_is_e017_naming_the_class_and_attribute():
    messages = beammcp_messages("INCOMPLETE_SITE")
    incomplete = with_id(messages, "beammcp.E017")
    nameless = [m for m in incomplete if "NamelessTool" in m]
    assert len(nameless) == 1
    assert "tool class" in nameless[0]
    assert "'name'" in nameless[0]


def test_a_registered_resource_missing_uri_is_e017_naming_the_attribute():
    messages = beammcp_messages("INCOMPLETE_SITE")
    uri_less = [m for m in with_id(messages, "beammcp.E017") if "UriLessResource" in m]
    assert len(uri_less) == 1
    assert "'uri'" in uri_less[0]
    assert "'name'" not in uri_less[0]


@pytest.mark.parametrize(("cls", "method"), [("CallLessTool", "call"), ("GetLessPrompt", "get")])
def test_a_registered_class_not_overriding_its_handler_is_e009_naming_the_method(cls, method):
    messages = beammcp_messages("INCOMPLETE_SITE")
    found = [m for m in with_id(messages, "beammcp.E009") if cls in m]
    assert len(found) == 1
    assert f"'{method}'" in found[0]


def test_complete_registered_classes_raise_no_class_problems():
    messages = beammcp_messages("INCOMPLETE_SITE")
    assert not any("NamelessTool" in m.msg for m in messages if m.id == "beammcp.E009")
    assert not any("UriLessResource" in m.msg for m in messages if m.id == "beammcp.E009")
    assert beammcp_messages("COMPLETE_SITE") == []


# -- manage.py check -------------------------------------------------------------------------
# The whole command runs Django's model checks too, and on Django 6.1 with SQLite those ask
# the database whether it supports the package's JSONFields (McpTask): a connection, as a
# project's own `manage.py check` has.


@pytest.mark.django_db
def test_check_command_fails_for_a_broken_catalog():
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        override_settings(BEAMMCP={"CATALOG": path("REPEATED_TOOL")}),
        pytest.raises(SystemCheckError) as caught,
    ):
        call_command("check", stdout=stdout, stderr=stderr)
    assert "beammcp.E004" in str(caught.value)
    assert "tool 'twice'" in str(caught.value)


@pytest.mark.django_db
def test_check_command_fails_for_a_bad_setting():
    with override_settings(BEAMMCP={"PAGE_SIZE": 0}), pytest.raises(SystemCheckError) as caught:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    assert "beammcp.E105" in str(caught.value)


@pytest.mark.django_db
def test_check_command_passes_for_the_sample_project_warning_only_of_its_mis_annotated_tool():
    stderr = io.StringIO()
    call_command("check", stdout=io.StringIO(), stderr=stderr)
    assert "System check identified 1 issue (0 silenced)" in stderr.getvalue()
    assert "beammcp.W008" in stderr.getvalue()


def test_the_sample_project_s_one_beammcp_message_is_the_audit_of_current_conditions():
    # The sample's current_conditions is mis-annotated on purpose: read-only, yet it writes.
    assert run_checks(tags=["beammcp"]) == []
    (message,) = run_checks(tags=[ANNOTATIONS_TAG])
    assert message.id == "beammcp.W008"
    assert message.obj == "tool 'current_conditions'"
    assert message.msg == (
        "tool 'current_conditions' is annotated readOnlyHint: true, but its declared graph "
        "reaches model.write demo.Observation: tool/current_conditions -> "
        "module/sample_project.demo.mcp/CurrentConditions.call/3 -> "
        "effect/model.write/demo.Observation"
    )


def test_a_tool_pattern_only_a_backtracking_engine_can_run_is_e021_naming_tool_and_pointer():
    # Validating it cannot be bounded, so the catalog is refused at startup (it was W003).
    messages = beammcp_messages("BACKTRACKING_PATTERN")
    message = only(messages, "beammcp.E021")
    assert "tool 'twice'" in message
    assert "/properties/word/pattern" in message
    assert "tool 'linear'" not in message


def test_an_output_schema_with_such_a_pattern_is_not_refused():
    # The host's own answers: validated by jsonschema, not a caller's lever.
    messages = beammcp_messages("BACKTRACKING_OUTPUT")
    assert with_id(messages, "beammcp.E021") == []


def test_an_output_schema_that_is_not_an_object_is_w004_naming_the_tool():
    message = only(beammcp_messages("LIST_OUTPUT"), "beammcp.W004")
    assert "tool 'primes'" in message
    assert "2025-11-25" in message


# -- who may use an entry ------------------------------------------------------------------

BAD_SCOPE = catalog(
    tools=(ToolSpec("quoted", {"type": "object"}, access=Access(scopes=frozenset({'a"b'}))),)
)
BAD_TASK_MODE = catalog(tools=(ToolSpec("tasked", {"type": "object"}, task="sometimes"),))
# A task tool, with no Tasks backend configured (the test settings define none).
TASK_TOOL = catalog(tools=(ToolSpec("tasked", {"type": "object"}, task="optional"),))
UNKNOWN_PERMISSION_SITE = Site()


@UNKNOWN_PERMISSION_SITE.register
class NeedsAPermissionNobodyDeclares(Tool):
    name = "needs_nothing_real"
    permissions = ("demo.add_observation", "demo.fly_observation", "nodots")

    def call(self, arguments, context):
        return "ok"


NEVER_BLOCKS_SITE = Site()


@NEVER_BLOCKS_SITE.register
class SaysMaybe(Tool):
    name = "says_maybe"
    never_blocks = "yes"

    def call(self, arguments, context):
        return "ok"


@NEVER_BLOCKS_SITE.register
class AlreadyOnTheLoop(Tool):
    name = "already_on_the_loop"
    never_blocks = True

    async def call(self, arguments, context):
        return "ok"


@NEVER_BLOCKS_SITE.register
class CompletesNothing(Tool):
    """A plain ``complete`` on a tool: never served (tools have no completion), so
    never_blocks has nothing to move."""

    name = "completes_nothing"
    never_blocks = True

    async def call(self, arguments, context):
        return "ok"

    def complete(self, argument, value, context_arguments, context):
        return []


@NEVER_BLOCKS_SITE.register
class ReadOnce(Skill):
    name = "read-once"
    never_blocks = True

    def files(self):
        return {"SKILL.md": "---\nname: read-once\ndescription: Read once.\n---\nBody.\n"}


@NEVER_BLOCKS_SITE.register
class AsksOnAThread(Tool):
    """A coroutine ``call`` with a plain ``admit_task``: never_blocks moves the latter."""

    name = "asks_on_a_thread"
    never_blocks = True

    async def call(self, arguments, context):
        return "ok"

    def admit_task(self, arguments, context):
        return False


SCOPED = catalog(
    tools=(ToolSpec("scoped", {"type": "object"}, access=Access(scopes=frozenset({"s.write"}))),)
)


def test_a_scope_that_a_challenge_header_cannot_carry_is_refused_at_startup():
    message = only(beammcp_messages("BAD_SCOPE"), "beammcp.E022")
    assert "ToolSpec 'quoted'" in message and "not an OAuth scope name" in message


def test_never_blocks_is_a_bool_on_a_class_with_a_plain_method_for_the_loop():
    messages = with_id(beammcp_messages("NEVER_BLOCKS_SITE"), "beammcp.E035")
    assert len(messages) == 4, messages
    assert "SaysMaybe" in messages[0] and "'never_blocks' must be True or False" in messages[0]
    assert "AlreadyOnTheLoop" in messages[1] and "run on the event loop already" in messages[1]
    assert "CompletesNothing" in messages[2] and "run on the event loop already" in messages[2]
    assert "ReadOnce" in messages[3] and "a skill's files are read once" in messages[3]


def test_a_permission_no_installed_model_declares_is_refused_at_startup():
    messages = with_id(beammcp_messages("UNKNOWN_PERMISSION_SITE"), "beammcp.E023")
    assert len(messages) == 2, messages
    assert "'demo.fly_observation', which no model" in messages[0]
    assert "'nodots', not 'app_label.codename'" in messages[1]
    assert "'demo.add_observation'" not in " ".join(messages)  # the sample's model has it


@pytest.mark.with_http_endpoint
def test_scopes_declared_under_allow_all_are_named_at_startup():
    messages = beammcp_messages(
        "SCOPED",
        ALLOWED_ORIGINS="any",
        AUTHORIZE="beammcp_django.authorization.allow_all",
    )
    assert "no token" in only(messages, "beammcp.W006")


GATED_SCOPES_SITE = Site()


@GATED_SCOPES_SITE.register
class DeletesForPermittedUsers(Tool):
    name = "permitted_delete"
    permissions = ("demo.delete_observation",)
    scopes = ("demo.write",)

    def call(self, arguments, context):
        return "deleted"


@GATED_SCOPES_SITE.register
class ShownByARuleOfItsOwn(Tool):
    name = "ruled_write"
    scopes = ("demo.write",)

    def visible(self, context):
        return True

    def call(self, arguments, context):
        return "written"


@pytest.mark.with_http_endpoint
def test_scopes_of_a_permission_gated_entry_are_not_named_under_allow_all():
    """allow_all names no principal, and no principal holds a permission: the gated entry is
    hidden from every HTTP caller, never challenged. An entry shown by ``visible()`` may be
    shown to anyone, so its scopes are still named."""
    messages = beammcp_messages(
        "GATED_SCOPES_SITE",
        ALLOWED_ORIGINS="any",
        AUTHORIZE="beammcp_django.authorization.allow_all",
    )
    warned = only(messages, "beammcp.W006")
    assert "ruled_write" in warned and "permitted_delete" not in warned


@pytest.mark.with_http_endpoint
def test_the_sample_catalog_declares_a_scope_and_passes_the_checks_under_allow_all():
    from sample_project.demo.mcp import DeleteObservation

    assert DeleteObservation.scopes and DeleteObservation.permissions
    messages = beammcp_messages(
        ALLOWED_ORIGINS="any", AUTHORIZE="beammcp_django.authorization.allow_all"
    )
    assert [message.id for message in messages] == []
