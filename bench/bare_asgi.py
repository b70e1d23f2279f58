"""The ceiling: an ASGI callable that reads the request body and answers a fixed 150-byte
JSON body, with no framework and no protocol. What uvicorn, the loop and the load generator
cost per request on this machine; ``bench/http.py`` serves it with the same command line as
the MCP servers::

    .venv/bin/python -m uvicorn bench.bare_asgi:application --port 8002
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]

_PREFIX = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],'
_FILLER_KEY = b'"resultType":"complete","padding":"'
_SUFFIX = b'"}}'
BODY = _PREFIX + _FILLER_KEY + b"x" * (150 - len(_PREFIX + _FILLER_KEY + _SUFFIX)) + _SUFFIX
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"150")]


async def application(
    scope: MutableMapping[str, Any],
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to start, and saying nothing is allowed
    more_body = True
    while more_body:
        message = await receive()
        more_body = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
