"""No unbounded growth from caller input: 10,000 requests, each with names the caller chose
(argument keys, method names, header names, tool names and resource URIs), leave every
process-level cache and table the same size, and little memory behind.

Driven in-process through the project's ASGI application (``sample_project.asgi``: the
router, the HTTP endpoint, the shared server, the catalog, the connectome collector), since
the tables are per process. Each run is warmed up first, so lazily built state exists before
the measure: every ``functools`` cache in the package, the server's compiled index, the
collector's edges and the other module-level tables, before and after; and the interpreter's
allocated memory blocks and the resident set, before and after.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from beammcp_django import notify
from beammcp_django import process as servers
from beammcp_django.connectome.core.observed import process_collector
from beammcp_django.transports.stream_bounds import STREAM_ENDINGS
from tests.stdio.conftest import memory_kib

REQUESTS = 10_000
WARM_UP = 200
# What one run may leave allocated: half of what 10,000 retained names would take (each name
# is at least one block of its own). Runs measured on 2026-11-29 left between -1,140 and +210
# blocks; the connectome's flush thread, when its first flush falls inside a run, leaves
# about 1,500 more, once per process.
RETAINED_BLOCKS_LIMIT = 5_000
# The resident set moves with the allocator's arenas, so its bound is generous.
RESIDENT_LIMIT_KIB = 32 * 1024
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
# The catalog entries these requests reach: the collector may count them, nothing else.
REACHABLE = {
    ("tools/call", "echo"),
    ("completion/complete", ""),
    ("resources/read", "weather://observations/{city}"),
}


def request(
    number: int | None, method: str, params: dict[str, Any], headers: dict[str, str]
) -> tuple[dict[str, Any], list[tuple[bytes, bytes]]]:
    """A message and the headers a correct client sends with it, plus ``headers``."""
    value: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": method,
        "params": {**params, "_meta": META},
    }
    if number is not None:
        value["id"] = number
    head = {
        "host": "127.0.0.1",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    named = params.get("uri" if method == "resources/read" else "name")
    if isinstance(named, str):
        head["mcp-name"] = named
    head.update(headers)
    return value, [(name.encode(), text.encode()) for name, text in head.items()]


def argument_keys(n: int) -> Any:
    """Distinct argument keys: refused by echo's schema, or passed to a completer."""
    key = f"caller-key-{n:05d}-{'k' * (n % 40)}"
    if n % 2:
        return request(n, "tools/call", {"name": "echo", "arguments": {"text": "x", key: n}}, {})
    params = {
        "ref": {"type": "ref/prompt", "name": "forecast_briefing"},
        "argument": {"name": "city", "value": "o"},
        "context": {"arguments": {key: "v"}},
    }
    return request(n, "completion/complete", params, {})


def method_names(n: int) -> Any:
    """Distinct method names: requests (404) and notifications (202)."""
    method = f"caller/method-{n:05d}"
    return request(n if n % 2 else None, method, {}, {})


def header_names(n: int) -> Any:
    """Distinct header names, plain and ``Mcp-Param-*``, on a call that reaches the tool."""
    headers = {f"x-caller-header-{n:05d}": "1", f"mcp-param-caller{n:05d}": "2"}
    return request(n, "tools/call", {"name": "echo", "arguments": {"text": "x"}}, headers)


def entry_names(n: int) -> Any:
    """Distinct tool names (refused) and resource URIs (read through the template)."""
    if n % 2:
        return request(n, "tools/call", {"name": f"caller_tool_{n:05d}", "arguments": {}}, {})
    return request(n, "resources/read", {"uri": f"weather://observations/caller-{n:05d}"}, {})


@dataclass(frozen=True)
class Scenario:
    build: Callable[[int], Any]
    statuses: frozenset[int]  # what every answer's status must be among
    host_calls: int  # how many of the requests reach host code (and the collector)


SCENARIOS = {
    "argument keys": Scenario(argument_keys, frozenset({200}), REQUESTS // 2),
    "method names": Scenario(method_names, frozenset({202, 404}), 0),
    "header names": Scenario(header_names, frozenset({200}), REQUESTS),
    "tool names and resource uris": Scenario(entry_names, frozenset({400}), REQUESTS // 2),
}


async def post(app: Any, value: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> int:
    """One request through the ASGI application; its status."""
    delivered = False
    started: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": json.dumps(value).encode()}
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            started.append(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return started[0]


def package_caches() -> dict[str, Any]:
    """Every ``functools`` cache the package's loaded modules define, by qualified name."""
    caches = {}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] != "beammcp_django":
            continue
        for value in vars(module).values():
            if callable(getattr(value, "cache_info", None)) and value.__module__ == name:
                caches[f"{name}.{value.__qualname__}"] = value
    return caches


def table_sizes(caches: dict[str, Any]) -> dict[str, int]:
    """The size of every process-level cache and table a request could touch."""
    index = servers.get_server().index()
    sizes = {name: cache.cache_info().currsize for name, cache in caches.items()}
    sizes.update(
        {
            "server index (identity)": id(index),
            "compiled entries": len(index.compiled),
            "tool entries": len(index.tool_entries),
            "prompt entries": len(index.prompt_entries),
            "resources": len(index.resources),
            "templates": len(index.templates),
            "collector edges": len(process_collector.snapshot()),
            "stream endings": len(STREAM_ENDINGS),
            "scheduled publications": len(notify._scheduled),
            "loggers": len(logging.Logger.manager.loggerDict),
            "tasks": len(asyncio.all_tasks()),
        }
    )
    return sizes


def resident_kib() -> int:
    return memory_kib(os.getpid(), "VmRSS")


def host_calls() -> int:
    return sum(observation.count for observation in process_collector.snapshot().values())


@dataclass
class Measured:
    before: dict[str, int]
    after: dict[str, int]
    statuses: dict[int, int]
    host_calls: int
    blocks: int  # interpreter memory blocks allocated during the run and still alive after it
    resident_kib: int  # growth of the process's resident set during the run


async def settle() -> None:
    """Let finished exchanges' cancelled tasks unwind, then collect garbage."""
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()


async def run(build: Callable[[int], Any]) -> Measured:
    from sample_project.asgi import application

    for n in range(REQUESTS, REQUESTS + WARM_UP):
        await post(application, *build(n))
    await settle()
    caches = package_caches()
    before = table_sizes(caches)
    calls, blocks, resident = host_calls(), sys.getallocatedblocks(), resident_kib()
    statuses: dict[int, int] = {}
    for n in range(REQUESTS):
        status = await post(application, *build(n))
        statuses[status] = statuses.get(status, 0) + 1
    await settle()
    return Measured(
        before,
        table_sizes(caches),
        statuses,
        host_calls() - calls,
        sys.getallocatedblocks() - blocks,
        resident_kib() - resident,
    )


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_ten_thousand_caller_chosen_names_leave_every_process_table_the_same_size(scenario):
    expected = SCENARIOS[scenario]
    counted_before = set(process_collector.snapshot())
    measured = asyncio.run(run(expected.build))
    assert set(measured.statuses) <= expected.statuses, measured.statuses
    assert measured.host_calls == expected.host_calls, "the requests reach host code as meant"
    changed = {
        name: (size, measured.after[name])
        for name, size in measured.before.items()
        if measured.after[name] != size
    }
    assert not changed, f"{scenario}: tables changed size (before, after): {changed}"
    counted = set(process_collector.snapshot()) - counted_before
    assert counted <= REACHABLE, f"the collector counts what is no catalog entry: {counted}"
    assert measured.blocks < RETAINED_BLOCKS_LIMIT, (
        f"{scenario}: {measured.blocks} memory blocks allocated during the run stay alive"
    )
    assert measured.resident_kib < RESIDENT_LIMIT_KIB, (
        f"{scenario}: the resident set grew {measured.resident_kib} KiB"
    )
