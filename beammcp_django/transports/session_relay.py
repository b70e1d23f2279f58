"""What concerns a session's live calls, carried between the workers that share its store.

A 2025-11-25 session's requests may reach any worker, and what one of them carries may
concern a call another runs: the client's answer to a server-to-client request, a
``notifications/cancelled``, the session's end (``DELETE``). Each worker process holds one
channel on the Channels layer (Redis in production) and listens on it: an answer goes to the
channel of the worker that asked (the store recorded which, ``shared_sessions``); a
cancellation or an end goes to every worker (a group), and the one running what it names
acts on it. Nothing travels per request: a call that asks nothing, is not cancelled and
outlives no ``DELETE`` costs the layer nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from typing import Any

from beammcp_django.transports.sessions import LiveCalls, deliver_here, withdraw_here

logger = logging.getLogger("beammcp_django.http")

GROUP = "beammcp.sessions"
ANSWER = "beammcp.session.answer"
CANCEL = "beammcp.session.cancel"
END = "beammcp.session.end"
# channels_redis lets a group membership lapse after a day (group_expiry): renewed well before.
REJOIN_SECONDS = 3600.0


class SessionRelay:
    """This process's end of the relay, and the live calls of every session it runs."""

    def __init__(self, layer: Callable[[], Any]) -> None:
        self._layer = layer
        self._live: weakref.WeakValueDictionary[str, LiveCalls] = weakref.WeakValueDictionary()
        self._channel: str | None = None
        self._listening: asyncio.Task[None] | None = None
        self._joining = asyncio.Lock()

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
                channel = await layer.new_channel()
                await layer.group_add(GROUP, channel)
                self._channel = channel
                self._listening = asyncio.get_running_loop().create_task(self._listen(channel))
        return self._channel

    async def answer(self, channel: str, session_id: str, message: dict[str, Any]) -> None:
        """Carry the client's answer ``message`` to the worker at ``channel``, which asked."""
        await self._layer().send(
            channel, {"type": ANSWER, "session": session_id, "message": message}
        )

    async def cancel(self, session_id: str, request_id: str | int) -> None:
        await self.address()  # a worker that never listened must still hear its own
        await self._layer().group_send(
            GROUP, {"type": CANCEL, "session": session_id, "request": request_id}
        )

    async def end(self, session_id: str) -> None:
        await self.address()
        await self._layer().group_send(GROUP, {"type": END, "session": session_id})

    def stop(self) -> None:
        """Stop listening (the process is shutting down, or a test is done with it)."""
        listening, self._listening, self._channel = self._listening, None, None
        if listening is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: it stopped with it
                listening.get_loop().call_soon_threadsafe(listening.cancel)

    async def _listen(self, channel: str) -> None:
        layer = self._layer()
        loop = asyncio.get_running_loop()
        rejoin_at = loop.time() + REJOIN_SECONDS
        while True:
            try:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, rejoin_at - loop.time())):
                        self._act(await layer.receive(channel))
                if loop.time() >= rejoin_at:
                    await layer.group_add(GROUP, channel)
                    rejoin_at = loop.time() + REJOIN_SECONDS
            except asyncio.CancelledError:
                raise
            except Exception:  # the layer failed (Redis restarted): keep listening
                logger.exception("the session relay's read failed; reading again in 1 s")
                await asyncio.sleep(1.0)

    def _act(self, event: dict[str, Any]) -> None:
        session_id = event.get("session")
        calls = self._live.get(session_id) if type(session_id) is str else None
        if calls is None:
            return  # nothing of that session runs here
        kind = event.get("type")
        if kind == ANSWER:
            message = event.get("message")
            if type(message) is dict:
                deliver_here(calls, message.get("id"), message)
        elif kind == CANCEL:
            withdraw_here(calls, event.get("request"))
        elif kind == END:
            calls.end()
