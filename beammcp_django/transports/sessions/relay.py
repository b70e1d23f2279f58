"""What concerns a session's live calls, carried between the workers that share its store.

A 2025-11-25 session's requests may reach any worker, and what one of them carries may
concern a call another runs: the client's answer to a server-to-client request, a
``notifications/cancelled``, the session's end (``DELETE``). Each worker process holds one
channel on the Channels layer (Redis in production) and listens on it: an answer goes to the
channel of the worker that asked (the store recorded which, ``shared``); a
cancellation or an end goes to every worker (a group), and the one running what it names
acts on it. A resumed call stream (``GET`` with ``Last-Event-ID``) that reaches a worker
not running the call is carried from the one that runs it: the resuming worker asks it on
its channel, and the stream's events come back on a channel of the resume's own, until the
result, the client's leaving (told back), or ``RESUME_SILENCE_SECONDS`` without a word.
Nothing travels per request: a call that asks nothing, is not cancelled, keeps its
connection and outlives no ``DELETE`` costs the layer nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from typing import Any

from beammcp_django.protocol.errors import INVALID_REQUEST, PartDown
from beammcp_django.transports.outages import CHANNEL_LAYER, outages, unreachable_errors
from beammcp_django.transports.replies import JSON, error_body, respond
from beammcp_django.transports.sessions.resumable import NO_STREAM, ResumeRefused, until_disconnect
from beammcp_django.transports.sessions.store import LiveCalls, deliver_here, withdraw_here
from beammcp_django.transports.types import Receive, Send

logger = logging.getLogger("beammcp_django.http")

GROUP = "beammcp.sessions"
ANSWER = "beammcp.session.answer"
CANCEL = "beammcp.session.cancel"
END = "beammcp.session.end"
RESUME = "beammcp.session.resume"  # to the worker running the call
GONE = "beammcp.session.gone"  # ... the resuming client left
CHUNK = "beammcp.session.chunk"  # from it: one ASGI message of the resumed stream
REFUSED = "beammcp.session.refused"  # ... or why it cannot be resumed
# How long a resumed stream carried from another worker may go without a message (its call
# writes a keep-alive every 15 s) before the worker running it is taken for gone.
RESUME_SILENCE_SECONDS = 45.0
# channels_redis lets a group membership lapse after a day (group_expiry): renewed well before.
REJOIN_SECONDS = 3600.0


async def received(layer: Any, channel: str) -> dict[str, Any]:
    """``layer.receive(channel)``, whose cancellation is sure: the read runs as a task of its
    own, cancelled again until it ends when this one is. channels_redis 4.3 on redis-py 8.2
    swallowed the cancellation of a read about once in 150 and went on to its next blocking
    pop (2026-12-06), so a stopped relay went on reading until a second cancellation. This
    one cancelled again meanwhile (a loop's shutdown cancels every task) still sees the read
    end: left behind, the read went on alone (two test runs side by side, 2026-12-06)."""
    reading = asyncio.ensure_future(layer.receive(channel))
    try:
        await asyncio.wait({reading})
    except asyncio.CancelledError:
        while not reading.done():
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):  # raised below, once it ended
                await asyncio.wait({reading}, timeout=0.1)
        raise
    return reading.result()


class SessionRelay:
    """This process's end of the relay, and the live calls of every session it runs."""

    def __init__(self, layer: Callable[[], Any]) -> None:
        self._layer = layer
        self._live: weakref.WeakValueDictionary[str, LiveCalls] = weakref.WeakValueDictionary()
        self._channel: str | None = None
        self._listening: asyncio.Task[None] | None = None
        self._joining = asyncio.Lock()
        # The resumed streams this worker writes for another: by the channel they go to,
        # what is set when that worker's client leaves.
        self._carried: dict[str, asyncio.Event] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._unreachable = unreachable_errors()

    def calls(self, session_id: str) -> LiveCalls:
        """The live calls of ``session_id`` in this process: one object while anything
        here (a request, a stream) holds the session, let go with the last of them."""
        calls = self._live.get(session_id)
        if calls is None:
            calls = self._live[session_id] = LiveCalls()
        return calls

    async def address(self) -> str:
        """This process's channel, listened on from the first call that needs it."""
        if self._channel is not None and self._listening is not None:
            return self._channel
        async with self._joining:
            if self._channel is None or self._listening is None:
                layer = self._layer()
                with self._reaching():
                    channel = await layer.new_channel()
                    await layer.group_add(GROUP, channel)
                self._channel = channel
                self._listening = asyncio.get_running_loop().create_task(self._listen(channel))
        return self._channel

    async def answer(self, channel: str, session_id: str, message: dict[str, Any]) -> None:
        """Carry the client's answer ``message`` to the worker at ``channel``, which asked."""
        answer = {"type": ANSWER, "session": session_id, "message": message}
        with self._reaching():
            await self._layer().send(channel, answer)

    async def cancel(self, session_id: str, request_id: str | int) -> None:
        await self.address()  # a worker that never listened must still hear its own
        cancel = {"type": CANCEL, "session": session_id, "request": request_id}
        with self._reaching():
            await self._layer().group_send(GROUP, cancel)

    async def end(self, session_id: str) -> None:
        await self.address()
        with self._reaching():
            await self._layer().group_send(GROUP, {"type": END, "session": session_id})

    async def resume_elsewhere(
        self,
        owner: str,
        session_id: str,
        stream_id: str,
        after: int,
        receive: Receive,
        send: Send,
    ) -> None:
        """Serve a resume of a stream the worker at ``owner`` runs: its messages written
        here as they come. The layer down before the stream began is ``PartDown`` (503);
        after, the stream ends, as when its worker stops answering."""
        layer = self._layer()
        with self._reaching():
            channel = await layer.new_channel()
            ask = {"session": session_id, "stream": stream_id, "after": after, "reply": channel}
            await layer.send(owner, {"type": RESUME, **ask})
        loop = asyncio.get_running_loop()
        gone = loop.create_task(until_disconnect(receive))
        started = False
        try:
            while True:
                incoming = loop.create_task(layer.receive(channel))
                done, _ = await asyncio.wait(
                    {incoming, gone},
                    timeout=RESUME_SILENCE_SECONDS,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if incoming not in done:
                    incoming.cancel()
                    if gone in done:  # the client left: the stream waits for it again
                        with contextlib.suppress(PartDown), self._reaching():
                            await layer.send(owner, {"type": GONE, "reply": channel})
                    elif started:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    else:
                        await _refuse(send, 503, "the worker running this stream did not answer")
                    return
                try:
                    with self._reaching():
                        event = incoming.result()
                except PartDown:
                    if not started:
                        raise
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                if event.get("type") == REFUSED:
                    await _refuse(send, int(event["status"]), str(event["message"]))
                    return
                message = dict(event["message"])
                if message["type"] == "http.response.start":
                    message["headers"] = [tuple(pair) for pair in message["headers"]]
                    started = True
                await send(message)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    return
        finally:
            gone.cancel()

    def stop(self) -> None:
        """Stop listening (the process is shutting down, or a test is done with it)."""
        listening, self._listening, self._channel = self._listening, None, None
        if listening is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: it stopped with it
                listening.get_loop().call_soon_threadsafe(listening.cancel)

    async def _listen(self, channel: str) -> None:
        layer = self._layer()
        task = asyncio.current_task()
        assert task is not None
        rejoin = asyncio.get_running_loop().call_later(REJOIN_SECONDS, self._rejoin, channel)
        try:
            while True:
                try:
                    self._act(await received(layer, channel))
                except asyncio.CancelledError:
                    raise
                except Exception as error:
                    if task.cancelling():  # the layer turned the cancellation into its error
                        raise asyncio.CancelledError() from None
                    if isinstance(error, self._unreachable):
                        outages.down(CHANNEL_LAYER, error)  # logged as the outage starts, once
                    else:
                        logger.exception("the session relay's read failed; reading again in 1 s")
                    await asyncio.sleep(1.0)
                    # A Redis restarted empty forgot the group: join it again, or keep trying.
                    with contextlib.suppress(PartDown), self._reaching():
                        await layer.group_add(GROUP, channel)
        finally:
            rejoin.cancel()

    def _reaching(self) -> contextlib.AbstractContextManager[None]:
        return outages.reaching(CHANNEL_LAYER, self._unreachable)

    def _rejoin(self, channel: str) -> None:
        """Renew this worker's place in the group before the layer lets it lapse."""
        if self._channel != channel:
            return  # stopped, or listening on another channel since
        loop = asyncio.get_running_loop()
        self._keep(loop.create_task(self._join_again(channel)))
        loop.call_later(REJOIN_SECONDS, self._rejoin, channel)

    async def _join_again(self, channel: str) -> None:
        with contextlib.suppress(PartDown), self._reaching():  # tried again in an hour
            await self._layer().group_add(GROUP, channel)

    def _keep(self, task: asyncio.Task[None]) -> None:
        """Hold a task of the relay's until it ends, and read how it ended: a failure is
        logged in one line, never left for asyncio to report with its traceback."""
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (failed := task.exception()) is not None:
            logger.warning("the session relay's %s failed: %s", task.get_name(), failed)

    def _act(self, event: dict[str, Any]) -> None:
        if event.get("type") == GONE:
            left = self._carried.get(str(event.get("reply")))
            if left is not None:
                left.set()
            return
        session_id = event.get("session")
        calls = self._live.get(session_id) if type(session_id) is str else None
        kind = event.get("type")
        if kind == RESUME:
            self._keep(asyncio.get_running_loop().create_task(self._carry(calls, event)))
            return
        if calls is None:
            return  # nothing of that session runs here
        if kind == ANSWER:
            message = event.get("message")
            if type(message) is dict:
                deliver_here(calls, message.get("id"), message)
        elif kind == CANCEL:
            withdraw_here(calls, event.get("request"))
        elif kind == END:
            calls.end()

    async def _carry(self, calls: LiveCalls | None, event: dict[str, Any]) -> None:
        """Write a stream of ``calls`` for the worker that the resuming client reached."""
        layer = self._layer()
        reply = str(event.get("reply"))
        stream = None if calls is None else calls.streams.get(str(event.get("stream")))
        if stream is None:
            with contextlib.suppress(PartDown), self._reaching():  # the resume waits, then 503
                await layer.send(reply, {"type": REFUSED, "status": 400, "message": NO_STREAM})
            return
        left = self._carried[reply] = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            try:
                await layer.send(reply, {"type": CHUNK, "message": message})
            except Exception as failed:  # the layer's (a full channel): the connection's gone
                raise OSError("the resuming worker's channel cannot take more") from failed

        async def receive() -> dict[str, Any]:
            await left.wait()
            return {"type": "http.disconnect"}

        try:
            await stream.resume(int(event.get("after", -1)), send, receive)
        except ResumeRefused as refused:
            said = {"type": REFUSED, "status": refused.status, "message": refused.message}
            with contextlib.suppress(PartDown), self._reaching():
                await layer.send(reply, said)
        finally:
            self._carried.pop(reply, None)


async def _refuse(send: Send, status: int, message: str) -> None:
    await respond(send, status, error_body(None, INVALID_REQUEST, message), list(JSON))
