"""The system checks of the ``BEAMMCP`` settings: each value held to its rule
(``setting_problems``), the hooks named by dotted path, the session cache, and keys this
version does not read."""

from __future__ import annotations

import difflib
from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from beammcp_django.checks.ids import check_id
from beammcp_django.conf import (
    DEFAULTS,
    SettingProblem,
    get_settings,
    setting_problem,
    table_problems,
    unknown_keys,
)
from beammcp_django.oauth.resource import problems as oauth_problems
from beammcp_django.servers.session_cache import session_cache_problem


def setting_problems() -> list[SettingProblem]:
    """Why the merged settings cannot serve, each naming its key: the table's rules
    (``conf.table_problems``), then ``OAUTH``'s, worded by the OAuth folder
    (``oauth/resource.py``); empty when they can."""
    problems = table_problems()
    problems.extend(setting_problem("OAUTH", p) for p in oauth_problems(get_settings()["OAUTH"]))
    return problems


@register("beammcp")
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = [
        Error(problem.message, id=check_id(problem.key)) for problem in setting_problems()
    ]
    limit = hook_problem(get_settings()["RATE_LIMIT"], required=False)
    if limit:
        messages.append(
            Error(
                f"BEAMMCP['RATE_LIMIT'] {limit}",
                hint="Name a function, sync or async, of (principal, method) that returns None "
                "to serve the request or the seconds the caller should wait.",
                id=check_id("RATE_LIMIT"),
            )
        )
    shared = session_cache_problem()
    if shared is not None:
        messages.append(Error(shared, id=check_id("SESSION_CACHE")))
    messages.extend(
        Warning(
            f"BEAMMCP has the unknown key '{key}'",
            hint=_known_keys_hint(key),
            id=check_id("unknown_setting"),
        )
        for key in unknown_keys()
    )
    return messages


def _known_keys_hint(key: str) -> str:
    """The closest key this version reads, if one is close, then all of them: a hint that
    needs no documentation at hand (the package ships without its docs/)."""
    close = difflib.get_close_matches(key, DEFAULTS, n=1)
    known = "The keys this version reads: " + ", ".join(sorted(DEFAULTS)) + "."
    return f"Did you mean '{close[0]}'? {known}" if close else known


def hook_problem(hook: Any, *, required: bool) -> str | None:
    """What is wrong with a setting naming a hook by dotted path, or None."""
    if hook is None and not required:
        return None
    if not isinstance(hook, str) or not hook:
        return "must be set to the dotted path of an authorization hook"
    try:
        if not callable(import_string(hook)):
            return f"names '{hook}', which is not callable"
    except ImportError:
        return f"names '{hook}', which cannot be imported"
    return None
