"""subscriptions/listen across workers: two uvicorn processes share Channels' Redis layer, and
a change announced by a call on one reaches a listen stream held open by the other.

Runs where a redis-server binary exists (``tests/run.sh`` installs Debian's); elsewhere it is
skipped with that reason, since the in-memory layer cannot cross processes by design.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    REDIS,
    ServerProcess,
    Wire,
    http_request,
    message,
    post,
    read_events,
    server_env,
    start_server,
)

pytestmark = pytest.mark.skipif(REDIS is None, reason="no redis-server binary on this machine")


@contextlib.contextmanager
def worker_pair(
    redis_url: str, workdir: Path, **extra_env: str
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two ``mcp_serve`` processes on one Redis, stopped on leaving."""
    env = {**server_env(workdir), "BEAMMCP_TEST_REDIS_URL": redis_url, **extra_env}
    first = start_server("mcp_serve", env, workdir)
    try:
        second = start_server("mcp_serve", env, workdir)
    except BaseException:
        first.stop()
        raise
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.fixture(scope="module")
def two_workers(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with worker_pair(redis_url, tmp_path_factory.mktemp("workers")) as pair:
        yield pair


def listen_then_announce(
    listener: ServerProcess, announcer: ServerProcess, name: str, quiet: float = 0.0
) -> list[dict]:
    """Open a tools listen stream on ``listener``; once it is acknowledged (and ``quiet``
    seconds later), announce a change on ``announcer``; the stream's messages after the ack."""
    listen = message(
        f"listen-{name}", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
    )
    with Wire(listener.port, timeout=15 + quiet) as wire:
        wire.send(http_request(listen))
        (ack,) = read_events(wire, 1, timeout=10)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        time.sleep(quiet)
        called = post(
            announcer.port,
            message(f"a-{name}", "tools/call", {"name": "mcphttp_announce", "arguments": {}}),
        )
        assert called.json()["result"]["content"][0]["text"] == "announced", called.body
        return read_events(wire, 1, timeout=10)


def test_a_change_announced_on_one_worker_reaches_a_listener_on_another(two_workers):
    events = listen_then_announce(*two_workers, "1")
    assert len(events) == 1, events
    changed = events[0]
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"


def test_a_stream_quiet_for_longer_than_the_layers_blocking_read_still_delivers(two_workers):
    """channels_redis blocks 5 s per read and redis-py 8 bounds a read at 5 s by default: with
    the documented socket_timeout the stream outlives several quiet polls (seen ending with
    -32603 after 5 s without it)."""
    events = listen_then_announce(*two_workers, "quiet", quiet=12)
    assert [event.get("method") for event in events] == ["notifications/tools/list_changed"]


def test_a_change_published_right_after_the_acknowledgment_reaches_the_stream(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
):
    """The acknowledgment promises that later changes arrive: it is sent once the stream's
    channel has joined the group. Joining is slowed by 0.5 s here, so an acknowledgment sent
    before it (as it once was) would let the announcement go to a group without the stream,
    and the stream would never hear of it."""
    workdir = tmp_path_factory.mktemp("slow-join")
    with worker_pair(redis_url, workdir, BEAMMCP_TEST_GROUP_ADD_DELAY="0.5") as pair:
        events = listen_then_announce(*pair, "race")
    assert [event.get("method") for event in events] == ["notifications/tools/list_changed"]
