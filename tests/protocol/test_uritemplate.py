"""Matching URIs against the {var} and {+var} forms of RFC 6570."""

from __future__ import annotations

import pytest

from beammcp_django.protocol.uritemplate import UnsupportedTemplate, UriTemplate


def test_a_template_lists_its_variable_names_in_order():
    assert UriTemplate("db://{schema}/{table}/{+path}").names == ("schema", "table", "path")


def test_a_template_without_variables_matches_only_itself():
    template = UriTemplate("config://app")
    assert template.match("config://app") == {}
    assert template.match("config://apps") is None


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("users://42/profile", {"id": "42"}),
        ("users://ada%20lovelace/profile", {"id": "ada lovelace"}),
        ("users://%C3%A9/profile", {"id": "\u00e9"}),
        ("users://...x/profile", {"id": "...x"}),
        ("users://a.b/profile", {"id": "a.b"}),
        ("users://100%/profile", {"id": "100%"}),
    ],
)
def test_a_simple_variable_matches_one_segment_and_is_percent_decoded(uri, expected):
    assert UriTemplate("users://{id}/profile").match(uri) == expected


@pytest.mark.parametrize(
    "uri",
    [
        "users:///profile",
        "users://a/b/profile",
        "users://a%2Fb/profile",
        "users://a%2fb/profile",
        "users://./profile",
        "users://../profile",
        "users://%2e%2e/profile",
        "users://%2E/profile",
        "users://.%2e/profile",
        "users://a?b/profile",
        "users://a#b/profile",
        "users://%ff/profile",
        "users://42/profile/",
        "users://42/profilex",
        "Users://42/profile",
    ],
)
def test_a_simple_variable_refuses_separators_traversal_and_undecodable_values(uri):
    assert UriTemplate("users://{id}/profile").match(uri) is None


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:///docs/a.md", "a.md"),
        ("file:///docs/guides/setup/intro.md", "guides/setup/intro.md"),
        ("file:///docs/a%20b/c", "a b/c"),
        ("file:///docs/..hidden/x", "..hidden/x"),
        ("file:///docs/a?x=1", "a?x=1"),
    ],
)
def test_a_reserved_variable_may_span_segments(uri, expected):
    assert UriTemplate("file:///docs/{+path}").match(uri) == {"path": expected}


@pytest.mark.parametrize(
    "uri",
    [
        "file:///docs/../etc/passwd",
        "file:///docs/a/../../etc/passwd",
        "file:///docs/a/./b",
        "file:///docs/..",
        "file:///docs/%2e%2e/etc/passwd",
        "file:///docs/a%2F..%2Fb",
        "file:///docs/a/%2E%2E",
        "file:///docs/%c0%ae%c0%ae/x",
        "file:///docs/",
    ],
)
def test_a_reserved_variable_refuses_any_traversal_segment(uri):
    assert UriTemplate("file:///docs/{+path}").match(uri) is None


def test_literal_characters_in_a_template_are_not_regex_syntax():
    template = UriTemplate("a.b+c://x(y)/{id}.json")
    assert template.match("a.b+c://x(y)/1.json") == {"id": "1"}
    assert template.match("aXb+c://x(y)/1.json") is None
    assert template.match("a.b+c://x(y)/1Xjson") is None


def test_two_variables_in_one_template_are_both_decoded():
    template = UriTemplate("db://{schema}/{table}")
    assert template.match("db://public/my%20table") == {"schema": "public", "table": "my table"}


@pytest.mark.parametrize(
    "template",
    [
        "x://{?query}",
        "x://{#frag}",
        "x://{/path}",
        "x://{.ext}",
        "x://{;param}",
        "x://{&more}",
        "x://{var*}",
        "x://{var:3}",
        "x://{a,b}",
        "x://{}",
        "x://{bad-name}",
    ],
)
def test_a_template_using_an_unsupported_form_is_refused(template):
    with pytest.raises(UnsupportedTemplate):
        UriTemplate(template)


@pytest.mark.parametrize("template", ["x://{a", "x://a}", "x://{a}}", "x://{{a}"])
def test_a_template_with_unbalanced_braces_is_refused(template):
    with pytest.raises(UnsupportedTemplate):
        UriTemplate(template)


def test_a_template_repeating_a_variable_is_refused():
    with pytest.raises(UnsupportedTemplate, match="'id'"):
        UriTemplate("x://{id}/{+id}")


def test_an_unsupported_template_is_a_value_error():
    assert issubclass(UnsupportedTemplate, ValueError)


def test_a_uri_built_to_make_a_backtracking_matcher_take_hours_is_refused_at_once():
    from tests.protocol.test_schema_regex import within_bound

    template = UriTemplate("file:///{+path}.{ext}")
    hostile = "file:///" + "." * 1_000_000 + "/"
    assert within_bound(lambda: template.match(hostile)) is None
    assert template.match("file:///notes/day.one.txt") == {"path": "notes/day", "ext": "one.txt"}
