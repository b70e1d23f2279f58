"""When a long-lived stream must end: a 2026-07-28 listen stream and a 2025-11-25 session's
GET stream are bounded alike, past their lifetime (``SUBSCRIPTION_MAX_SECONDS``), when their
credential ends (the ``Grant``'s ``expires_at``), and when the ``AUTHORIZE`` hook, asked
again every ``SUBSCRIPTION_REAUTHORIZE_SECONDS``, no longer says yes. How each stream ended
is counted, per process, in ``STREAM_ENDINGS``."""

from __future__ import annotations

import asyncio

from beammcp_django.transports.admission import StreamAuthority
from beammcp_django.transports.policy import HttpPolicy

# How streams ended, per process: for the operator, and for tests that prove the bounds.
STREAM_ENDINGS = {
    "overflow": 0,
    "lifetime": 0,
    "unauthorized": 0,
    "expired": 0,
    "ended": 0,
    "unavailable": 0,  # a shared part stopped answering
}


class StreamBounds:
    """One stream's three deadlines, from when it opened."""

    __slots__ = ("_authority", "_reauthorize_seconds", "ends_at", "expires_at", "recheck_at")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, policy: HttpPolicy, authority: StreamAuthority
    ) -> None:
        now = loop.time()
        self._authority = authority
        self._reauthorize_seconds = policy.subscription_reauthorize_seconds
        self.ends_at = now + policy.subscription_max_seconds
        self.expires_at = now + authority.seconds_left()  # the credential's end
        self.recheck_at = now + policy.subscription_reauthorize_seconds

    async def due(self, now: float) -> float | None:
        """When the next bound falls due (loop time), or None when the stream must end at
        ``now``: the ending is counted. The hook is asked here when its time has come."""
        if now >= self.ends_at:
            STREAM_ENDINGS["lifetime"] += 1
            return None
        if now >= self.expires_at:
            STREAM_ENDINGS["expired"] += 1
            return None
        if now >= self.recheck_at:
            if not await self._authority():
                STREAM_ENDINGS["unauthorized"] += 1
                return None
            self.recheck_at = now + self._reauthorize_seconds
        return min(self.ends_at, self.expires_at, self.recheck_at)
