"""The two session stores, held to one contract: ``Sessions`` (this process) and
``RedisSessions`` on a real redis-server (started by ``redis_url``). Then what only the shared
store does: two stores on one Redis, each with its own relay on one channels_redis layer, as
two workers are, pass a client's answer, a cancellation and a session's end to the one that
runs the call, and count a bound exactly under concurrent opens.

Two workers as real processes behind real clients: test_mcphttp_shared_sessions.py.
"""

from __future__ import annotations

import asyncio
import secrets
import string
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from beammcp_django.protocol.principal import principal_key
from beammcp_django.transports.sessions.relay import SessionRelay
from beammcp_django.transports.sessions.shared import RedisSessions
from beammcp_django.transports.sessions.store import (
    SessionBounds,
    SessionBusy,
    SessionEnded,
    SessionRefused,
    Sessions,
    SessionStore,
)
from tests.http.mcphttp_support import REDIS, redis_server


@dataclass(frozen=True)
class Caller:
    name: str


def redis_layer(redis_url: str) -> Any:
    from channels_redis.core import RedisChannelLayer

    return RedisChannelLayer(hosts=[{"address": redis_url, "socket_timeout": 30}])


def redis_store(redis_url: str, prefix: str, layer: Any) -> RedisSessions:
    return RedisSessions(redis_url, prefix, SessionRelay(lambda: layer))


StoreMaker = Callable[[], SessionStore]


@pytest.fixture(params=["process", "redis"])
def make_store(request: pytest.FixtureRequest) -> StoreMaker:
    """A new empty store of each kind (a Redis one under a prefix of its own)."""
    if request.param == "process":
        return Sessions
    if REDIS is None:
        pytest.skip("no redis-server binary on this machine")
    redis_url = request.getfixturevalue("redis_url")

    def make() -> SessionStore:
        from channels.layers import InMemoryChannelLayer

        layer = InMemoryChannelLayer()
        return redis_store(redis_url, f"test:{secrets.token_hex(6)}:", layer)

    return make


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """``scenario`` on a loop of its own, bounded: a task that outlives it must end when
    cancelled (a relay's listener, the layer's reads), else the test fails naming it rather
    than hanging in the loop's teardown."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(scenario(), 30))
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=10))
        stuck = [task for task in pending if not task.done()]
        loop.close()
        assert not stuck, f"tasks that ignored their cancellation: {stuck}"


def test_session_ids_are_192_bits_of_visible_ascii_and_never_repeat(make_store):
    async def scenario() -> set[str]:
        store = make_store()
        return {(await store.open("", SessionBounds(), "")).id for _ in range(300)}

    ids = run(scenario)
    assert len(ids) == 300
    allowed = set(string.ascii_letters + string.digits + "-_")
    assert all(len(value) == 32 and set(value) <= allowed for value in ids)


def test_a_session_is_found_only_by_the_principal_that_opened_it(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds()
        ada, grace = principal_key(Caller("ada")), principal_key(Caller("grace"))
        session = await store.open(ada, bounds, "")
        found = await store.find(session.id, ada, bounds)
        assert found is not None and found.id == session.id and found.principal_key == ada
        assert await store.find(session.id, grace, bounds) is None
        assert await store.find(session.id, principal_key(None), bounds) is None
        assert await store.find("not-a-session", ada, bounds) is None
        assert await store.find("x" * 10_000, ada, bounds) is None
        again = await store.find(session.id, ada, bounds)  # the others disturbed nothing
        assert again is not None and again.id == session.id
        assert await store.find(session.id, grace, bounds) is None

    run(scenario)


def test_principal_keys_name_a_model_by_its_row_and_anything_else_by_its_repr():
    class Meta:
        label_lower = "auth.user"

    class User:
        _meta = Meta()

        def __init__(self, pk: int) -> None:
            self.pk = pk

    assert principal_key(User(7)) == principal_key(User(7)) != principal_key(User(8))
    assert principal_key(Caller("ada")) == principal_key(Caller("ada"))
    assert principal_key(None) == ""
    # An object whose repr holds its address matches nothing but itself: fails closed.
    assert principal_key(object()) != principal_key(object())

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("host code")

    assert principal_key(Broken()) != principal_key(Broken())


def test_a_session_unused_past_the_idle_time_ends_and_a_use_keeps_it(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds(idle_seconds=0.6)
        kept = await store.open("", bounds, "")
        dropped = await store.open("", bounds, "")
        await asyncio.sleep(0.4)
        assert await store.find(kept.id, "", bounds) is not None
        await asyncio.sleep(0.4)  # kept was used 0.4 s ago, dropped 0.8 s ago
        assert await store.find(dropped.id, "", bounds) is None
        assert await store.find(kept.id, "", bounds) is not None

    run(scenario)


def test_past_a_principals_bound_initialize_is_refused_429_and_past_the_total_503(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds(limit=5, per_principal=2)
        ada = principal_key(Caller("ada"))
        first = await store.open(ada, bounds, "")
        await store.open(ada, bounds, "")
        with pytest.raises(SessionRefused) as refused:
            await store.open(ada, bounds, "")
        assert refused.value.status == 429 and "SESSIONS_PER_PRINCIPAL" in refused.value.message
        await store.close(first)  # ending one frees its place
        await store.open(ada, bounds, "")
        for _ in range(3):  # principal-less sessions with no address count against the total
            await store.open("", bounds, "")
        with pytest.raises(SessionRefused) as refused:
            await store.open("", bounds, "")
        assert refused.value.status == 503 and "SESSION_LIMIT" in refused.value.message

    run(scenario)


def test_sessions_with_no_principal_are_bounded_per_client_address(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds(limit=10, per_principal=2)
        await store.open("", bounds, "203.0.113.7")
        await store.open("", bounds, "203.0.113.7")
        with pytest.raises(SessionRefused) as refused:
            await store.open("", bounds, "203.0.113.7")
        assert refused.value.status == 429
        assert "this client address, with no principal," in refused.value.message
        await store.open("", bounds, "198.51.100.1")  # another address has its own share
        await store.open(principal_key(Caller("ada")), bounds, "203.0.113.7")  # and a principal

    run(scenario)


def test_expired_sessions_never_count_against_a_bound(make_store):
    async def scenario() -> None:
        store = make_store()
        bounds = SessionBounds(idle_seconds=0.3, limit=2, per_principal=1)
        await store.open("a", bounds, "")
        await store.open("b", bounds, "")
        await asyncio.sleep(0.5)
        await store.open("a", bounds, "")  # neither bound holds the expired two against it
        await store.open("c", bounds, "")

    run(scenario)


def test_a_change_is_kept_and_served_to_the_next_find(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds()
        session = await store.open("", bounds, "")
        async with store.changing(session) as open_still:
            assert open_still
            session.state.version = "2025-11-25"
            session.state.subscriptions["file:///watched"] = None
            await store.keep(session)
        found = await store.find(session.id, "", bounds)
        assert found is not None
        assert found.state.version == "2025-11-25"
        assert list(found.state.subscriptions) == ["file:///watched"]
        await store.close(session)
        async with store.changing(session) as open_still:
            assert not open_still
        assert await store.find(session.id, "", bounds) is None

    run(scenario)


def test_one_get_stream_a_session_and_it_closes_when_the_session_ends(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds()
        session = await store.open("", bounds, "")
        assert await store.claim_stream(session, bounds)
        again = await store.find(session.id, "", bounds)
        assert again is not None and not await store.claim_stream(again, bounds)
        ended = session.calls.stream
        assert ended is not None and not ended.is_set()
        await store.close(session)
        await asyncio.wait_for(ended.wait(), 5)
        await store.release_stream(session)

    run(scenario)


def test_an_answer_reaches_the_call_that_asked_once_and_no_other(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds()
        session = await store.open("", bounds, "")
        other = await store.open("", bounds, "")
        answered = await store.expect(session, "beammcp-1", 5, 16)
        answer = {"jsonrpc": "2.0", "id": "beammcp-1", "result": {"n": 1}}
        await store.deliver(other, answer)  # another session's answer reaches nothing
        await asyncio.sleep(0.1)
        assert not answered.done()
        await store.deliver(session, answer)
        assert (await asyncio.wait_for(answered, 5))["result"] == {"n": 1}
        await store.deliver(session, {**answer, "result": {"n": 2}})  # twice: dropped
        await store.forget(session, "beammcp-1")
        assert session.calls.pending == {}

    run(scenario)


def test_a_session_waits_for_at_most_its_limit_of_answers(make_store):
    async def scenario() -> None:
        store, bounds = make_store(), SessionBounds()
        session = await store.open("", bounds, "")
        assert await store.expect(session, "beammcp-a", 5, 2) is not None
        assert await store.expect(session, "beammcp-b", 5, 2) is not None
        assert await store.expect(session, "beammcp-c", 5, 2) is None
        await store.forget(session, "beammcp-a")
        assert await store.expect(session, "beammcp-c", 5, 2) is not None

    run(scenario)


# -- two workers on one Redis -----------------------------------------------------------------


@pytest.fixture
def two_stores(redis_url: str) -> Callable[[], tuple[RedisSessions, RedisSessions]]:
    """Two stores on one Redis and one channels_redis server, each with its own relay: what
    two worker processes hold. Made inside the scenario's loop (the layer's connections
    belong to it)."""
    prefix = f"test:{secrets.token_hex(6)}:"

    def make() -> tuple[RedisSessions, RedisSessions]:
        layer_a, layer_b = redis_layer(redis_url), redis_layer(redis_url)
        return redis_store(redis_url, prefix, layer_a), redis_store(redis_url, prefix, layer_b)

    return make


async def script_calls(redis: Any) -> int:
    """How many scripts this Redis has run (``EVALSHA`` and ``EVAL``)."""
    stats = await redis.info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("evalsha", "eval"))


async def stop(*stores: RedisSessions) -> None:
    for store in stores:
        store.relay.stop()
    await asyncio.sleep(0)


def test_an_answer_posted_to_the_other_worker_reaches_the_call_that_asked(two_stores):
    async def scenario() -> None:
        asking, answering = two_stores()
        bounds = SessionBounds()
        session = await asking.open("", bounds, "")
        answered = await asking.expect(session, "beammcp-abc", 5, 16)
        elsewhere = await answering.find(session.id, "", bounds)
        assert elsewhere is not None
        answer = {"jsonrpc": "2.0", "id": "beammcp-abc", "result": {"role": "assistant"}}
        await answering.deliver(elsewhere, answer)
        assert (await asyncio.wait_for(answered, 5))["result"] == {"role": "assistant"}
        # Taken once: the same answer again, on either worker, reaches nothing.
        late = await asking.expect(session, "beammcp-late", 5, 16)
        await answering.deliver(elsewhere, answer)
        await answering.deliver(elsewhere, {**answer, "id": "not-ours"})
        await asyncio.sleep(0.2)
        assert not late.done()
        # The limit holds for the session, whichever worker its calls ask from.
        assert await answering.expect(elsewhere, "beammcp-x", 5, 2) is None
        await stop(asking, answering)

    run(scenario)


def test_a_cancellation_and_an_end_posted_to_the_other_worker_reach_the_call(two_stores):
    async def scenario() -> None:
        running, receiving = two_stores()
        bounds = SessionBounds()
        session = await running.open("", bounds, "")
        await running.relay.address()  # listening, as a worker that serves a call is
        withdrawn = asyncio.Event()
        session.calls.running[7] = withdrawn.set
        waiting = await running.expect(session, "beammcp-w", 5, 16)
        elsewhere = await receiving.find(session.id, "", bounds)
        assert elsewhere is not None
        await receiving.withdraw(elsewhere, 8)  # no such request: nothing stops
        await receiving.withdraw(elsewhere, 7)
        await asyncio.wait_for(withdrawn.wait(), 5)
        await receiving.close(elsewhere)
        with pytest.raises(SessionEnded):
            await asyncio.wait_for(waiting, 5)
        assert await running.find(session.id, "", bounds) is None
        await stop(running, receiving)

    run(scenario)


def test_concurrent_opens_on_two_workers_admit_exactly_the_bound(two_stores):
    async def scenario() -> list[Any]:
        first, second = two_stores()
        bounds = SessionBounds(per_principal=5)
        ada = principal_key(Caller("ada"))
        outcomes = await asyncio.gather(
            *(store.open(ada, bounds, "") for store in [first, second] * 10),
            return_exceptions=True,
        )
        await stop(first, second)
        return outcomes

    outcomes = run(scenario)
    refused = [outcome for outcome in outcomes if isinstance(outcome, SessionRefused)]
    assert len(outcomes) - len(refused) == 5 and len(refused) == 15


def test_lookups_made_together_are_answered_each_its_own_and_survive_a_script_flush(redis_url):
    """Lookups in one turn of the loop go to Redis as one pipeline: each gets its own
    session (or None for another principal's), and after Redis forgot the scripts (``SCRIPT
    FLUSH``, as after a restart) they are loaded again, one lookup or many."""

    async def scenario() -> None:
        from channels.layers import InMemoryChannelLayer

        store = redis_store(redis_url, f"test:{secrets.token_hex(6)}:", InMemoryChannelLayer())
        bounds = SessionBounds()
        callers = [principal_key(Caller(f"caller-{number}")) for number in range(12)]
        sessions = [await store.open(caller, bounds, "") for caller in callers]
        for flushed in (False, True):
            if flushed:
                await store._redis().script_flush()
            found = await asyncio.gather(
                *(store.find(s.id, s.principal_key, bounds) for s in sessions),
                store.find(sessions[0].id, callers[1], bounds),
            )
            assert [f.id for f in found[:-1] if f is not None] == [s.id for s in sessions]
            assert found[-1] is None
        await store._redis().script_flush()
        assert await store.find(sessions[3].id, callers[3], bounds) is not None

    run(scenario)


def test_a_use_is_recorded_once_per_grain_and_a_session_still_lapses_on_time(redis_url):
    """A busy session's requests make Redis record its use once per grain (a tenth of the
    idle time, at most a second) and worker, not once each: the lookups in between only
    read, on a worker that recorded it within the grain (``HMGET``, no script). A session
    used across grains stays open; left, it lapses within the idle time plus the grain. A
    record with no ``used`` has its use recorded by the next worker to look it up; one whose
    use another worker recorded within the grain is read until a grain after that use."""

    async def scenario() -> None:
        from channels.layers import InMemoryChannelLayer

        prefix = f"test:{secrets.token_hex(6)}:"
        store = redis_store(redis_url, prefix, InMemoryChannelLayer())
        redis = store._redis()

        async def used(session: Any) -> int | None:
            value = await redis.hget(store._record(session), "used")
            return None if value is None else int(value)

        slow = SessionBounds(idle_seconds=60.0)  # a grain of a second
        busy = await store.open("", slow, "")
        opened = await used(busy)
        assert await store.find(busy.id, "", slow) is not None  # the lookup script's
        scripts = await script_calls(redis)
        for _ in range(4):
            assert await store.find(busy.id, "", slow) is not None
        assert await used(busy) == opened  # within the grain: read, not written
        assert await script_calls(redis) == scripts  # reads, no script
        await redis.hdel(store._record(busy), "used")
        other = redis_store(redis_url, prefix, InMemoryChannelLayer())  # another worker
        assert await other.find(busy.id, "", slow) is not None
        assert (await used(busy) or 0) >= (opened or 0)
        # A worker whose first lookup finds the use recorded by another within the grain
        # reads only until a grain after that use, not after its own lookup.
        await asyncio.sleep(0.4)
        third = redis_store(redis_url, prefix, InMemoryChannelLayer())
        assert await third.find(busy.id, "", slow) is not None
        since = time.monotonic() - third._seen[store._record(busy)].recorded
        assert 0.4 <= since < 1.0

        quick = SessionBounds(idle_seconds=1.0)  # a grain of 100 ms
        session = await store.open("", quick, "")
        first = await used(session)
        for _ in range(6):  # 1.2 s of use, past the idle time, a lookup each 0.2 s
            await asyncio.sleep(0.2)
            assert await store.find(session.id, "", quick) is not None
        assert (await used(session) or 0) > (first or 0)
        await asyncio.sleep(1.1 + 0.1)
        assert await store.find(session.id, "", quick) is None

    run(scenario)


def test_parsed_states_are_bounded_in_number_and_size(redis_url, monkeypatch):
    """What a worker keeps of the sessions it serves is the newest SESSIONS_SEEN, no state
    parsed over PARSED_STATE_BYTES, and a session closed here leaves nothing behind."""
    from beammcp_django.transports.sessions import shared as shared_sessions

    monkeypatch.setattr(shared_sessions, "SESSIONS_SEEN", 2)

    async def scenario() -> None:
        from channels.layers import InMemoryChannelLayer

        store = redis_store(redis_url, f"test:{secrets.token_hex(6)}:", InMemoryChannelLayer())
        bounds = SessionBounds()
        sessions = [await store.open("", bounds, "") for _ in range(3)]
        for session in sessions:
            assert await store.find(session.id, "", bounds) is not None
        records = [store._record(session) for session in sessions]
        assert list(store._seen) == records[1:]
        await store.close(sessions[2])
        assert list(store._seen) == [records[1]]
        large = sessions[0]
        large.state.client_capabilities = {"experimental": {"x": "y" * 5000}}
        await store.keep(large)
        found = await store.find(large.id, "", bounds)
        assert found is not None and found.state.client_capabilities["experimental"]["x"]
        assert store._seen[records[0]].state is None
        assert (await store.find(large.id, "", bounds)) is not None  # parsed again

    run(scenario)


def test_the_parsed_state_is_one_sessions_own(redis_url):
    """A session's requests on one worker share its parsed state while Redis sends the same
    bytes (as the in-process store's do); a change gives the next request a new one, and
    two sessions in the same state never share one (its mappings reach host code)."""

    async def scenario() -> None:
        from channels.layers import InMemoryChannelLayer

        store = redis_store(redis_url, f"test:{secrets.token_hex(6)}:", InMemoryChannelLayer())
        bounds = SessionBounds()
        first, second = await store.open("", bounds, ""), await store.open("", bounds, "")
        seen = [await store.find(first.id, "", bounds) for _ in range(2)]
        other = await store.find(second.id, "", bounds)
        assert seen[0] is not None and seen[1] is not None and other is not None
        assert seen[0].state is seen[1].state
        assert other.state is not seen[0].state
        assert other.state.client_capabilities is not seen[0].state.client_capabilities
        async with store.changing(seen[0]) as open_still:
            assert open_still
            seen[0].state.log_level = "debug"
            await store.keep(seen[0])
        changed = await store.find(first.id, "", bounds)
        assert changed is not None and changed.state.log_level == "debug"
        assert changed.state is not seen[1].state

    run(scenario)


def test_a_change_waiting_past_its_bound_for_another_is_refused_by_name(redis_url, monkeypatch):
    """Changes of one session are made one at a time across workers; one that waits longer
    than the bound for another (a worker that died holding it) is ``SessionBusy``."""
    from beammcp_django.transports.sessions import shared as shared_sessions

    monkeypatch.setattr(shared_sessions, "CHANGE_WAIT_SECONDS", 0.3)

    async def scenario() -> None:
        from channels.layers import InMemoryChannelLayer

        prefix = f"test:{secrets.token_hex(6)}:"
        first = redis_store(redis_url, prefix, InMemoryChannelLayer())
        second = redis_store(redis_url, prefix, InMemoryChannelLayer())
        session = await first.open("", SessionBounds(), "")
        elsewhere = await second.find(session.id, "", SessionBounds())
        assert elsewhere is not None
        async with first.changing(session) as open_still:
            assert open_still
            with pytest.raises(SessionBusy):
                async with second.changing(elsewhere):
                    raise AssertionError("entered while another change held the session")
        async with second.changing(elsewhere) as open_still:  # released: served at once
            assert open_still

    run(scenario)


def test_a_redis_that_may_evict_sessions_is_named_in_the_log(redis_url, tmp_path, caplog):
    """The bounds are the store's: a Redis with a memory limit and an eviction policy could
    end a live session on its own, so the store says so at its first contact; Redis' default
    (no limit, noeviction) is not named."""

    async def first_contact(url: str) -> None:
        from channels.layers import InMemoryChannelLayer

        store = redis_store(url, f"test:{secrets.token_hex(6)}:", InMemoryChannelLayer())
        await store.open("", SessionBounds(), "")

    evicting = redis_server(tmp_path, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
    with evicting as evicting_url, caplog.at_level("WARNING", logger="beammcp_django.http"):
        asyncio.run(first_contact(evicting_url))
        asyncio.run(first_contact(redis_url))
    named = [record.getMessage() for record in caplog.records if "maxmemory" in record.getMessage()]
    assert len(named) == 1 and "maxmemory-policy allkeys-lru" in named[0], named


class SwallowingLayer:
    """Channels' in-memory layer, but its read swallows the first cancellation it meets and
    waits on, as channels_redis's did now and then on redis-py (session_relay.received)."""

    def __init__(self) -> None:
        from channels.layers import InMemoryChannelLayer

        self.layer = InMemoryChannelLayer()
        self.swallowed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.layer, name)

    async def receive(self, channel: str) -> dict[str, Any]:
        while True:
            try:
                return await self.layer.receive(channel)
            except asyncio.CancelledError:
                if self.swallowed:
                    raise
                self.swallowed += 1


def test_a_stopped_relay_stops_listening_even_when_its_layer_swallows_a_cancellation():
    async def scenario() -> None:
        layer = SwallowingLayer()
        relay = SessionRelay(lambda: layer)
        await relay.address()
        listening = [t for t in asyncio.all_tasks() if "SessionRelay._listen" in repr(t)]
        assert len(listening) == 1
        relay.stop()
        await asyncio.wait(listening, timeout=2)
        assert layer.swallowed == 1 and listening[0].done()

    run(scenario)


def test_a_listener_cancelled_again_while_its_swallowing_read_ends_still_ends_the_read():
    """The relay stopped, then its listener cancelled again (a loop's shutdown cancels every
    task) while it waits for the read that swallowed its first cancellation: the read must
    still end, rather than go on reading alone."""

    async def scenario() -> None:
        layer = SwallowingLayer()
        relay = SessionRelay(lambda: layer)
        await relay.address()
        listening = [t for t in asyncio.all_tasks() if "SessionRelay._listen" in repr(t)]
        relay.stop()
        await asyncio.sleep(0.05)  # the listener waits for the read; the read swallowed one
        assert layer.swallowed == 1
        listening[0].cancel()
        await asyncio.wait(listening, timeout=2)
        reads = [t for t in asyncio.all_tasks() if "SwallowingLayer.receive" in repr(t)]
        assert listening[0].done() and not reads, reads

    run(scenario)
