"""JSON-RPC and MCP error codes, and the one exception the core raises to refuse a message.

Codes come from the spec's schema.ts of both revisions (see DIGEST.md §10). A refusal carries
its code, a message that names the cause, and optional structured ``data``; it never carries
the client's bytes or a Python object's repr.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# 2025-11-25 only; 2026-07-28 forbids emitting it and uses INVALID_PARAMS instead.
RESOURCE_NOT_FOUND_LEGACY = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# A bound of the server's own was reached (a session limit, the host's rate limit); the
# message names which. The range JSON-RPC 2.0 leaves to the server's own errors.
LIMIT_REACHED = -32000


class ProtocolError(Exception):
    """A refusal the core turns into a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class PartDown(Exception):
    """A part the server shares with other processes (the session store, the channel layer,
    the database) did not answer. Not a fault of the request nor of the host: the core lets
    it through, and the transport answers the request as unavailable for now, naming
    ``part`` and nothing of the error (HTTP: 503 with ``Retry-After``)."""

    def __init__(self, part: str) -> None:
        super().__init__(f"{part} is unavailable")
        self.part = part

    @property
    def message(self) -> str:
        """What the client is told: the part, and that the request may be sent again."""
        return f"{self.part} is unavailable; send the request again later"


class HostContractError(Exception):
    """The host's code answered outside its contract (a wrong type, a schema mismatch).

    It is a host fault: logged on the server with the detail, answered to the client as
    -32603 with nothing of the detail.
    """


class ToolError(Exception):
    """Raised by a tool to answer an execution error the model can read and correct.

    The message becomes the text of a result with ``isError: true``; unlike any other
    exception from host code, it is meant for the client, so write it for the client.
    """


class ResourceNotFound(Exception):
    """Raised by a reader when a URI matched a template but names nothing that exists."""


# What host code can raise that ``except Exception`` misses, or that an asyncio future refuses
# to carry (StopIteration): left alone, each would end the serving loop, kill a worker thread
# or leave a caller waiting for ever. Raised by host code they are host faults like any other;
# a real interrupt of the process arrives as a signal, which the transports handle themselves.
ESCAPING_EXCEPTIONS: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    StopIteration,
    StopAsyncIteration,
)

# Everything a ``try`` around host code catches to answer -32603 and serve on.
HOST_FAULTS: tuple[type[BaseException], ...] = (Exception, *ESCAPING_EXCEPTIONS)


class HostEscape(Exception):
    """Host code raised one of ``ESCAPING_EXCEPTIONS``; carried as an ordinary exception (the
    original is its ``__cause__``) so that the caller answers -32603 and serves on."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(f"host code raised {type(raised).__name__}")
        self.raised = raised


def contained(raised: BaseException) -> Exception:
    """What a worker thread hands its caller for an exception its host code raised:
    ``raised`` when it is an ordinary ``Exception`` a future can carry, else a ``HostEscape``
    for it (a ``CancelledError`` too: nothing cancels a thread, so host code raised it)."""
    if isinstance(raised, Exception) and not isinstance(raised, ESCAPING_EXCEPTIONS):
        return raised
    escape = HostEscape(raised)
    escape.__cause__ = raised
    return escape
