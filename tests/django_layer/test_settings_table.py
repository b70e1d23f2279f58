"""The settings table (``beammcp_django/settings_table.py``) is the one place a key is
declared: docs/settings.md lists its keys with their defaults and check ids row for row, the
defaults ``conf`` merges over are its defaults, and each key's check message and check-table
finding are worded from its one rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from beammcp_django.checks.ids import CHECKS
from beammcp_django.checks.settings import setting_problems
from beammcp_django.conf import DEFAULTS
from beammcp_django.settings_table import BY_KEY, SETTINGS, Kind

PAGE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def documented_rows() -> dict[str, list[str]]:
    """docs/settings.md's table: key -> its default and check cells."""
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| key | default | check | meaning |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        key, default, check = (cell.strip() for cell in line.split(" | ")[:3])
        rows[key.strip("| `")] = [default, check.strip("`")]
    return rows


def shown(value: Any) -> str:
    """A default as the page writes it."""
    if isinstance(value, str):
        return f'`"{value}"`'
    if value is None or isinstance(value, bool | float):
        return f"`{value!r}`"
    return f"`{json.dumps(value)}`"


def test_the_page_lists_every_key_of_the_table_and_no_other():
    assert list(documented_rows()) == [row.key for row in SETTINGS]


@pytest.mark.parametrize("row", SETTINGS, ids=lambda row: row.key)
def test_the_page_shows_each_key_s_default_and_check_id(row):
    default, check = documented_rows()[row.key]
    assert check == row.check_id
    if row.required:
        assert default.startswith("none: required")
    else:
        assert default.startswith(shown(row.default))


def test_the_defaults_merged_are_the_table_s():
    assert {row.key: row.default for row in SETTINGS} == DEFAULTS


def test_each_key_s_check_finding_comes_from_its_rule():
    findings = {check.rule: check.finding for check in CHECKS}
    for row in SETTINGS:
        if row.key != "CATALOG":  # the catalog's check is E001's, the import's
            assert findings[row.key] == f"`BEAMMCP['{row.key}']` {row.rule.finding}"


@pytest.mark.parametrize(
    "row", [row for row in SETTINGS if isinstance(row.rule, Kind)], ids=lambda row: row.key
)
def test_a_value_out_of_a_kind_is_refused_in_the_words_of_its_finding(row):
    with override_settings(BEAMMCP={row.key: object()}):
        problems = [p for p in setting_problems() if p.key == row.key]
    assert [p.message for p in problems] == [
        f"BEAMMCP['{row.key}'] must be {row.rule.says}" + (", or None" if row.rule.or_none else "")
    ]
    assert row.rule.finding.endswith(row.rule.says)
    assert BY_KEY[row.key] is row
