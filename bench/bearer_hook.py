"""The two halves of ``bench/bearer.py`` that need Django, run as ``python -m
bench.bearer_hook`` with ``bench/bearer_settings.py``:

- ``mint``: a user, a public application and an access token for the bench's resource in
  django-oauth-toolkit's tables, valid for a day; prints ``{"token": ...}``;
- ``measure TOKEN CALLS ROUNDS``: the CPU each ``AUTHORIZE`` hook costs per call in this
  process (``time.process_time``), ``allow_all`` against the bearer authorizer with the token
  already in its cache, interleaved rounds, the median of each; prints them as JSON.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import django


def mint() -> dict[str, str]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from oauth2_provider.models import get_access_token_model, get_application_model

    from bench.bearer_settings import RESOURCE

    user, _ = get_user_model().objects.get_or_create(username="bench")
    application = get_application_model().objects.create(
        name="bench",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
        user=user,
    )
    token = secrets.token_urlsafe(30)
    get_access_token_model().objects.create(
        user=user,
        application=application,
        token=token,
        scope="read",
        resource=[RESOURCE],
        expires=timezone.now() + timedelta(days=1),
    )
    return {"token": token}


async def per_call_us(hook: Callable[[Any], Awaitable[Any]], info: Any, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        await hook(info)
    return (time.process_time() - started) * 1e6 / calls


def measure(token: str, calls: int, rounds: int) -> dict[str, Any]:
    from beammcp_django.authorization import Grant, HttpRequestInfo, allow_all
    from beammcp_django.oauth.bearer import authorize

    info = HttpRequestInfo(
        "POST", "/mcp", {"authorization": [f"Bearer {token}"]}, ("127.0.0.1", 50000)
    )
    granted = asyncio.run(authorize(info))  # validated once: the cache is warm from here on
    if not isinstance(granted, Grant):
        raise SystemExit(f"the bench token was refused: {granted!r}")
    timings: dict[str, list[float]] = {"allow_all": [], "bearer": []}
    hooks = {"allow_all": allow_all, "bearer": authorize}
    for round_index in range(rounds):
        order = list(hooks) if round_index % 2 == 0 else list(hooks)[::-1]
        for name in order:
            timings[name].append(asyncio.run(per_call_us(hooks[name], info, calls)))
    return {name: statistics.median(values) for name, values in timings.items()} | {
        "rounds": {name: values for name, values in timings.items()}
    }


if __name__ == "__main__":
    django.setup()
    if sys.argv[1] == "mint":
        print(json.dumps(mint()))
    else:
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
