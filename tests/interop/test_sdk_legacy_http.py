"""The official MCP Python SDK (``mcp`` 2.3.0) in ``legacy`` mode as the client of a real
``mcp_serve`` process: it opens a 2025-11-25 session with ``initialize`` on the endpoint that
serves 2026-07-28 statelessly, and everything a session offers works through it: the catalog,
progress, logs after ``logging/setLevel``, a resource subscription whose update arrives on the
session's GET stream, and tools whose ``InputRequired`` becomes real sampling and elicitation
requests that the SDK's callbacks answer. ``auto`` mode on the same endpoint stays modern."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, types

from tests.http.mcphttp_support import ServerProcess, server_env, start_server
from tests.interop.test_sdk_http_client import run

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

LEGACY = "2025-11-25"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("sdk-legacy-http")
    server: ServerProcess = start_server("mcp_serve", server_env(directory), directory)
    yield server.url
    server.stop()


async def model(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    question = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"the model read {question!r}"),
        model="test-model",
        stop_reason="endTurn",
    )


class User:
    """Answers each elicitation with the next city, and remembers what it was asked."""

    def __init__(self, *cities: str) -> None:
        self.cities = list(cities)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"city": self.cities.pop(0)})


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    return result.content[0].text


def test_a_legacy_session_serves_the_catalog_progress_and_logs(url):
    logs: list[Any] = []
    reports: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async def scenario() -> None:
        async with Client(url, mode="legacy", logging_callback=on_log) as client:
            assert client.protocol_version == LEGACY
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"echo", "get_forecast", "mcphttp_ask_model"} <= names
            assert text(await client.call_tool("echo", {"text": "old era"})) == "old era"
            stations = await client.read_resource("weather://stations")
            assert "oslo" in stations.contents[0].text
            prompt = await client.get_prompt("forecast_briefing", {"city": "oslo"})
            assert prompt.messages
            await client.call_tool("fault_progress", {}, progress_callback=on_progress)
            await client.set_logging_level("info")
            await client.call_tool("record_observation", {"city": "oslo", "temperature_c": 3})

    run(scenario)
    assert reports == [1, 2, 3]
    assert any(isinstance(entry, dict) and "recorded" in entry for entry in logs)


def test_input_required_becomes_sampling_and_elicitation_requests_the_sdk_answers(url):
    user = User("Oslo", "Lima")

    async def scenario() -> tuple[str, str]:
        async with Client(
            url, mode="legacy", sampling_callback=model, elicitation_callback=user
        ) as client:
            sampled = text(await client.call_tool("mcphttp_ask_model", {"question": "why?"}))
            asked = text(await client.call_tool("mcphttp_ask_user", {"rounds": 2}))
            return sampled, asked

    sampled, asked = run(scenario)
    assert sampled == "asked the model: the model read 'why?'"
    assert asked == "Oslo, Lima"
    assert user.asked == ["City number 1?", "City number 2?"]


def test_a_subscribed_resources_update_reaches_the_sdk_on_the_sessions_stream(url):
    updated = anyio.Event()
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            seen.append(str(root.params.uri))
            updated.set()

    async def scenario() -> None:
        async with Client(url, mode="legacy", message_handler=on_message) as client:
            await client.subscribe_resource("weather://stations")
            # The SDK opens the GET stream on its own after initialize, and a stream is not
            # resumable yet: touch until the stream is there to carry the update.
            with anyio.fail_after(10):
                while not updated.is_set():
                    await client.call_tool("mcphttp_touch", {"uri": "weather://stations"})
                    with anyio.move_on_after(0.5):
                        await updated.wait()

    run(scenario)
    assert set(seen) == {"weather://stations"}


def test_auto_mode_on_the_same_endpoint_stays_modern(url):
    async def scenario() -> str:
        async with Client(url, mode="auto") as client:
            assert text(await client.call_tool("echo", {"text": "new era"})) == "new era"
            return client.protocol_version

    assert run(scenario) == "2026-07-28"


def test_the_sdk_resumes_a_released_stream_and_gets_the_rest(url):
    """``context.release_connection()`` ends the call's connection after the priming event;
    the SDK reconnects with ``GET`` and ``Last-Event-ID`` (after the stream's ``retry``) and
    receives the progress that followed and the result."""
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async def scenario() -> str:
        async with Client(url, mode="legacy") as client:
            released = await client.call_tool("mcphttp_release", {}, progress_callback=on_progress)
            return text(released)

    assert run(scenario) == "released: True"
    assert reports == [1, 2, 3]
