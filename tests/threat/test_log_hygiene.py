"""What the server logs never holds a caller's credentials or body bytes.

A uvicorn process serving the threat settings with every logger at DEBUG (so nothing is
hidden by the level) is sent requests carrying a secret in the ``Authorization`` header and
in the body, down every path that logs: served, refused by the hook, a parse error, a schema
refusal, a host fault, a body hook that raises. The log must show the faults (it is not
silent) and never either secret.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    ServerProcess,
    Wire,
    http_request,
    message,
    start_server,
)

pytestmark = pytest.mark.slow

TOKEN_SECRET = "bearer-secret-3c7e1f-never-logged"
BODY_SECRET = "body-secret-9a2d44-never-logged"
AUTHORIZATION = ("Authorization", f"Bearer {TOKEN_SECRET}")


@pytest.fixture(scope="module")
def chatty_server(
    threat_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("log-hygiene")
    env = {**threat_env, "DJANGO_LOG_LEVEL": "DEBUG"}
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


def exchange(server: ServerProcess, request: bytes) -> int:
    with Wire(server.port) as wire:
        wire.send(request)
        return wire.response().status


def test_neither_the_authorization_header_nor_the_body_reaches_the_log(chatty_server):
    echo = message(1, "tools/call", {"name": "echo", "arguments": {"text": BODY_SECRET}})
    explode = message(2, "tools/call", {"name": "fault_explode", "arguments": {}}, note=BODY_SECRET)
    unknown_tool = message(3, "tools/call", {"name": BODY_SECRET, "arguments": {}})
    bad_argument = message(
        4, "tools/call", {"name": "echo", "arguments": {"text": 7, "x": BODY_SECRET}}
    )
    statuses = [
        exchange(chatty_server, http_request(echo, add=[AUTHORIZATION])),
        exchange(
            chatty_server,
            http_request(echo, add=[AUTHORIZATION, ("X-Mcphttp-Authorize", "deny")]),
        ),
        exchange(
            chatty_server,
            http_request(echo, add=[AUTHORIZATION, ("X-Mcphttp-Authorize", "raise")]),
        ),
        exchange(
            chatty_server,
            http_request(
                echo, body=b'{"jsonrpc": "2.0", "' + BODY_SECRET.encode(), add=[AUTHORIZATION]
            ),
        ),
        exchange(chatty_server, http_request(unknown_tool, add=[AUTHORIZATION])),
        exchange(chatty_server, http_request(bad_argument, add=[AUTHORIZATION])),
        exchange(chatty_server, http_request(explode, add=[AUTHORIZATION])),
    ]
    assert statuses == [200, 403, 500, 400, 400, 200, 500]
    log = chatty_server.log_path.read_bytes()
    assert b"host fault" in log and b"authorization hook raised" in log, "faults are logged"
    assert TOKEN_SECRET.encode() not in log
    assert BODY_SECRET.encode() not in log
