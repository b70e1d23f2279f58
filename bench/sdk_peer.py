"""The official MCP Python SDK (``mcp``, pinned in requirements/test.txt) serving the sample
project's tools, for ``bench/http.py`` to compare against ours.

``application`` is the SDK's own Streamable HTTP ASGI app (``MCPServer.streamable_http_app``)
in stateless JSON-response mode, mounted at ``/mcp`` and served by the same uvicorn command
line as ours::

    .venv/bin/python -m uvicorn bench.sdk_peer:application --port 8001

A request whose ``MCP-Protocol-Version`` is ``2026-07-28`` takes the SDK's single-exchange
path (no ``initialize``, no session, ``_meta`` in params), as ours does; ``2025-11-25`` takes
its legacy stateless path (also without ``initialize``). The tools mirror the sample
catalog's: the same names, titles, annotations and argument schemas as far as the SDK
derives schemas from signatures (it adds ``title`` keys and omits
``additionalProperties: false``), and ``tools/list`` carries the sample's cache hint.
``echo`` is a plain function (the SDK runs it in a worker thread, as ours runs a sync tool);
``echo_async`` is a coroutine (awaited on the event loop); ``echo_on_loop``, which ours runs
on the loop (``never_blocks``), is listed alike and is a plain function here (the SDK has no
such declaration). ``record_observation`` is
declared for ``tools/list`` only: it stores nothing (the benchmark never calls it).
"""

from __future__ import annotations

import gc
import hashlib
import os
from typing import Annotated, Literal

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

City = Literal["amsterdam", "lisbon", "nairobi", "oslo", "sydney"]
Condition = Literal["sunny", "cloudy", "rain", "wind", "snow"]
CONDITIONS: tuple[Condition, ...] = ("sunny", "cloudy", "rain", "wind", "snow")
CITY_NAMES = {
    "amsterdam": "Amsterdam",
    "lisbon": "Lisbon",
    "nairobi": "Nairobi",
    "oslo": "Oslo",
    "sydney": "Sydney",
}
EchoText = Annotated[str, Field(description="What to send back.")]
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

server = MCPServer(
    name="beammcp-sample-weather",
    title="Sample weather service",
    instructions=(
        "A demo weather service: forecast cities, record observations, read stations. "
        "Every figure is made up; nothing here calls the network."
    ),
    version="0.1.0",
    log_level="WARNING",
    cache_hints={"tools/list": CacheHint(ttl_ms=60_000, scope="public")},
)


@server.tool(
    title="Echo",
    description="Answers its text unchanged: a smoke test and the benchmarks' workload.",
    annotations=READ_ONLY,
    structured_output=False,
)
def echo(text: EchoText) -> str:
    return text


@server.tool(
    title="Echo (async)",
    description="Answers its text unchanged, from a coroutine.",
    annotations=READ_ONLY,
    structured_output=False,
)
async def echo_async(text: EchoText) -> str:
    return text


@server.tool(
    title="Echo (on the loop)",
    description="Answers its text unchanged, on the event loop: it never blocks.",
    annotations=READ_ONLY,
    structured_output=False,
)
def echo_on_loop(text: EchoText) -> str:
    return text


class ForecastDay(BaseModel):
    day: int
    high_c: float
    condition: Condition


class Forecast(BaseModel):
    city: str
    days: list[ForecastDay]


@server.tool(
    title="Forecast",
    description="The made-up forecast of a city for the next days, as structured data.",
    annotations=READ_ONLY,
)
async def get_forecast(city: City, days: Annotated[int, Field(ge=1, le=7)] = 3) -> Forecast:
    def made_up_day(day: int) -> ForecastDay:
        digest = hashlib.sha256(f"{city}:{day}".encode()).digest()
        return ForecastDay(
            day=day,
            high_c=round(digest[0] / 255 * 35 - 5, 1),
            condition=CONDITIONS[digest[1] % len(CONDITIONS)],
        )

    return Forecast(city=CITY_NAMES[city], days=[made_up_day(day) for day in range(1, days + 1)])


@server.tool(
    title="Record an observation",
    description="Stores a temperature reading for a city (through the ORM, in a worker thread).",
    annotations=ToolAnnotations(
        destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    structured_output=False,
)
def record_observation(city: City, temperature_c: Annotated[float, Field(ge=-90, le=60)]) -> str:
    return f"Recorded {temperature_c} °C for {CITY_NAMES[city]}."


application = server.streamable_http_app(
    streamable_http_path="/mcp", json_response=True, stateless_http=True
)

# As ours does with the sample's FREEZE_HEAP_AT_STARTUP (on unless BENCH_FREEZE=0): the
# process's startup objects leave the collector's reach, so both servers are measured with
# the same garbage-collection setting.
if os.environ.get("BENCH_FREEZE", "1") != "0":
    gc.collect()
    gc.freeze()
