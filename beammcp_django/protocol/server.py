"""The protocol core: one decoded message in, one reply out (or nothing, and why).

No I/O happens here. ``Server.receive`` reads a message (``request.py``: the envelope, the
revision, ``_meta``) without running host code; ``Server.serve`` answers the request it
read; ``handle`` does both. Between the two a transport may hold its carrier's rules against
what was read (HTTP's mirrored headers). The transport hands over the few things only it
owns: the legacy session of a stdio process, a thread-safe ``emit`` for request-scoped
notifications, a cancellation flag, and ``run_sync`` for host code that is not a coroutine
function. The core refuses what is malformed with the spec's code, validates against the
schemas it advertised (``index.py``), calls the host, and shapes the answer for the
request's revision (``results.py``).

The methods themselves live by family in ``methods/``; this module routes to them by the
two revisions' tables.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from . import jsonrpc, wire
from .access import InsufficientScope, admits, hides
from .context import NO_FACTS, CallerFacts, Cancellation, Emit, RequestContext
from .errors import INVALID_REQUEST, METHOD_NOT_FOUND, HostContractError, PartDown, ProtocolError
from .faults import fault_data
from .methods import handshake, prompts, resources, skills, subscriptions, tasks, tools
from .methods.base import (
    BoundHost,
    CacheHint,
    Handler,
    Reply,
    ServerBase,
    ServerOptions,
    TraceHost,
    run_inline,
)
from .notifications import envelope_problem, is_notification
from .request import LegacySession, Listener, Request, Unanswered, read_request
from .round_trips import Ask
from .task_wire import TaskCall, TaskOutcome

__all__ = [
    "SERVED_METHODS",
    "BoundHost",
    "CacheHint",
    "Reply",
    "Server",
    "ServerOptions",
    "TraceHost",
    "run_inline",
]

logger = logging.getLogger("beammcp_django")


class Server(ServerBase):
    """Serves one catalog. Safe to share between concurrent requests: it holds no request
    state, and the legacy session (stdio only) is passed in by the transport."""

    async def handle(
        self,
        message: dict[str, Any],
        *,
        session: LegacySession | None = None,
        emit: Emit | None = None,
        cancelled: Cancellation | None = None,
        listen: Listener | None = None,
        size: int = 0,
        principal: Any = None,
        scopes: frozenset[str] | None = None,
    ) -> Reply | Unanswered:
        """Answer one decoded message: ``receive`` it, then ``serve`` what it requests."""
        received = self.receive(message, session=session, size=size)
        if type(received) is not Request:
            return received
        return await self.serve(
            received,
            emit=emit,
            cancelled=cancelled,
            listen=listen,
            principal=principal,
            scopes=scopes,
        )

    def receive(
        self, message: Any, *, session: LegacySession | None = None, size: int = 0
    ) -> Request | Reply | Unanswered:
        """What ``message`` asks: a request this server serves, the reply refusing it, or
        nothing to answer and why. No host code runs.

        ``size`` is the message's length in bytes, as the transport read it: from
        ``wire.LARGE_MESSAGE_BYTES`` on, its validation runs off the event loop.
        """
        if type(message) is not dict:
            return jsonrpc.error(None, INVALID_REQUEST, "message is not a JSON object")
        if jsonrpc.is_response(message):
            return Unanswered("response")
        if is_notification(message):
            return Unanswered("notification", envelope_problem(message))
        request_id = jsonrpc.readable_id(message)
        try:
            request = read_request(request_id, message, legacy=self.options.legacy, session=session)
            if _handler(request) is None:
                raise ProtocolError(
                    METHOD_NOT_FOUND, self.no_method(request.method, request.modern)
                )
        except ProtocolError as refused:
            return jsonrpc.refusal(request_id, refused)
        if size >= wire.LARGE_MESSAGE_BYTES:
            request = dataclasses.replace(request, large=True)
        return request

    async def serve(
        self,
        request: Request,
        *,
        emit: Emit | None = None,
        cancelled: Cancellation | None = None,
        listen: Listener | None = None,
        principal: Any = None,
        scopes: frozenset[str] | None = None,
        ask: Ask | None = None,
        release: Callable[[], bool] | None = None,
        facts: CallerFacts = NO_FACTS,
    ) -> Reply:
        """The reply to a request ``receive`` gave: the host's answer shaped for its
        revision, or the error refusing it. ``listen`` is the transport's stream for
        ``subscriptions/listen``; without it the method is not served. ``principal`` is who
        is calling, as the transport established it (host code sees ``context.principal``),
        ``scopes`` what the caller's token carries (None: not known, not held to scopes), and
        ``facts`` the rest the transport learned (``context.claims``, ``values``, ``headers``).

        Raises ``InsufficientScope`` (``access.py``) for an entry the caller may see but whose
        scopes its token lacks: the transport answers it as its carrier challenges; and
        ``PartDown`` when a part the server shares (the database behind tasks, the session
        store) did not answer: the transport answers it as unavailable."""
        request_id = request.id
        handler = _handler(request)
        assert handler is not None, "receive() gives only requests this server serves"
        if request.method == "subscriptions/listen":
            request = dataclasses.replace(request, listener=listen)
        context = self._context(
            request,
            principal,
            scopes,
            emit=emit,
            cancelled=cancelled,
            ask=ask,
            release=release,
            facts=facts,
        )
        try:
            result = await handler(self, request, context)
            if request.modern:
                result.setdefault("resultType", "complete")
                # A fresh dict each time: a transport may add keys to one result's _meta.
                result["_meta"] = {**result.get("_meta", {}), **self.server_meta}
            return jsonrpc.result(request_id, result)
        except (InsufficientScope, PartDown):
            raise
        except ProtocolError as refused:
            return jsonrpc.refusal(request_id, refused)
        except HostContractError as fault:
            logger.error(
                "MCP host answer off contract (request id %s): %s", _shown_id(request_id), fault
            )
            return jsonrpc.internal_error(request_id, self._fault_data(fault, request))
        except Exception as fault:
            logger.exception("MCP host fault while serving request id %s", _shown_id(request_id))
            return jsonrpc.internal_error(request_id, self._fault_data(fault, request))
        finally:
            # Answered: whatever the host code still reports is dropped, and it reads
            # context.cancelled as true (a call cut off by its deadline goes on running).
            context.finish()

    def _context(
        self,
        request: Request,
        principal: Any,
        scopes: frozenset[str] | None,
        *,
        emit: Emit | None = None,
        cancelled: Cancellation | None = None,
        ask: Ask | None = None,
        release: Callable[[], bool] | None = None,
        facts: CallerFacts = NO_FACTS,
    ) -> RequestContext:
        return RequestContext(
            request_id=request.id,
            method=request.method,
            protocol_version=request.version,
            client_capabilities=request.capabilities,
            client_info=request.client_info,
            meta=request.meta,
            run_sync=self._run_sync,
            emit=emit,
            log_level=request.log_level,
            cancelled=cancelled,
            principal=principal,
            scopes=scopes,
            ask=ask if not request.modern else None,
            release=release if not request.modern else None,
            facts=facts,
            handles=self.handles,
        )

    def _fault_data(self, fault: Exception, request: Request) -> dict[str, str] | None:
        """The internal error's data under ``DEBUG`` (``faults.py``); None without it."""
        if not self.options.debug:
            return None
        return fault_data(fault, self.handler_of(request.method, request.params))

    async def hides_target(
        self, request: Request, principal: Any, scopes: frozenset[str] | None
    ) -> bool:
        """Whether the tool a ``tools/call`` names is one the caller's gates hide: a
        transport that checks the request against what the tool declares (HTTP's mirrored
        parameter headers) first asks this, so that a hidden tool is answered by the core
        as an unknown one, never by what it declares."""
        if request.method != "tools/call":
            return False
        entry = self.index().tool_entries.get(request.params.get("name"))  # type: ignore[arg-type]
        if entry is None or not hides(entry.spec.access):
            return False
        return not await admits(entry.spec.access, self._context(request, principal, scopes))

    async def run_task(
        self,
        call: TaskCall,
        *,
        cancelled: Cancellation | None = None,
        emit: Emit | None = None,
        progress_token: str | None = None,
    ) -> TaskOutcome:
        """Run a task's tool once, in the worker (``methods/tasks.run_task``)."""
        return await tasks.run_task(
            self, call, cancelled=cancelled, emit=emit, progress_token=progress_token
        )


_MODERN_METHODS: dict[str, Handler] = {
    **handshake.MODERN,
    **tools.METHODS,
    **resources.METHODS,
    **prompts.METHODS,
    **skills.METHODS,
    **subscriptions.MODERN,
    **tasks.MODERN,
}

# The 2025-11-25 era has the handshake and the session's subscriptions, not discovery,
# listen streams nor the tasks extension.
_LEGACY_METHODS: dict[str, Handler] = {
    **handshake.LEGACY_ONLY,
    **subscriptions.LEGACY_ONLY,
    **tools.METHODS,
    **resources.METHODS,
    **prompts.METHODS,
    **skills.METHODS,
}

# Every method either revision serves: what a transport may name without trusting the client.
SERVED_METHODS: frozenset[str] = frozenset(_MODERN_METHODS) | frozenset(_LEGACY_METHODS)


def _handler(request: Request) -> Handler | None:
    return (_MODERN_METHODS if request.modern else _LEGACY_METHODS).get(request.method)


def _shown_id(request_id: jsonrpc.RequestId | None) -> str:
    """A request id as the server log shows it: the client chose it, so at most 64 characters."""
    shown = repr(request_id)
    return shown if len(shown) <= 64 else shown[:61] + "..."
