"""Fixtures for the sans-IO protocol core: an in-memory catalog and a way to drive a Server.

Nothing here imports Django; these tests exercise ``beammcp_django.protocol`` alone.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from beammcp_django.protocol import content
from beammcp_django.protocol.catalog import (
    Completion,
    PromptArgument,
    PromptResult,
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolResult,
    ToolSpec,
)
from beammcp_django.protocol.errors import ResourceNotFound, ToolError
from beammcp_django.protocol.request import LegacySession
from beammcp_django.protocol.revisions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN,
)
from beammcp_django.protocol.server import Server, ServerOptions

CURSOR_KEY = b"protocol-tests-cursor-key"

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                "required": ["sku", "qty"],
            },
        },
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
    },
}
OPEN_SCHEMA = {"type": "object"}
WEATHER_OUTPUT = {
    "type": "object",
    "properties": {"celsius": {"type": "number"}},
    "required": ["celsius"],
}


def _add(arguments: dict[str, Any], context: Any) -> str:
    return str(arguments["a"] + arguments["b"])


def _echo(arguments: dict[str, Any], context: Any) -> Any:
    return [content.text("echoed")]


def _crash(arguments: dict[str, Any], context: Any) -> Any:
    raise RuntimeError("database password is hunter2")


def _refuse(arguments: dict[str, Any], context: Any) -> Any:
    raise ToolError("the warehouse is closed on Sundays")


def _weather(arguments: dict[str, Any], context: Any) -> Any:
    if arguments.get("mode") == "broken":
        return ToolResult(structured={"celsius": "scorching-secret-detail"})
    if arguments.get("mode") == "missing":
        return ToolResult(content=[content.text("no structure")])
    return ToolResult(structured={"celsius": 21.5})


async def _report(arguments: dict[str, Any], context: Any) -> Any:
    """The one async tool: it reports progress and logs at two levels."""
    await asyncio.sleep(0)
    context.progress(1, 2, "half way")
    context.log("debug", "a debug detail")
    context.log("warning", {"disk": "nearly full"}, logger="storage")
    context.progress(2, 2)
    return "reported"


class MemoryCatalog:
    """A plain host catalog: tuples of specs and the four callables of the host contract.

    ``dispatch`` is a coroutine function (so one tool, ``report``, can await); the reader,
    the prompt renderer and the completer are plain functions run through ``run_sync``.
    Every host call is recorded in ``calls``.
    """

    def __init__(self) -> None:
        self.tools: tuple[ToolSpec, ...] = (
            ToolSpec("add", ADD_SCHEMA, description="Add two integers"),
            ToolSpec("crash", OPEN_SCHEMA),
            ToolSpec("echo", OPEN_SCHEMA),
            ToolSpec("oracle", OPEN_SCHEMA),
            ToolSpec("order", ORDER_SCHEMA),
            ToolSpec("refuse", OPEN_SCHEMA),
            ToolSpec("report", OPEN_SCHEMA),
            ToolSpec("weather", OPEN_SCHEMA, output_schema=WEATHER_OUTPUT),
        )
        self.resources: tuple[ResourceSpec | ResourceTemplateSpec, ...] = (
            ResourceSpec("config://app", "app-config", mime_type="application/json"),
            ResourceSpec("config://empty", "empty"),
            ResourceSpec("config://binary", "binary", mime_type="image/png"),
            ResourceTemplateSpec("file:///docs/{name}", "doc", mime_type="text/markdown"),
            ResourceTemplateSpec("users://{user_id}/profile", "profile"),
        )
        self.prompts: tuple[PromptSpec, ...] = (
            PromptSpec(
                "greet",
                description="Greet someone",
                arguments=(
                    PromptArgument("name", required=True),
                    PromptArgument("tone"),
                ),
            ),
            PromptSpec("summary"),
        )
        self.handlers: dict[str, Any] = {
            "add": _add,
            "crash": _crash,
            "echo": _echo,
            "oracle": lambda arguments, context: self.oracle,
            "order": _echo,
            "refuse": _refuse,
            "report": _report,
            "weather": _weather,
        }
        self.oracle: Any = "oracle says hi"
        self.completion: Any = ["alpha", "beta"]
        self.calls: list[tuple[Any, ...]] = []
        self.contexts: list[Any] = []

    async def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        self.calls.append(("dispatch", name, arguments))
        self.contexts.append(context)
        handler = self.handlers[name]
        if inspect.iscoroutinefunction(handler):
            return await handler(arguments, context)
        return handler(arguments, context)

    def read_resource(self, match: Any, context: Any) -> Any:
        self.calls.append(("read_resource", match.uri, dict(match.variables)))
        if match.uri == "config://app":
            return '{"debug": false}'
        if match.uri == "config://empty":
            return []
        if match.uri == "config://binary":
            return b"\x89PNG"
        if match.spec.name == "profile":
            if match.variables["user_id"] != "42":
                raise ResourceNotFound
            return content.text_contents(match.uri, "user 42")
        return f"# {match.variables['name']}"

    def get_prompt(self, name: str, arguments: dict[str, str], context: Any) -> Any:
        self.calls.append(("get_prompt", name, arguments))
        if name == "summary":
            return 7  # off contract on purpose
        return PromptResult(
            messages=[content.user(f"Hello {arguments['name']}")], description="A greeting"
        )

    def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], arguments: dict[str, Any], context: Any
    ) -> Any:
        self.calls.append(("complete", ref, argument, arguments))
        return self.completion


class CatalogWithoutCompletion(MemoryCatalog):
    complete = None


def make_server(catalog: Any | None = None, **options: Any) -> Server:
    settings: dict[str, Any] = {"name": "test-server", "version": "9.9.9"}
    settings.update(options)
    return Server(
        catalog if catalog is not None else MemoryCatalog(),
        ServerOptions(**settings),
        cursor_key=CURSOR_KEY,
    )


def call(server: Server, message: Any, **kw: Any) -> dict[str, Any] | None:
    """Run one message through the server synchronously."""
    return asyncio.run(server.handle(message, **kw))


def meta(**extra: Any) -> dict[str, Any]:
    """A valid 2026-07-28 request ``_meta``, plus any extra keys."""
    value: dict[str, Any] = {META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: {}}
    value.update(extra)
    return value


def request(
    method: str, params: dict[str, Any] | None = None, *, id: Any = 1, **meta_extra: Any
) -> dict[str, Any]:
    """A 2026-07-28 request with a valid ``params._meta``."""
    body = dict(params or {})
    body["_meta"] = meta(**meta_extra)
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": body}


def listen(
    server: Server, notifications: dict[str, Any], principal: Any, **meta_extra: Any
) -> tuple[Any, Any, dict[str, Any]]:
    """A subscriptions/listen asking for ``notifications`` (``meta_extra`` in its ``_meta``),
    through a transport's listener that acknowledges and returns: the reply, the filter
    acknowledged, and the one the stream is served by."""
    sent: list[dict[str, Any]] = []
    delivered: dict[str, Any] = {}

    async def listener(subscription_id, served_by, context, acknowledge):
        acknowledge()
        delivered.update(served_by)

    async def run():
        message = request("subscriptions/listen", {"notifications": notifications}, **meta_extra)
        parsed = server.receive(message)
        if isinstance(parsed, dict):  # refused before it is served
            return parsed
        return await server.serve(parsed, emit=sent.append, listen=listener, principal=principal)

    reply = asyncio.run(run())
    acknowledged = sent[0]["params"]["notifications"] if sent else None
    return reply, acknowledged, delivered


def legacy_request(
    method: str, params: dict[str, Any] | None = None, *, id: Any = 1
) -> dict[str, Any]:
    """A 2025-11-25 request: no ``_meta`` at all."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.fixture
def catalog() -> MemoryCatalog:
    return MemoryCatalog()


@pytest.fixture
def server(catalog: MemoryCatalog) -> Server:
    return make_server(catalog)


@pytest.fixture
def legacy_server(catalog: MemoryCatalog) -> Server:
    return make_server(catalog, legacy=True)


@pytest.fixture
def session() -> LegacySession:
    return LegacySession()


# Re-exported for the test modules.
__all__ = [
    "CURSOR_KEY",
    "CatalogWithoutCompletion",
    "Completion",
    "MemoryCatalog",
    "call",
    "legacy_request",
    "make_server",
    "meta",
    "request",
]
