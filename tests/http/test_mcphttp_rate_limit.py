"""The host's rate limit over HTTP, through a real ``mcp_serve`` process: a request the hook
refuses is answered 429 with ``Retry-After`` (whole seconds, rounded up) and a JSON-RPC error
naming the wait; a hook that raises refuses for a second, its fault logged and never sent;
notifications are never asked about; everyone else is served, and the server serves on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    ServerProcess,
    discover_works,
    message,
    post,
    server_env,
    start_server,
)
from tests.principals.limits import SECRET

AUTH_SETTINGS = "tests.http_auth_settings"


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("rate-limit")
    env = {
        **server_env(directory),
        "BEAMMCP_TEST_RATE_LIMIT": "1",
        "DJANGO_SETTINGS_MODULE": AUTH_SETTINGS,
    }
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


def as_caller(name: str) -> list[tuple[str, str]]:
    return [("X-Mcphttp-Authorize", f"principal:{name}")]


CALL = {"name": "principal_whoami", "arguments": {}}


def test_a_refused_request_is_429_with_retry_after_and_names_the_wait(limited):
    response = post(limited.port, message("limited", "tools/call", CALL), add=as_caller("mallory"))
    assert response.status == 429
    assert response.header("retry-after") == "3"
    error = response.json()["error"]
    assert response.json()["id"] == "limited"
    assert error == {
        "code": -32000,
        "message": "rate limited: retry after 3 s",
        "data": {"retryAfterSeconds": 3},
    }
    # Only what the hook refused: her listing is served, and so is everyone else's call.
    listing = post(limited.port, message("list", "tools/list", {}), add=as_caller("mallory"))
    assert listing.status == 200
    served = post(limited.port, message("ada", "tools/call", CALL), add=as_caller("ada"))
    assert served.json()["result"]["content"][0]["text"] == "caller:ada"


def test_a_hook_that_raises_refuses_for_a_second_and_leaks_nothing(limited):
    response = post(limited.port, message("broken", "tools/list", {}), add=as_caller("breaker"))
    assert response.status == 429 and response.header("retry-after") == "1"
    assert SECRET.encode() not in response.body
    assert SECRET in limited.log_path.read_text(errors="replace")
    assert discover_works(limited.port)


def test_notifications_are_never_asked_about(limited):
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = post(limited.port, note, add=as_caller("breaker"))
    assert response.status == 202
