"""What the HTTP, stdio, admin and interop tests share: the 2026-07-28 request envelope,
running a ``manage.py`` command as its own process, and one POST to an ASGI application in
process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
MODERN = "2026-07-28"
# The tools the sample's catalog lists to a caller with no permission, in list order.
# What the sample lists to a client that did not declare MCP Apps (as these tests' clients
# do not): refresh_forecast is the forecast chart's, for a host that declared the extension.
SAMPLE_TOOLS = [
    "create_watch_list",
    "current_conditions",
    "echo",
    "get_forecast",
    "record_observation",
    "seasonal_report",
    "watch_city",
    "watched_forecast",
]
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def meta(**extra: Any) -> dict[str, Any]:
    """A 2026-07-28 ``params._meta``: version and capabilities, plus ``extra``."""
    value: dict[str, Any] = {META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: {}}
    value.update(extra)
    return value


def message(
    request_id: str | int, method: str, params: Mapping[str, Any] | None = None, **meta_extra: Any
) -> dict[str, Any]:
    """A 2026-07-28 request; ``meta_extra`` goes into ``params._meta``."""
    body = dict(params or {})
    body["_meta"] = meta(**meta_extra)
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def manage(env: Mapping[str, str], *arguments: str) -> subprocess.CompletedProcess[bytes]:
    """``manage.py <arguments>`` in a process of its own; fails the test unless it succeeds."""
    done = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO_ROOT,
        env=dict(env),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done


async def asgi_post(
    application: Callable[..., Awaitable[None]], scope: dict[str, Any], body: bytes
) -> list[dict[str, Any]]:
    """``body`` as one ``http.request`` to an ASGI application in this process, from a client
    that stays connected (no disconnect comes); the messages the application sent."""
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await application(scope, receive, send)
    return sent


def examples(count: int) -> int:
    """A Hypothesis test's example count: ``count`` on the full leg; under a later leg's
    profile (tests/conftest.py) the same share of that profile's smaller default."""
    from hypothesis import settings

    return max(1, count * settings.default.max_examples // 100)
