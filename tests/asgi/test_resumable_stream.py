"""``ResumableStream``'s bounds, on the stream itself (the wire behaviour is
tests/http/test_mcphttp_resumable_streams.py): a detached stream not resumed in time is
abandoned and its call stopped; past ``MAX_DETACHED_STREAMS`` a session's next disconnect
stops its call at once; a stream holds its last ``held_events`` events
(``SESSION_HELD_EVENTS``), and a resume from before them is refused by name."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from beammcp_django.transports.sessions import resumable
from beammcp_django.transports.sessions.resumable import ResumableStream, ResumeRefused

SSE = {"type": "http.response.start", "status": 200, "headers": resumable.SSE_START}


class Connection:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def receive(self) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def event(number: int) -> dict[str, Any]:
    body = b'event: message\ndata: {"n":%d}\n\n' % number
    return {"type": "http.response.body", "body": body, "more_body": True}


HELD = 20


async def streaming(
    streams: dict[str, ResumableStream], resume_seconds: float = 60.0
) -> tuple[ResumableStream, list[str]]:
    connection = Connection()
    stream = ResumableStream(
        streams,
        connection.send,
        held_events=HELD,
        resume_seconds=resume_seconds,
    )
    stopped: list[str] = []
    stream.stop_call = lambda: stopped.append(stream.id)
    await stream.send(SSE)
    await stream.send(event(1))
    stream.detach(connection.send)
    return stream, stopped


def test_a_detached_stream_not_resumed_in_time_is_abandoned():
    async def scenario() -> None:
        streams: dict[str, ResumableStream] = {}
        stream, stopped = await streaming(streams, resume_seconds=0.05)
        assert stream.detached and streams == {stream.id: stream}
        await asyncio.sleep(0.2)
        assert stopped == [stream.id] and streams == {}

    asyncio.run(scenario())


def test_past_the_detached_bound_a_disconnect_stops_the_call_at_once():
    async def scenario() -> None:
        streams: dict[str, ResumableStream] = {}
        kept = [await streaming(streams) for _ in range(resumable.MAX_DETACHED_STREAMS)]
        assert all(not stopped for _, stopped in kept)
        one_more, stopped = await streaming(streams)
        assert stopped == [one_more.id] and one_more.id not in streams
        for stream, _ in kept:
            stream.abandon()

    asyncio.run(scenario())


def test_a_stream_holds_its_last_events_and_refuses_a_resume_from_before_them():
    async def scenario() -> None:
        streams: dict[str, ResumableStream] = {}
        stream, _ = await streaming(streams)
        for number in range(2, HELD + 11):
            await stream.send(event(number))
        connection = Connection()
        with pytest.raises(ResumeRefused) as refused:
            await stream.resume(1, connection.send, connection.receive)
        assert refused.value.status == 400 and "no longer holds" in refused.value.message
        last = HELD + 10
        await stream.send({"type": "http.response.body", "body": b"", "more_body": False})
        await stream.resume(last - 1, connection.send, connection.receive)
        replayed = b"".join(message.get("body", b"") for message in connection.sent)
        assert replayed.startswith(b"id: %s:%d\n" % (stream.id.encode(), last))
        assert connection.sent[-1]["more_body"] is False and streams == {}

    asyncio.run(scenario())


def test_a_second_resume_while_the_first_writes_its_backlog_is_refused():
    """The first resume's writes may wait (a carried stream goes through the Channels
    layer): a second resume arriving meanwhile is 409, and the first keeps the stream."""

    async def scenario() -> None:
        streams: dict[str, ResumableStream] = {}
        stream, _ = await streaming(streams)
        opened = asyncio.Event()
        go_on = asyncio.Event()
        slow = Connection()

        async def slow_send(message: dict[str, Any]) -> None:
            opened.set()
            await go_on.wait()
            slow.sent.append(message)

        first = asyncio.ensure_future(stream.resume(0, slow_send, slow.receive))
        await opened.wait()
        second = Connection()
        with pytest.raises(ResumeRefused) as refused:
            await asyncio.wait_for(stream.resume(0, second.send, second.receive), 5)
        assert refused.value.status == 409 and second.sent == []
        go_on.set()
        await stream.send({"type": "http.response.body", "body": b"", "more_body": False})
        await first
        assert slow.sent[-1]["more_body"] is False and streams == {}

    asyncio.run(scenario())


def test_a_release_records_where_to_resume_before_the_client_reads_the_end():
    """The client may resume on another worker as soon as it reads the end of a released
    connection, and that worker looks in the shared store: the record is made first (a CI
    run met a resume refused as unknown when the end went out before the record)."""

    async def scenario() -> None:
        happened: list[str] = []
        connection = Connection()

        async def written(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                happened.append("end written")
            await connection.send(message)

        async def record(stream_id: str) -> None:
            await asyncio.sleep(0.05)  # a round trip to the store
            happened.append(f"{stream_id} recorded")

        stream = ResumableStream({}, written)
        stream.on_detach = lambda stream_id: asyncio.ensure_future(record(stream_id))
        await stream.send(SSE)
        await stream.release()
        assert happened == [f"{stream.id} recorded", "end written"]
        assert stream.detached
        stream.abandon()

    asyncio.run(scenario())


def test_a_release_whose_record_fails_still_ends_the_connection(caplog):
    async def scenario() -> None:
        connection = Connection()

        async def failing(stream_id: str) -> None:
            raise ConnectionError("the store is away")

        stream = ResumableStream({}, connection.send)
        stream.on_detach = lambda stream_id: asyncio.ensure_future(failing(stream_id))
        await stream.send(SSE)
        await stream.release()
        assert connection.sent[-1] == {
            "type": "http.response.body",
            "body": b"",
            "more_body": False,
        }
        assert stream.detached
        stream.abandon()

    asyncio.run(scenario())
    assert "recording where stream" in caplog.text
