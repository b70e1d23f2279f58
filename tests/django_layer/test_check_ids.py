"""The one table of check ids (``beammcp_django.checks.ids``): one id per rule, each id raised by
its rule and by no other, every settings key and every audit rule in it, and
``docs/host-contract.md`` and ``CHANGELOG.md`` listing exactly the table and its renumbering.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.test import override_settings

from beammcp_django.checks.entries import ANNOTATIONS_TAG
from beammcp_django.checks.ids import CHECKS, RENUMBERED, check_id
from beammcp_django.conf import DEFAULTS
from beammcp_django.protocol import audit
from beammcp_django.tasks.backend import tasks_framework
from tests.ui.sites import VIEW_SETTINGS

from . import test_system_checks

ROOT = Path(__file__).resolve().parents[2]
SERVED = {
    "ALLOWED_ORIGINS": ["http://localhost:8000"],
    "AUTHORIZE": "beammcp_django.authorization.allow_all",
    # No source read: the sample's current_conditions is mis-annotated on purpose (W008).
    "CONNECTOME_SCOPE": [],
}
# The Tasks framework's module on this Django: django.tasks, or the backport django_tasks.
FRAMEWORK = tasks_framework().__name__
# The project as its own authorization server (django-oauth-toolkit installed).
TOOLKIT = {"INSTALLED_APPS": [*settings.INSTALLED_APPS, "oauth2_provider"]}
REDIS_LAYER = {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": []}}


def catalog(name: str) -> dict[str, Any]:
    """A broken catalog of ``test_system_checks``, which holds one for every catalog rule."""
    return {"CATALOG": test_system_checks.path(name)}


def skills_site(name: str) -> dict[str, Any]:
    """A site of ``tests/skills/broken_sites.py``, whose skills break one rule each."""
    return {"CATALOG": f"tests.skills.broken_sites.{name}"}


def views_site(name: str) -> dict[str, Any]:
    """A site of ``tests/ui/sites.py`` (with ``VIEW_SETTINGS``, its templates and statics)."""
    return {"CATALOG": f"tests.ui.sites.{name}"}


# id: (BEAMMCP keys, other Django settings) that break that rule and nothing else. A new id
# without its entry here fails the test below.
BREAKS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "beammcp.E001": ({"CATALOG": "no_such_module.catalog"}, {}),
    "beammcp.E002": (catalog("NO_PROMPTS"), {}),
    "beammcp.E003": (catalog("WRONG_TOOL_ENTRY"), {}),
    "beammcp.E004": (catalog("REPEATED_TOOL"), {}),
    "beammcp.E005": (catalog("REPEATED_RESOURCE"), {}),
    "beammcp.E006": (catalog("REPEATED_TEMPLATE"), {}),
    "beammcp.E007": (catalog("REPEATED_PROMPT"), {}),
    "beammcp.E008": (catalog("REPEATED_ARGUMENT"), {}),
    "beammcp.E009": (catalog("TOOLS_WITHOUT_DISPATCH"), {}),
    "beammcp.E010": (catalog("NAME_WITH_SPACE"), {}),
    "beammcp.E011": (catalog("INVALID_INPUT_SCHEMA"), {}),
    "beammcp.E012": (catalog("STRING_ROOT"), {}),
    "beammcp.E013": (catalog("TEMPLATE_QUERY"), {}),
    "beammcp.E014": (catalog("RELATIVE_BARE"), {}),
    "beammcp.E016": (catalog("NON_CALLABLE_COMPLETE"), {}),
    "beammcp.E017": (catalog("UNNAMED_SITE"), {}),
    "beammcp.E020": (catalog("BAD_HEADER_ANNOTATION"), {}),
    "beammcp.E021": (catalog("BACKTRACKING_PATTERN"), {}),
    "beammcp.E022": (catalog("BAD_SCOPE"), {}),
    "beammcp.E023": (catalog("UNKNOWN_PERMISSION_SITE"), {}),
    "beammcp.E024": (catalog("BAD_TASK_MODE"), {}),
    "beammcp.E026": (skills_site("NO_FRONTMATTER"), {}),
    "beammcp.E027": (skills_site("NAME_NOT_FOLDER"), {}),
    "beammcp.E028": (skills_site("TOO_MANY_FILES"), {}),
    "beammcp.E029": (skills_site("LEAVING_PATH"), {}),
    "beammcp.E030": (skills_site("TWICE"), {}),
    "beammcp.W011": (skills_site("SHADOWING"), {}),
    "beammcp.E031": (views_site("BAD_VIEW"), VIEW_SETTINGS),
    "beammcp.E032": (views_site("BAD_TOOL_VIEW"), VIEW_SETTINGS),
    "beammcp.E033": (views_site("LOADS_UNDECLARED"), VIEW_SETTINGS),
    "beammcp.E035": (catalog("NEVER_BLOCKS_SITE"), {}),
    "beammcp.E034": ({"CATALOG": "tests.handles.sites.TWO_KINDS_ONE_PREFIX"}, {}),
    "beammcp.E025": (
        catalog("TASK_TOOL"),
        {"TASKS": {"default": {"BACKEND": f"{FRAMEWORK}.backends.immediate.ImmediateBackend"}}},
    ),
    "beammcp.E101": ({"SERVER_NAME": ""}, {}),
    "beammcp.E102": ({"SERVER_VERSION": 2}, {}),
    "beammcp.E103": ({"SERVER_TITLE": ""}, {}),
    "beammcp.E104": ({"INSTRUCTIONS": ["be brief"]}, {}),
    "beammcp.E105": ({"PAGE_SIZE": 0}, {}),
    "beammcp.E106": ({"CACHE_HINTS": {"tools/call": {"ttl_ms": 1}}}, {}),
    "beammcp.E107": ({"ALLOWED_ORIGINS": "*"}, {}),
    "beammcp.E108": ({"AUTHORIZE": "no_such_module.allow"}, {}),
    "beammcp.E109": ({"AUTHORIZE_BODY": "no_such_module.check"}, {}),
    "beammcp.E110": ({"CALL_TIMEOUT_SECONDS": 0}, {}),
    "beammcp.E111": ({"BODY_READ_TIMEOUT_SECONDS": "15"}, {}),
    "beammcp.E112": ({"HEADER_MAX_BYTES": 16.5}, {}),
    "beammcp.E113": ({"HEADER_MAX_COUNT": 0}, {}),
    "beammcp.E114": ({"HEADER_TIMEOUT_SECONDS": -1}, {}),
    "beammcp.E115": ({"CHANNEL_LAYER": "other"}, {"CHANNEL_LAYERS": {"default": REDIS_LAYER}}),
    "beammcp.E116": ({"SUBSCRIPTION_MAX_SECONDS": 0}, {}),
    "beammcp.E117": ({"SUBSCRIPTION_QUEUE_LIMIT": 2.5}, {}),
    "beammcp.E118": ({"SUBSCRIPTION_REAUTHORIZE_SECONDS": None}, {}),
    "beammcp.E119": ({"CONNECTOME_OBSERVE": "yes"}, {}),
    "beammcp.E120": ({"CONNECTOME_SCOPE": "sample_project"}, {}),
    "beammcp.E121": ({"CONNECTOME_FLUSH_SECONDS": 0}, {}),
    "beammcp.E122": ({"CONNECTOME_TRACE": {"MAX_EVENTS": 10}}, {}),
    "beammcp.E123": ({"FREEZE_HEAP_AT_STARTUP": 1}, {}),
    "beammcp.E124": ({"REQUEST_STATE_MAX_AGE_SECONDS": 0.5}, {}),
    "beammcp.E125": ({"STDIO_SHUTDOWN_GRACE_SECONDS": -1}, {}),
    "beammcp.E126": ({"STDIO_MAX_CONCURRENT_REQUESTS": 0}, {}),
    "beammcp.E127": ({"STDIO_USER": ""}, {}),
    "beammcp.E128": ({"HTTP_LEGACY_SESSIONS": "yes"}, {}),
    "beammcp.E129": ({"SESSION_IDLE_SECONDS": 0}, {}),
    "beammcp.E130": ({"SESSION_LIMIT": 0}, {}),
    "beammcp.E131": ({"SESSIONS_PER_PRINCIPAL": 1.5}, {}),
    "beammcp.E132": ({"SESSION_CACHE": "sessions"}, {}),
    "beammcp.E133": ({"SESSION_PENDING_ANSWERS": 0}, {}),
    "beammcp.E134": ({"SESSION_ANSWER_SECONDS": "300"}, {}),
    "beammcp.E135": ({"SESSION_HELD_EVENTS": 2.5}, {}),
    "beammcp.E136": ({"SESSION_RESUME_SECONDS": -1}, {}),
    "beammcp.E137": ({"OAUTH": {"RESOURCE": "http://example.com/mcp"}}, {}),
    "beammcp.E138": ({"RATE_LIMIT": "no_such_module.limit"}, {}),
    "beammcp.E139": ({"TASKS": {"MAX_ATTEMPTS": 0}}, {}),
    "beammcp.E141": ({"SESSION_CACHE_CONNECTIONS": 0}, {}),
    "beammcp.E142": ({"SESSION_CACHE_WAIT_SECONDS": "5"}, {}),
    "beammcp.E143": ({"CLIENT_REGISTRATION": {"PER_ADDRESS": 0}}, {}),
    "beammcp.E144": ({"HANDLER_HEADERS": ["x-request-id", "authorization"]}, {}),
    "beammcp.E145": ({"VIEW_SANDBOX_ORIGIN": "https://sandbox.example.com/path"}, {}),
    "beammcp.W001": ({"PAGE_SZE": 10}, {}),
    "beammcp.W002": (
        {},
        {
            "ASGI_APPLICATION": "tests.http.mcphttp_app.plain_asgi.application",
            "SETTINGS_MODULE": "tests.django_layer.settings",
        },
    ),
    "beammcp.W004": (catalog("LIST_OUTPUT"), {}),
    "beammcp.W007": (
        {
            "OAUTH": {
                "RESOURCE": "https://mcp.example.com/elsewhere",
                "AUTHORIZATION_SERVERS": ["https://example.com/o"],
            }
        },
        {},
    ),
    "beammcp.W006": (catalog("SCOPED"), {}),
    "beammcp.W008": ({"CONNECTOME_SCOPE": ["sample_project.demo"]}, {}),
    "beammcp.W009": (catalog("EMPTY"), {}),
    "beammcp.W010": (
        {},
        {
            **TOOLKIT,
            "OAUTH2_PROVIDER": {"CIMD_ENABLED": True},
            "ROOT_URLCONF": "tests.oauth.toolkit_urlconf",
        },
    ),
    "beammcp.E140": ({"CONNECTOME_EMAIL_BACKEND": ""}, {}),
    "beammcp.W005": (
        {},
        {
            "CHANNEL_LAYERS": {
                "default": {**REDIS_LAYER, "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]}}
            }
        },
    ),
}


def raised(beammcp: dict[str, Any], django: dict[str, Any]) -> list[str]:
    """The ids raised with the endpoint routed and served, but for what ``beammcp`` breaks."""
    with override_settings(BEAMMCP={**SERVED, **beammcp}, **django):
        return [message.id for message in run_checks(tags=["beammcp", ANNOTATIONS_TAG])]


@pytest.mark.with_http_endpoint  # so the HTTP rules are checked at all
@pytest.mark.parametrize("check", CHECKS, ids=[check.id for check in CHECKS])
def test_each_id_is_raised_by_its_rule_and_the_breaking_value_raises_no_other(check):
    beammcp, django = BREAKS[check.id]
    found = raised(beammcp, django)
    assert check.id in found
    assert set(found) == {check.id}, found


def test_the_unbroken_settings_raise_nothing_so_each_break_above_is_its_own():
    assert raised({}, {}) == []


def test_ids_and_rules_are_each_used_once_and_follow_the_blocks():
    ids = [check.id for check in CHECKS]
    rules = [check.rule for check in CHECKS]
    assert len(set(ids)) == len(ids)
    assert len(set(rules)) == len(rules)
    for check in CHECKS:
        if check.id.startswith("beammcp.W"):
            block = r"W\d{3}"
        else:
            block = r"E1\d\d" if check.rule in DEFAULTS else r"E0\d\d"
        assert re.fullmatch(rf"beammcp\.{block}", check.id), check


def test_every_setting_but_the_catalog_path_has_its_own_id():
    """The catalog path's rule is E001 (it cannot be loaded), the rest one id each."""
    assert {check.rule for check in CHECKS if check.rule in DEFAULTS} == set(DEFAULTS) - {"CATALOG"}


def test_every_audit_rule_has_an_id():
    rules = {
        value
        for name, value in vars(audit).items()
        if name.isupper() and isinstance(value, str) and value == name.lower()
    }
    assert len(rules) == 19
    assert all(check_id(rule) for rule in rules)


def test_a_retired_id_is_never_given_again_and_points_at_live_ids():
    live = {check.id for check in CHECKS}
    assert not set(RENUMBERED) & live
    for replacements in RENUMBERED.values():
        assert set(replacements) <= live


def _rows(text: str, heading: str) -> list[tuple[str, str]]:
    """The two-column table rows under ``heading`` in a Markdown page."""
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    return [
        (match[1], match[2])
        for match in re.finditer(r"^\| `([^`]+)` \| (.+) \|$", section, re.MULTILINE)
    ]


def test_the_host_contract_lists_the_table_row_for_row():
    page = (ROOT / "docs" / "host-contract.md").read_text(encoding="utf-8")
    expected = [(check.id, check.finding) for check in CHECKS]
    assert _rows(page, "## What is checked at startup") == expected, "\n".join(
        f"| `{i}` | {f} |" for i, f in expected
    )


@pytest.mark.parametrize(
    ("page", "heading"),
    [("docs/host-contract.md", "### Renumbered ids"), ("CHANGELOG.md", "### Renumbered check ids")],
)
def test_the_renumbering_is_given_in_the_docs_and_the_changelog(page, heading):
    text = (ROOT / page).read_text(encoding="utf-8")
    expected = [
        (old, ", ".join(f"`{new}`" for new in replacements))
        for old, replacements in RENUMBERED.items()
    ]
    rows = [(old, new) for old, new in _rows(text, heading)]
    assert rows == expected, "\n".join(f"| `{o}` | {n} |" for o, n in expected)
