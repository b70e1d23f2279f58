"""A host's rate limit, as the rate-limit tests name it (``BEAMMCP["RATE_LIMIT"]``): the
caller named "mallory" may do anything but call tools, which she must retry in 2.5 s; the
caller named "breaker" breaks the hook. Everyone else is served."""

from __future__ import annotations

from typing import Any

SECRET = "rate-limit-hook-secret-7f3a-do-not-leak"


def name_of(principal: Any) -> str | None:
    if principal is None:
        return None
    username = getattr(principal, "get_username", None)
    return username() if callable(username) else getattr(principal, "name", None)


def limit(principal: Any, method: str) -> float | None:
    name = name_of(principal)
    if name == "breaker":
        raise RuntimeError(f"the limiter broke: {SECRET}")
    if name == "mallory" and method == "tools/call":
        return 2.5
    return None
