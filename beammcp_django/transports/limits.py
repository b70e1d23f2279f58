"""The host's rate limit, asked before a request is served: the package keeps no limiter of
its own, it only asks and answers.

``BEAMMCP["RATE_LIMIT"]`` names a callable, sync or async, given who is calling (the
principal the transport established, None for nobody) and the request's method. It answers
None to serve the request, or the seconds after which the caller may try again to refuse it.
HTTP answers a refusal ``429`` with ``Retry-After``; stdio, a JSON-RPC error
(``LIMIT_REACHED``) naming the wait. Notifications are never asked about: they are answered
with nothing, and a ``notifications/cancelled`` must always get through.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from beammcp_django.protocol import jsonrpc
from beammcp_django.protocol.errors import HOST_FAULTS, LIMIT_REACHED, ProtocolError

logger = logging.getLogger("beammcp_django")

RateLimit = Callable[[Any, str], Any]


class RateLimited(Exception):
    """The host's rate limit refused a request; the caller may retry after ``seconds``."""

    def __init__(self, seconds: int) -> None:
        super().__init__(f"rate limited: retry after {seconds} s")
        self.seconds = seconds

    def reply(self, request_id: jsonrpc.RequestId | None) -> dict[str, Any]:
        refusal = ProtocolError(LIMIT_REACHED, str(self), {"retryAfterSeconds": self.seconds})
        return jsonrpc.refusal(request_id, refusal)


async def check_rate(
    hook: RateLimit,
    run_sync: Callable[..., Awaitable[Any]],
    principal: Any,
    message: Any,
) -> None:
    """Raise ``RateLimited`` when the hook refuses ``message`` (a request: it has an id and a
    method). A hook that raises, or answers anything but None or a number of seconds > 0,
    is a host fault: logged, and the request refused for a second rather than served
    unmetered."""
    if type(message) is not dict or "id" not in message:
        return
    method = message.get("method")
    if type(method) is not str:
        return
    try:
        if inspect.iscoroutinefunction(hook):
            verdict = await hook(principal, method)
        else:
            verdict = await run_sync(hook, principal, method)
    except HOST_FAULTS:
        logger.exception("the MCP rate-limit hook raised; refusing the request")
        raise RateLimited(1) from None
    if verdict is None:
        return
    if (
        isinstance(verdict, bool)
        or not isinstance(verdict, (int, float))
        or not math.isfinite(verdict)
        or verdict <= 0
    ):
        logger.error(
            "the MCP rate-limit hook answered %s, neither None nor seconds > 0; refusing",
            type(verdict).__name__,
        )
        raise RateLimited(1)
    logger.info("MCP request refused by the rate-limit hook: %s for %.0f s", method, verdict)
    raise RateLimited(max(1, math.ceil(verdict)))
