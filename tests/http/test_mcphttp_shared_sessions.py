"""2025-11-25 sessions shared by two workers: two ``mcp_serve`` processes on one redis-server
(``BEAMMCP["SESSION_CACHE"]`` on its ``RedisCache``, Channels' Redis layer between them), and
every session test of ``test_mcphttp_legacy_sessions`` run again against the pair, each
connection going to the other worker than the last. So a session is opened on one worker and
used on the other; a sampling or elicitation answer is POSTed to the worker that is not
running the call; a resource subscription is made on one and its update delivered by the
other's GET stream; a ``DELETE`` on one ends the other's stream and call.

The official SDK client and the conformance suite against the same pair behind nginx:
tests/interop/test_sdk_legacy_http.py and tests/conformance/test_official_suite.py.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest

from tests.http import test_mcphttp_legacy_sessions as one_worker
from tests.http import test_mcphttp_resumable_streams as resumable_streams
from tests.http.mcphttp_support import (
    REDIS,
    ServerProcess,
    Wire,
    discover_works,
    http_request,
)
from tests.http.test_mcphttp_legacy_sessions import *  # noqa: F403 (each test, run again here)
from tests.http.test_mcphttp_legacy_sessions import (
    LEGACY,
    MODERN_HEADERS,
    call,
    legacy,
    open_session,
    open_stream,
    read_until,
    send,
)
from tests.http.test_mcphttp_redis_layer import worker_pair
from tests.http.test_mcphttp_resumable_streams import *  # noqa: F403
from tests.http.test_mcphttp_resumable_streams import resume

pytestmark = pytest.mark.skipif(REDIS is None, reason="no redis-server binary on this machine")


class AlternatingPair:
    """Two workers seen as one server whose ``port`` is the other worker's each time it is
    read: a test written for one server sends each of its connections to the worker its last
    one did not reach."""

    kind = "shared"

    def __init__(self, first: ServerProcess, second: ServerProcess) -> None:
        self.workers = (first, second)
        self.records = first.records
        self._ports = itertools.cycle([first.port, second.port])

    @property
    def port(self) -> int:
        return next(self._ports)

    def alive(self) -> bool:
        return all(worker.alive() for worker in self.workers)

    def log_tail(self) -> str:
        return "\n".join(worker.log_tail() for worker in self.workers)


@pytest.fixture(scope="module")
def shared_pair(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AlternatingPair]:
    """Two workers sharing sessions, on a Redis database of their own (so no other test's
    sessions count against this pair's bounds)."""
    own_database = redis_url.rsplit("/", 1)[0] + "/3"
    workdir = tmp_path_factory.mktemp("shared-sessions")
    with worker_pair(own_database, workdir, BEAMMCP_TEST_SHARED_SESSIONS="1") as pair:
        yield AlternatingPair(*pair)


@pytest.fixture
def server(shared_pair: AlternatingPair) -> Iterator[AlternatingPair]:
    """What the one-worker tests take as their server: here, the pair."""
    assert shared_pair.alive(), shared_pair.log_tail()
    yield shared_pair
    assert shared_pair.alive(), f"a worker died:\n{shared_pair.log_tail()}"
    for worker in shared_pair.workers:
        assert discover_works(worker.port), f"a worker stopped serving:\n{worker.log_tail()}"


def test_the_pair_runs_every_one_worker_session_test():
    here = {name for name in globals() if name.startswith("test_")}
    for module in (one_worker, resumable_streams):
        assert {name for name in vars(module) if name.startswith("test_")} <= here


def test_a_session_opened_on_one_worker_is_used_and_ended_on_the_other(shared_pair):
    first, second = shared_pair.workers
    session, _ = open_session(first.port)
    listed = send(second.port, legacy("l", "tools/list"), session)
    assert listed.status == 200 and "tools" in listed.json()["result"]
    level = send(second.port, legacy("lv", "logging/setLevel", {"level": "debug"}), session)
    assert level.json()["result"] == {}
    assert send(first.port, None, session, method="DELETE").status == 204
    gone = send(second.port, legacy("p", "ping"), session)
    assert gone.status == 404
    # A modern request on either worker is served as ever, statelessly.
    assert discover_works(first.port) and discover_works(second.port)


def test_a_sampling_answer_posted_to_the_other_worker_reaches_the_call(shared_pair):
    first, second = shared_pair.workers
    session, _ = open_session(first.port, capabilities={"sampling": {}})
    call = legacy(
        "sample", "tools/call", {"name": "mcphttp_ask_model", "arguments": {"question": "Sky?"}}
    )
    headers = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
    with Wire(first.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=headers))
        streamed = read_until(wire, b"sampling/createMessage")
        request = json.loads(streamed.split(b"data: ", 1)[1].split(b"\n", 1)[0])
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "blue"},
                "model": "test-model",
            },
        }
        assert send(second.port, answer, session).status == 202
        finished = read_until(wire, b'"id":"sample"')
    assert b"asked the model: blue" in finished


def test_a_subscription_made_on_one_worker_is_delivered_by_the_others_stream(shared_pair):
    first, second = shared_pair.workers
    session, _ = open_session(first.port)
    with open_stream(second.port, session) as wire:
        read_until(wire, b"\r\n\r\n")
        subscribe = legacy("s", "resources/subscribe", {"uri": "weather://stations"})
        assert send(first.port, subscribe, session).json()["result"] == {}
        call(first.port, session, "mcphttp_touch", {"uri": "weather://stations"})
        assert b'"uri":"weather://stations"' in read_until(wire, b"resources/updated")
        # The one stream a session has is held across workers: a second is 409 on either.
        with open_stream(first.port, session) as again:
            assert b" 409 " in read_until(again, b"\r\n")
        assert send(first.port, None, session, method="DELETE").status == 204
        read_until(wire, b"\r\n0\r\n\r\n")  # the other worker's stream ended with it


def test_a_stream_released_on_one_worker_is_resumed_on_the_other(shared_pair):
    """The call runs on the first worker; the resume reaches the second, which asks the
    first over the layer and writes what it carries: the rest of the stream, the result last.
    Then the module of resumable-stream tests, whose connections alternate, runs too."""
    first, second = shared_pair.workers
    session, _ = open_session(first.port)
    call = legacy(
        "r",
        "tools/call",
        {"name": "mcphttp_release", "arguments": {}, "_meta": {"progressToken": "p"}},
    )
    with Wire(first.port) as wire:
        wire.send(http_request(call, drop=MODERN_HEADERS, add=in_session(session)))
        primed = wire.response()
    stream = primed.body.split(b"id: ", 1)[1].split(b"\n", 1)[0].decode()
    with resume(second.port, session, stream) as wire:
        raw = read_until(wire, b'"id":"r"')
    assert b'"text":"released: True"' in raw
    assert raw.count(b"notifications/progress") == 3


def in_session(session):
    return [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
