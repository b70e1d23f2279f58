"""The official MCP Python SDK (``mcp`` 2.3.0) as the client of a real uvicorn process over
Streamable HTTP at 2026-07-28.

``streamable_http_client(url)`` gives the SDK's transport streams; ``ClientSession.discover()``
adopts 2026-07-28 through ``server/discover`` (no initialize, no session id), after which every
request carries ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` as the SDK writes
them. ``Client(url, mode=...)`` wraps the same transport. Every test runs under
``anyio.fail_after`` so none can hang.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.http.mcphttp_support import (
    FAULT_SECRET,
    MODERN,
    ServerProcess,
    server_env,
    start_server,
)

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

TIMEOUT_SECONDS = 30


@pytest.fixture(scope="module")
def uvicorn_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``uvicorn sample_project.asgi:application`` with the test settings (faultapp added)."""
    directory = tmp_path_factory.mktemp("sdk-http")
    # As in production, DEBUG off: the SDK meets a host fault with nothing of its text.
    env = {**server_env(directory), "DJANGO_DEBUG": "false"}
    server: ServerProcess = start_server("mcp_serve", env, directory)
    yield server.url
    server.stop()


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT_SECONDS):
            return await scenario()

    return anyio.run(bounded)


def test_the_sdk_session_discovers_2026_07_28_and_walks_the_sample_catalog(uvicorn_url):
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async def scenario() -> None:
        async with (
            streamable_http_client(uvicorn_url) as (read, write),
            ClientSession(read, write) as session,
        ):
            discovered = await session.discover()
            assert discovered.supported_versions == [MODERN, "2025-11-25", "2025-06-18"]
            assert session.protocol_version == MODERN
            assert session.initialize_result is None
            assert session.server_info is not None
            assert session.server_info.name == "beammcp-sample-weather"

            tools = await session.list_tools()
            names = {tool.name for tool in tools.tools}
            assert {"echo", "get_forecast", "record_observation"} <= names
            forecast_tool = next(tool for tool in tools.tools if tool.name == "get_forecast")
            assert forecast_tool.output_schema is not None

            echoed = await session.call_tool("echo", {"text": "hello over streamable HTTP"})
            assert not echoed.is_error
            assert [block.text for block in echoed.content] == ["hello over streamable HTTP"]

            forecast = await session.call_tool("get_forecast", {"city": "oslo", "days": 2})
            assert not forecast.is_error
            assert forecast.structured_content is not None
            assert forecast.structured_content["city"] == "Oslo"
            assert [day["day"] for day in forecast.structured_content["days"]] == [1, 2]

            stations = await session.read_resource("weather://stations")
            (contents,) = stations.contents
            assert str(contents.uri) == "weather://stations"
            assert contents.mime_type == "application/json"
            assert "oslo" in json.loads(contents.text)

            templates = await session.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == [
                "fault://files/{+path}",  # tests.faultapp, installed beside the sample
                "weather://observations/{city}",
            ]

            prompt = await session.get_prompt(
                "forecast_briefing", {"city": "sydney", "tone": "upbeat"}
            )
            assert prompt.description == "Briefing for Sydney"
            assert "upbeat weather briefing for Sydney" in prompt.messages[0].content.text

            progressed = await session.call_tool(
                "fault_progress", {}, progress_callback=on_progress
            )
            assert [block.text for block in progressed.content] == ["progressed"]

    run(scenario)
    assert [(progress, total) for progress, total, _ in reports] == [(1, 3), (2, 3), (3, 3)]
    assert reports[0][2] == "step 1 of 3"


def test_the_sdk_client_in_auto_mode_negotiates_2026_07_28_over_http(uvicorn_url):
    async def scenario() -> None:
        async with Client(uvicorn_url, mode="auto") as client:
            assert client.protocol_version == MODERN
            assert client.session.discover_result is not None
            assert client.session.initialize_result is None
            echoed = await client.call_tool("echo", {"text": "auto"})
            assert [block.text for block in echoed.content] == ["auto"]

    run(scenario)


@pytest.mark.orm
def test_the_sdk_client_receives_log_messages_only_when_it_asks_for_a_level(uvicorn_url):
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def scenario(level: str | None) -> None:
        async with Client(
            uvicorn_url, mode=MODERN, log_level=level, logging_callback=on_log
        ) as client:
            result = await client.call_tool(
                "record_observation", {"city": "lisbon", "temperature_c": 18}
            )
            assert result.content[0].text == "Recorded 18 °C for Lisbon."

    run(lambda: scenario(None))
    assert logs == []
    run(lambda: scenario("info"))
    (log,) = logs
    assert log.level == "info"
    assert log.logger == "demo"
    assert isinstance(log.data["recorded"], int)


def test_the_sdk_client_sees_http_errors_as_json_rpc_errors_and_carries_on(uvicorn_url):
    async def scenario() -> None:
        async with Client(uvicorn_url, mode=MODERN) as client:
            with pytest.raises(MCPError) as fault:
                await client.call_tool("fault_explode", {})
            assert fault.value.error.code == -32603
            assert FAULT_SECRET not in fault.value.error.model_dump_json()
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
            assert unknown.value.error.code == -32602
            echoed = await client.call_tool("echo", {"text": "after the errors"})
            assert [block.text for block in echoed.content] == ["after the errors"]

    run(scenario)


def test_the_sdk_client_mirrors_x_mcp_header_arguments_into_headers_the_server_accepts(
    uvicorn_url,
):
    async def scenario() -> None:
        async with Client(uvicorn_url, mode=MODERN) as client:
            tools = await client.list_tools()
            assert "mcphttp_region" in {tool.name for tool in tools.tools}
            for region in ("eu-west", "Zürich", " padded "):
                result = await client.call_tool("mcphttp_region", {"region": region, "count": 7})
                assert not result.is_error
                assert [block.text for block in result.content] == [f"{region}:7"]

    run(scenario)
