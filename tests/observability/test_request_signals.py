"""Django's ``request_started`` and ``request_finished`` for MCP requests, counted by a host's
receiver (the probe app's) in a real uvicorn process and read through a Django view.

Through ``get_asgi_application()`` the endpoint sends both for every MCP request, refusals
included, with ``McpEndpoint`` as the sender and the ASGI scope; through the plain Django
view, Django's own handler sends them (``ASGIHandler``) and the endpoint adds none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.mcphttp_support import (
    PLAIN_APP,
    ServerProcess,
    exchange,
    http_request,
    post,
    start_server,
)
from tests.observability.conftest import call_tool, observe_env

pytestmark = pytest.mark.slow


def counts(server: ServerProcess) -> dict[str, Any]:
    response = exchange(server.port, http_request(None, method="GET", path="/probe/signals"))
    assert response.status == 200, response.body
    return json.loads(response.body)


def settled(server: ServerProcess, sender: str, started: int, timeout: float = 10.0) -> Any:
    """The counts once ``sender`` has as many request_finished as ``started`` (the signal
    goes after the response, so it may land just after the client read it)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = counts(server)
        if seen["finished"].get(sender, 0) >= started:
            return seen
        assert time.monotonic() < deadline, seen
        time.sleep(0.02)


def mcp_requests(port: int) -> int:
    """A tool call, a refusal before the body, a notification: three MCP requests."""
    assert call_tool(port, "echo", {"text": "hello"}).status == 200
    assert exchange(port, http_request(None, method="GET", close=True)).status == 405
    assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
    return 3


def test_every_mcp_request_sends_request_started_and_request_finished(
    observed_server: ServerProcess,
) -> None:
    before = counts(observed_server)
    sent = mcp_requests(observed_server.port)
    expected = before["started"].get("McpEndpoint", 0) + sent
    after = settled(observed_server, "McpEndpoint", expected)
    assert after["started"]["McpEndpoint"] == expected
    assert after["finished"]["McpEndpoint"] == expected
    assert after["paths"]["McpEndpoint"][-sent:] == ["/mcp"] * sent
    assert "/mcp" not in after["paths"]["ASGIHandler"]  # only the probe's own requests


@pytest.fixture(scope="module")
def plain_view_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("observe-plain")
    server = start_server("uvicorn", observe_env(directory), directory, app=PLAIN_APP)
    yield server
    server.stop()


def test_through_the_plain_django_view_only_djangos_handler_sends_them(
    plain_view_server: ServerProcess,
) -> None:
    before = counts(plain_view_server)
    sent = mcp_requests(plain_view_server.port)
    mcp_before = before["paths"]["ASGIHandler"].count("/mcp")
    after = settled(plain_view_server, "ASGIHandler", before["started"]["ASGIHandler"] + sent)
    assert after["paths"]["ASGIHandler"].count("/mcp") == mcp_before + sent
    assert "McpEndpoint" not in after["started"]
    assert "McpEndpoint" not in after["finished"]
