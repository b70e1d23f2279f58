"""Two other ways the endpoint is served: ``manage.py runserver`` (daphne's, because
``daphne`` is in INSTALLED_APPS) and Django's own ASGI handler without the MCP router, where
``/mcp`` reaches the plain view ``beammcp_django.views.endpoint_view``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    MODERN,
    PLAIN_APP,
    ServerProcess,
    close_mid_call,
    discover_works,
    exchange,
    http_request,
    message,
    post,
    start_server,
)

ECHO = message("echo-1", "tools/call", {"name": "echo", "arguments": {"text": "deployed"}})


def assert_echo(response):
    assert response.status == 200, response.body
    assert response.content_type == "application/json"
    payload = response.json()
    assert payload["id"] == "echo-1"
    assert payload["result"]["content"] == [{"type": "text", "text": "deployed"}]
    assert payload["result"]["resultType"] == "complete"


def test_manage_py_runserver_serves_mcp_through_daphne(http_env, http_workdir):
    server = start_server("runserver", {**http_env, "BEAMMCP_TEST_RUNSERVER": "1"}, http_workdir)
    try:
        response = post(server.port, ECHO)
        assert_echo(response)
        assert (response.header("server") or "").lower().startswith("daphne")
        assert discover_works(server.port)
    finally:
        server.stop()
    log = server.log_tail(20_000)
    assert "Starting ASGI/Daphne" in log
    notice = log.index("beammcp-django: runserver is for development.")
    assert notice < log.index("Starting ASGI/Daphne")
    assert "daphne reads every request body in full" in log
    # test_under_daphne_a_reader_that_stops_reading_is_never_cut_off shows why.
    assert "is never cut off at the backlog of 64" in log
    assert "Serve with `manage.py mcp_serve` for every bound." in log


# mcp_serve serves the project's ASGI_APPLICATION, never the plain handler.
@pytest.fixture(scope="module", params=["uvicorn", "daphne"])
def plain_server(
    request: pytest.FixtureRequest, http_env: dict[str, str], http_workdir: Path
) -> Iterator[ServerProcess]:
    server = start_server(request.param, http_env, http_workdir, app=PLAIN_APP)
    yield server
    server.stop()


def test_the_plain_django_view_answers_discover_as_json(plain_server):
    response = post(plain_server.port, message("d-plain", "server/discover"))
    assert response.status == 200, response.body
    assert response.content_type == "application/json"
    result = response.json()["result"]
    assert result["supportedVersions"] == [MODERN, "2025-11-25", "2025-06-18"]  # both eras served
    assert result["resultType"] == "complete"


def test_the_plain_django_view_answers_echo_as_json(plain_server):
    assert_echo(post(plain_server.port, ECHO))


def test_the_plain_django_view_streams_progress_then_the_response(plain_server):
    call = message("p-plain", "tools/call", {"name": "fault_progress"}, progressToken=9)
    response = post(plain_server.port, call)
    assert response.status == 200, response.body
    assert response.content_type == "text/event-stream"
    assert response.header("x-accel-buffering") == "no"
    *notifications, final = response.events()
    assert [n["params"]["progress"] for n in notifications] == [1, 2, 3]
    assert {n["params"]["progressToken"] for n in notifications} == {9}
    assert final["id"] == "p-plain"
    assert final["result"]["content"] == [{"type": "text", "text": "progressed"}]


def test_the_plain_django_view_holds_the_header_rules(plain_server):
    response = post(plain_server.port, ECHO, replace={"Mcp-Name": "get_forecast"})
    assert response.status == 400
    assert response.json()["error"]["code"] == -32020
    assert response.json()["id"] == "echo-1"
    refused = post(plain_server.port, ECHO, add=[("Origin", "http://evil.example.com")])
    assert refused.status == 403


def test_the_plain_django_view_answers_get_405_and_a_notification_202(plain_server):
    refused = exchange(plain_server.port, http_request(method="GET", content_length=False))
    assert refused.status == 405
    assert refused.header("allow") == "GET, POST, DELETE, OPTIONS"
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    accepted = post(plain_server.port, notification)
    assert accepted.status == 202
    assert accepted.body == b""


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
def test_the_plain_django_view_cancels_the_call_when_the_client_goes_away(plain_server, streamed):
    outcome = close_mid_call(plain_server, streamed=streamed, seconds=4, within=1.5)
    assert discover_works(plain_server.port)
    assert outcome == "cancelled"


def test_the_plain_django_view_warns_once_per_process_when_a_request_arrives(plain_server):
    """The certain signal W002 can only guess at: logged when the view actually serves."""
    for number in range(3):
        assert post(plain_server.port, message(f"w-{number}", "server/discover")).status == 200
    log = plain_server.log_tail(200_000)
    assert log.count("The MCP endpoint is served through a plain Django view") == 1, log
