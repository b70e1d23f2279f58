"""The router answers the lifespan protocol for Django's handler (which refuses it) and runs
its shutdown hook at shutdown; a host's own application is handed the protocol instead."""

from __future__ import annotations

import asyncio
from typing import Any

from django.core.handlers.asgi import ASGIHandler

from beammcp_django.asgi import McpRouter, build_endpoint


def run_lifespan(router: McpRouter) -> list[str]:
    sent: list[str] = []
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    asyncio.run(router({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    return sent


def test_startup_and_shutdown_are_answered_and_the_hook_runs_at_shutdown():
    ran: list[str] = []
    router = McpRouter(ASGIHandler(), build_endpoint(), on_shutdown=lambda: ran.append("hook"))
    assert run_lifespan(router) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert ran == ["hook"]


def test_a_raising_hook_is_logged_and_shutdown_still_completes(caplog):
    def hook() -> None:
        raise RuntimeError("flush failed")

    router = McpRouter(ASGIHandler(), build_endpoint(), on_shutdown=hook)
    assert run_lifespan(router)[-1] == "lifespan.shutdown.complete"
    assert "the MCP shutdown hook raised" in caplog.text


def test_a_hosts_own_application_answers_the_protocol_and_the_hook_still_runs():
    ran: list[str] = []
    answered: list[str] = []

    async def host_app(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            answered.append(message["type"])
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return

    router = McpRouter(host_app, build_endpoint(), on_shutdown=lambda: ran.append("hook"))
    assert run_lifespan(router) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert answered == ["lifespan.startup", "lifespan.shutdown"]
    assert ran == ["hook"]


def test_a_hosts_application_that_refuses_the_protocol_is_answered_for_and_the_hook_runs():
    ran: list[str] = []

    async def refusing_app(scope: Any, receive: Any, send: Any) -> None:
        await receive()  # takes the startup message, then fails, as Channels' router does
        raise ValueError("No application configured for scope type 'lifespan'")

    router = McpRouter(refusing_app, build_endpoint(), on_shutdown=lambda: ran.append("hook"))
    assert run_lifespan(router) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert ran == ["hook"]
