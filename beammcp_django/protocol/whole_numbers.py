"""Whole numbers arrive as ``int``: what a Python host declared ``"type": "integer"`` for.

JSON has one number type, and JSON Schema counts ``2.0`` and ``1e0`` as integers, so
``{"days": 2.0}`` passes ``"type": "integer"``; ``json`` reads that literal as a ``float``, and
a host that declared an integer would be handed ``2.0`` (``range(2.0)`` raises). The rule,
once the arguments passed their schema: every float in them with no fractional part becomes
the ``int`` of the same value, at any depth (an object's values, an array's items), whatever
the schema says there. A ``"number"`` may so arrive as an ``int`` too, as it does whenever a
client writes ``2``; a value with a fraction stays a ``float``. The wire's own values (ids,
``_meta``) are not touched: only what the host is handed.
"""

from __future__ import annotations

from typing import Any


def _whole(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return whole_numbers(value)
    if kind is list:
        items = [_whole(item) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value


def whole_numbers(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with every whole-number float an ``int``: the same object when none is
    (the usual call copies nothing)."""
    changed = None
    for key, value in arguments.items():
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        new = _whole(value)
        if new is not value:
            if changed is None:
                changed = dict(arguments)
            changed[key] = new
    return arguments if changed is None else changed
