"""The official MCP Python SDK (``mcp`` 2.3.0) as the client of ``manage.py mcp_stdio``.

The SDK launches the server itself (``stdio_client``) and speaks either revision:
``ClientSession.discover()`` adopts 2026-07-28 through ``server/discover``;
``ClientSession.initialize()`` runs the 2025-11-25 handshake; ``Client(mode="auto")``
probes ``server/discover`` first and falls back to ``initialize`` only when the probe fails.
Every test runs under ``anyio.fail_after`` so none can hang.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, MCPDeprecationWarning, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

REPO_ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TIMEOUT_SECONDS = 30
# Kept in step with tests/faultapp/mcp.py.
SECRET = "fault-secret-7f3a9c-do-not-leak"


def parameters(tmp_path: Path, settings: str = "sample_project.settings") -> StdioServerParameters:
    """``python manage.py mcp_stdio`` from the repository root, on a throwaway database."""
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio"],
        cwd=str(REPO_ROOT),
        env={
            "DJANGO_SETTINGS_MODULE": settings,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        },
    )


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT_SECONDS):
            return await scenario()

    return anyio.run(bounded)


async def exercise_the_sample_catalog(session: Any) -> None:
    """The same walk through the demo catalog, through a ClientSession or a Client."""
    tools = await session.list_tools()
    names = {tool.name for tool in tools.tools}
    assert {"echo", "get_forecast", "record_observation"} <= names
    forecast_tool = next(tool for tool in tools.tools if tool.name == "get_forecast")
    assert forecast_tool.output_schema is not None

    echoed = await session.call_tool("echo", {"text": "hello from the SDK"})
    assert not echoed.is_error
    assert [block.text for block in echoed.content] == ["hello from the SDK"]

    forecast = await session.call_tool("get_forecast", {"city": "oslo", "days": 2})
    assert not forecast.is_error
    assert forecast.structured_content is not None
    assert forecast.structured_content["city"] == "Oslo"
    assert [day["day"] for day in forecast.structured_content["days"]] == [1, 2]
    assert json.loads(forecast.content[0].text) == forecast.structured_content

    stations = await session.read_resource("weather://stations")
    (contents,) = stations.contents
    assert str(contents.uri) == "weather://stations"
    assert contents.mime_type == "application/json"
    assert "oslo" in json.loads(contents.text)

    prompt = await session.get_prompt("forecast_briefing", {"city": "sydney", "tone": "upbeat"})
    assert prompt.description == "Briefing for Sydney"
    assert "upbeat weather briefing for Sydney" in prompt.messages[0].content.text

    templates = await session.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "weather://observations/{city}"
    ]


@pytest.mark.parametrize(
    ("handshake", "expected_version"), [("discover", MODERN), ("initialize", LEGACY)]
)
def test_the_sdk_client_session_serves_the_sample_catalog_in_either_revision(
    tmp_path, handshake, expected_version
):
    errlog_path = tmp_path / "server-stderr.log"

    async def scenario() -> None:
        with errlog_path.open("w") as errlog:
            async with (
                stdio_client(parameters(tmp_path), errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                if handshake == "discover":
                    discovered = await session.discover()
                    assert discovered.supported_versions == [MODERN, LEGACY, "2025-06-18"]
                    assert session.initialize_result is None
                else:
                    initialized = await session.initialize()
                    assert initialized.protocol_version == LEGACY
                    assert session.discover_result is None
                assert session.protocol_version == expected_version
                assert session.server_info is not None
                assert session.server_info.name == "beammcp-sample-weather"
                await exercise_the_sample_catalog(session)

    run(scenario)


def test_the_sdk_client_in_auto_mode_negotiates_2026_07_28_through_server_discover(tmp_path):
    async def scenario() -> None:
        async with Client(parameters(tmp_path), mode="auto") as client:
            assert client.protocol_version == MODERN
            # The probe answered: the session adopted it and never fell back to initialize.
            assert client.session.discover_result is not None
            assert client.session.initialize_result is None
            assert client.server_capabilities.tools is not None
            assert client.instructions is not None
            await exercise_the_sample_catalog(client)

    run(scenario)


def test_the_sdk_client_forced_to_legacy_mode_uses_the_2025_11_25_handshake(tmp_path):
    async def scenario() -> None:
        async with Client(parameters(tmp_path), mode="legacy") as client:
            assert client.protocol_version == LEGACY
            assert client.session.initialize_result is not None
            assert client.session.discover_result is None
            with pytest.warns(MCPDeprecationWarning):
                pong = await client.send_ping()
            assert pong is not None
            await exercise_the_sample_catalog(client)

    run(scenario)


def test_the_sdk_client_pinned_to_2026_07_28_works_without_any_handshake(tmp_path):
    async def scenario() -> None:
        async with Client(parameters(tmp_path), mode=MODERN) as client:
            assert client.protocol_version == MODERN
            assert client.session.initialize_result is None
            echoed = await client.call_tool("echo", {"text": "no probe"})
            assert [block.text for block in echoed.content] == ["no probe"]

    run(scenario)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_sees_a_host_fault_as_internal_error_without_its_detail(tmp_path, mode):
    async def scenario() -> None:
        async with Client(parameters(tmp_path, "tests.stdio_settings"), mode=mode) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("fault_explode", {})
            assert raised.value.error.code == -32603
            assert SECRET not in raised.value.error.model_dump_json()
            # The connection survives the fault.
            echoed = await client.call_tool("echo", {"text": "after the fault"})
            assert [block.text for block in echoed.content] == ["after the fault"]

    run(scenario)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_progress_callback_receives_each_progress_report(tmp_path, mode):
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async def scenario() -> None:
        async with Client(parameters(tmp_path, "tests.stdio_settings"), mode=mode) as client:
            result = await client.call_tool("fault_progress", {}, progress_callback=on_progress)
            assert [block.text for block in result.content] == ["progressed"]

    run(scenario)
    assert [(progress, total) for progress, total, _ in reports] == [(1, 3), (2, 3), (3, 3)]
    assert reports[0][2] == "step 1 of 3"
