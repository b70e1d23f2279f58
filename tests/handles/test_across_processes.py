"""Handles across processes, on one database (SQLite, and PostgreSQL on the run that uses it):
two ``mcp_serve`` processes, a handle minted through one used through the other, another
principal's use answered byte for byte as a made-up id's, and the bound per principal exact
under a burst of mints from one caller through both at once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.databases import rows
from tests.http.mcphttp_support import ServerProcess, mcp_serve_pair, message, post, server_env

pytestmark = [pytest.mark.slow, pytest.mark.orm]

BOUND = 3  # tests/handles/sites.py's WatchList.per_principal
CALLS = 24
CONCURRENCY = 12


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[list[ServerProcess], str]]:
    env = {**server_env(tmp_path), "DJANGO_SETTINGS_MODULE": "tests.handles.http_settings"}
    with mcp_serve_pair(env, tmp_path) as servers:
        yield servers, env["DATABASE_URL"]


def call(server: ServerProcess, principal: str, tool: str, **arguments: str) -> bytes:
    """The raw body of one tools/call as ``principal``."""
    value = message(1, "tools/call", {"name": tool, "arguments": arguments})
    response = post(server.port, value, add=[("X-Mcphttp-Authorize", f"principal:{principal}")])
    assert response.status == 200, response.body
    return response.body


def minted(body: bytes) -> str:
    return json.loads(body)["result"]["structuredContent"]["watch_list_id"]


def test_a_handle_minted_through_one_worker_is_used_through_the_other_by_its_owner_only(pair):
    (first, second), _ = pair
    handle = minted(call(first, "ada", "create_watch_list"))
    assert b"oslo" in call(second, "ada", "watch_city", watch_list_id=handle, city="oslo")
    assert b"oslo" in call(first, "ada", "read_watch_list", watch_list_id=handle)
    made_up = "wl_" + "Q" * 32
    others = call(second, "bob", "read_watch_list", watch_list_id=handle)
    unknown = call(second, "bob", "read_watch_list", watch_list_id=made_up)
    assert others == unknown
    text = json.loads(others)["result"]["content"][0]["text"]
    assert text == "watch list wl_… expired or unknown: create a new one"


def test_a_burst_of_mints_through_both_workers_admits_exactly_the_bound(pair):
    servers, database_url = pair
    admitted = {}
    for principal in ("ada", "bob"):

        def mint(index: int, principal: str = principal) -> bytes:
            return call(servers[index % 2], principal, "create_watch_list")

        with ThreadPoolExecutor(CONCURRENCY) as pool:
            bodies = list(pool.map(mint, range(CALLS)))
        refused = [body for body in bodies if b'"isError":true' in body.replace(b" ", b"")]
        assert all(b"you hold 3 watch lists" in body for body in refused)
        admitted[principal] = CALLS - len(refused)
    stored = rows(
        database_url,
        "SELECT count(*) FROM beammcp_django_mcphandle GROUP BY owner ORDER BY owner",
    )
    assert admitted == {"ada": BOUND, "bob": BOUND}
    assert [count for (count,) in stored] == [BOUND, BOUND]
