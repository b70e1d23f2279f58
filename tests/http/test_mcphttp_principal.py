"""Who is calling, over HTTP: the ``AUTHORIZE`` hook's yes may name a principal, and host code
sees it as ``context.principal`` (sync tools on a worker thread, async ones on the loop),
under uvicorn (``mcp_serve``) and daphne alike. ``True`` names nobody; ``AUTHORIZE_BODY``
names no one, so a principal from it refuses."""

from __future__ import annotations

import pytest

from tests.http.mcphttp_support import discover_works, message, post

WHOAMI = ("principal_whoami", "principal_whoami_async")


def whoami(port: int, tool: str, *headers: tuple[str, str]) -> str:
    call = message(f"who-{tool}", "tools/call", {"name": tool, "arguments": {}})
    response = post(port, call, add=list(headers))
    assert response.status == 200, (response.status, response.body)
    (block,) = response.json()["result"]["content"]
    return block["text"]


@pytest.mark.parametrize("tool", WHOAMI)
def test_the_principal_the_hook_names_is_what_host_code_sees(server, tool):
    named = ("X-Mcphttp-Authorize", "principal:ada")
    assert whoami(server.port, tool, named) == "caller:ada"
    # Each request carries its own: the next, with another, is served as that one.
    other = ("X-Mcphttp-Authorize", "principal:grace")
    assert whoami(server.port, tool, other) == "caller:grace"


@pytest.mark.parametrize("tool", WHOAMI)
def test_a_plain_yes_names_nobody(server, tool):
    assert whoami(server.port, tool) == "nobody"


def test_a_principal_from_the_body_hook_is_refused_403_and_the_server_serves_on(server):
    call = message("who-body", "tools/call", {"name": "principal_whoami", "arguments": {}})
    response = post(server.port, call, add=[("X-Mcphttp-Body", "principal")])
    assert response.status == 403, (response.status, response.body)
    assert response.body == b""
    assert discover_works(server.port)


def test_a_false_answer_that_is_not_false_refuses_403(server):
    call = message("who-empty", "tools/call", {"name": "principal_whoami", "arguments": {}})
    response = post(server.port, call, add=[("X-Mcphttp-Authorize", "empty")])
    assert response.status == 403
    assert discover_works(server.port)
