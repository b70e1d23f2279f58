"""The one place settings are read: ``settings.BEAMMCP`` merged over the defaults of the
settings table (``settings_table``: each key's default, rule, check id and doc).

Read once per process and again only when Django's ``setting_changed`` signal says the dict
changed (tests use ``override_settings``). ``docs/settings.md`` documents every key.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from beammcp_django.settings_table import (
    DEFAULTS,
    REGISTRATION_DEFAULTS,
    SETTINGS,
    TASK_DEFAULTS,
)

__all__ = [
    "DEFAULTS",
    "REGISTRATION_DEFAULTS",
    "TASK_DEFAULTS",
    "SettingProblem",
    "forget_on_change",
    "get_settings",
    "load_catalog",
    "registration_settings",
    "setting_problem",
    "table_problems",
    "task_settings",
    "unknown_keys",
]


def task_settings() -> dict[str, Any]:
    """``BEAMMCP['TASKS']`` over ``TASK_DEFAULTS``."""
    configured = get_settings()["TASKS"]
    return {**TASK_DEFAULTS, **(configured if isinstance(configured, dict) else {})}


def registration_settings() -> dict[str, Any]:
    """``BEAMMCP['CLIENT_REGISTRATION']`` over ``REGISTRATION_DEFAULTS``."""
    configured = get_settings()["CLIENT_REGISTRATION"]
    return {**REGISTRATION_DEFAULTS, **(configured if isinstance(configured, dict) else {})}


@lru_cache(maxsize=1)
def get_settings() -> dict[str, Any]:
    """The merged settings dict. Unknown keys are kept so the system check can name them."""
    configured = getattr(settings, "BEAMMCP", {}) or {}
    merged = dict(DEFAULTS)
    merged.update(configured)
    return merged


def unknown_keys() -> list[str]:
    configured = getattr(settings, "BEAMMCP", {}) or {}
    return sorted(key for key in configured if key not in DEFAULTS)


class SettingProblem(NamedTuple):
    """Why one key's value cannot serve. The key is the rule: each has its own check id."""

    key: str
    message: str


def table_problems() -> list[SettingProblem]:
    """Why the merged settings break the table's rules, each naming its key, in the table's
    order (its rule's words, ``settings_table``); empty when they keep them. The keys whose
    rules live with what they configure (the HTTP hooks, the session cache, ``OAUTH``) are
    checked in ``checks/``, whose ``setting_problems`` adds them."""
    values = get_settings()
    return [
        setting_problem(row.key, tail)
        for row in SETTINGS
        for tail in row.rule.problems(values[row.key])
    ]


def setting_problem(key: str, tail: str) -> SettingProblem:
    """``BEAMMCP['KEY'] must be ...``, or ``BEAMMCP['KEY']['inner'] ...`` when the rule names a
    key inside the value (its words then start with ``[``)."""
    return SettingProblem(key, f"BEAMMCP['{key}']{'' if tail.startswith('[') else ' '}{tail}")


# The Django settings the package's caches are built from: a change to any of them (tests use
# ``override_settings``) makes every cache below and each one registered with
# ``forget_on_change`` start afresh.
SETTINGS_READ = frozenset(
    {
        "BEAMMCP",
        "SECRET_KEY",
        "SECRET_KEY_FALLBACKS",
        "ALLOWED_HOSTS",
        "DEBUG",
        "USE_X_FORWARDED_HOST",
        "CHANNEL_LAYERS",
        "CACHES",
    }
)


def forget_on_change(forget: Callable[[], None]) -> Callable[[], None]:
    """Run ``forget`` whenever one of ``SETTINGS_READ`` changes. Each module that caches
    something built from settings registers its own forgetting here, so this module needs to
    know none of them (and imports none of them)."""

    def receive(*, setting: str, **kwargs: Any) -> None:
        if setting in SETTINGS_READ:
            forget()

    setting_changed.connect(receive, weak=False)
    return forget


forget_on_change(get_settings.cache_clear)


def load_catalog() -> Any:
    """The object ``BEAMMCP['CATALOG']`` names (by default the autodiscovered site)."""
    return import_string(get_settings()["CATALOG"])
