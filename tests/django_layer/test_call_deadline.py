"""CALL_TIMEOUT_SECONDS: a host call past its deadline is refused by name; the server goes on."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.revisions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN,
)
from beammcp_django.protocol.server import Server, ServerOptions
from beammcp_django.runtime.host_threads import call_deadline, run_sync_host

OPEN = {"type": "object"}


class SlowCatalog:
    """`nap` sleeps as long as asked: async when `mode` says so, else in a worker thread."""

    tools = (ToolSpec("nap", OPEN), ToolSpec("host_timeout", OPEN))
    resources = ()
    prompts = ()

    def __init__(self) -> None:
        self.released = threading.Event()

    async def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        if name == "host_timeout":
            raise TimeoutError("the host's own upstream timed out")
        if arguments.get("mode") == "sync":
            return await run_sync_host(self._nap_in_thread, arguments["seconds"])
        await asyncio.sleep(arguments["seconds"])
        return "rested"

    def _nap_in_thread(self, seconds: float) -> str:
        time.sleep(seconds)
        self.released.set()
        return "rested"

    def read_resource(self, uri: str, context: Any) -> Any:
        raise AssertionError("not used")

    def get_prompt(self, name: str, arguments: Any, context: Any) -> Any:
        raise AssertionError("not used")


def _call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return _timed_call(server, name, arguments)[0]


def _timed_call(
    server: Server, name: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], float]:
    """The reply and the seconds until it came (asyncio.run then waits for worker threads)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: {}},
        },
    }

    async def answer() -> tuple[dict[str, Any], float]:
        started = time.monotonic()
        reply = await server.handle(message)
        return reply, time.monotonic() - started

    return asyncio.run(answer())


def _server(catalog: SlowCatalog, seconds: float) -> Server:
    return Server(
        catalog,
        ServerOptions(name="t", version="1"),
        cursor_key=b"k",
        bound_host=call_deadline(seconds),
    )


def test_an_async_host_call_past_the_deadline_gets_internal_error_naming_the_limit():
    server = _server(SlowCatalog(), 0.2)
    reply = _call(server, "nap", {"seconds": 5})
    assert reply["error"] == {
        "code": -32603,
        "message": "the host did not answer within 0.2 s",
    }
    assert _call(server, "nap", {"seconds": 0})["result"]["content"][0]["text"] == "rested"


def test_a_sync_host_call_past_the_deadline_releases_the_caller_while_its_thread_finishes():
    catalog = SlowCatalog()
    server = _server(catalog, 0.2)
    reply, seconds = _timed_call(server, "nap", {"seconds": 1.0, "mode": "sync"})
    assert seconds < 0.9
    assert reply["error"]["message"] == "the host did not answer within 0.2 s"
    assert catalog.released.wait(5), "the worker thread runs on to the end"


def test_the_hosts_own_timeout_error_is_a_host_fault_not_the_deadline():
    reply = _call(_server(SlowCatalog(), 5), "host_timeout", {})
    assert reply["error"] == {"code": -32603, "message": "internal error; the server logged it"}
