"""System checks: a malformed catalog or setting fails ``manage.py check`` and every command
that runs checks (``runserver``, ``mcp_stdio``), naming the entry and the offending key.

Ids are stable: ``beammcp.E001`` catalog not loadable, ``E002``-``E014``, ``E016`` see
``beammcp_django.protocol.audit``, ``E015`` a bad setting, ``E017`` an incomplete class,
``W001`` an unknown settings key.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register

from beammcp_django.conf import setting_problems, unknown_keys
from beammcp_django.endpoint import load_catalog
from beammcp_django.protocol.audit import audit


@register("beammcp")
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = [
        Error(problem, id="beammcp.E015") for problem in setting_problems()
    ]
    messages.extend(
        Warning(
            f"BEAMMCP has the unknown key '{key}'",
            hint="See docs/settings.md for the keys this version reads.",
            id="beammcp.W001",
        )
        for key in unknown_keys()
    )
    return messages


@register("beammcp")
def check_catalog(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        catalog = load_catalog()
    except Exception as error:
        return [
            Error(
                f"BEAMMCP['CATALOG'] cannot be loaded: {type(error).__name__}: {error}",
                hint="Give the dotted path of a catalog object, e.g. 'myapp.mcp.catalog'.",
                id="beammcp.E001",
            )
        ]
    problems = audit(catalog)
    class_problems = getattr(catalog, "problems", None)
    if callable(class_problems):
        problems.extend(class_problems())
    return [
        Error(str(problem), hint=problem.hint, obj=problem.subject, id=f"beammcp.{problem.id}")
        for problem in problems
    ]
