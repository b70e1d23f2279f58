"""What host code receives beside its arguments: who asked, in which era, and two channels
back to the caller (progress and log notifications) that the transport carries.

The context never carries I/O itself: ``emit`` is the transport's, and must be safe to call
from a worker thread, since sync host code runs in one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from .jsonrpc import notification

logger = logging.getLogger("beammcp_django")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LEVEL_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}

Emit = Callable[[dict[str, Any]], None]
RunSync = Callable[..., Awaitable[Any]]


class Cancellation(Protocol):
    """What a transport passes to say a request was withdrawn (``threading.Event`` fits)."""

    def is_set(self) -> bool: ...

    def set(self) -> None: ...


EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class CallerFacts:
    """What the transport learned of the caller besides who it is, for host code to read:
    ``claims``, what the credential says (a JWT's claims, the OAuth client's id);
    ``values``, what the host's ``AUTHORIZE`` hook chose to pass on (a tenant it resolved);
    ``headers``, the request headers the host named in ``HANDLER_HEADERS`` (a request id),
    each as sent once. None of it is checked by the package: the hook decided."""

    claims: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    values: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    headers: Mapping[str, str] = field(default_factory=lambda: EMPTY)


# The facts of a caller the transport learned nothing more of: one object, never copied.
NO_FACTS = CallerFacts()


class CancelFlag:
    """A one-way flag, set once when the request is withdrawn and read from any thread (an
    attribute store is atomic): what a ``threading.Event`` offers here, without its lock and
    condition on every request."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class RequestContext:
    """One request as the host sees it.

    ``protocol_version`` is the request's revision; ``client_capabilities`` are the ones this
    request declared (2026-07-28) or the session's (2025-11-25); nothing is inferred from
    earlier requests. ``principal`` is who is calling, as the host established it: what its
    ``AUTHORIZE`` hook named over HTTP, the user ``mcp_stdio`` runs as on stdio; None when
    nobody was named (the hook answered ``True``, stdio with no user). ``scopes`` are the
    OAuth scopes the caller's token carries (a ``Grant`` from the hook; an empty set over HTTP
    when the hook named none), or None where the transport knows of none (stdio).
    """

    __slots__ = (
        "_cancelled",
        "_emit",
        "_finished",
        "_handle_book",
        "_handles",
        "_last_progress",
        "_log_rank",
        "_progress_dropped",
        "_progress_token",
        "_release",
        "admitted",
        "ask",
        "client_capabilities",
        "client_info",
        "facts",
        "input_responses",
        "meta",
        "method",
        "principal",
        "protocol_version",
        "request_id",
        "request_state",
        "run_sync",
        "scopes",
    )

    def __init__(
        self,
        *,
        request_id: str | int,
        method: str,
        protocol_version: str,
        client_capabilities: Mapping[str, Any],
        client_info: Mapping[str, Any] | None,
        meta: Mapping[str, Any],
        run_sync: RunSync,
        emit: Emit | None,
        log_level: str | None,
        cancelled: Cancellation | None = None,
        principal: Any = None,
        scopes: frozenset[str] | None = None,
        ask: Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]] | None = None,
        release: Callable[[], bool] | None = None,
        facts: CallerFacts = NO_FACTS,
        handles: Callable[[RequestContext], Any] | None = None,
    ) -> None:
        self.request_id = request_id
        # What makes ``handles`` (the layer that built the server gives it); made when first
        # asked, once a request.
        self._handles = handles
        self._handle_book: Any = None
        self.facts = facts
        # The transport's way to end this request's connection while its stream goes on
        # (``release_connection``); None where no stream can be resumed.
        self._release = release
        self.principal = principal
        self.scopes = scopes
        # The verdicts of the entries' gates for this caller, by Access id (access.py).
        self.admitted: dict[int, bool] = {}
        # The transport's way to send a server-to-client request and await its answer (a
        # 2025-11-25 session over HTTP); the core serves InputRequired through it. Host code
        # returns InputRequired rather than calling it.
        self.ask = ask
        self.method = method
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.meta = meta
        # On a multi-round-trip retry: the client's answers by key, and the state the host
        # sealed in its InputRequired, verified (2026-07-28 tools/call, prompts/get, read).
        self.input_responses: Mapping[str, Any] = {}
        self.request_state: Any = None
        self.run_sync = run_sync
        self._emit = emit
        token = meta.get("progressToken")
        self._progress_token = token if emit is not None else None
        self._log_rank = _LEVEL_RANK[log_level] if emit is not None and log_level else None
        self._cancelled = cancelled if cancelled is not None else CancelFlag()
        self._finished = False
        self._last_progress: float | None = None
        self._progress_dropped = False

    @property
    def cancelled(self) -> bool:
        """True once the client withdrew the request, or once it was answered without this
        code (past ``CALL_TIMEOUT_SECONDS``): sync host code should poll it and stop."""
        return self._finished or self._cancelled.is_set()

    @property
    def handles(self) -> Any:
        """The caller's server-minted handles (``beammcp_django.handles.book.HandleBook``):
        mint one, look one up, end one. None where the server was built without them."""
        if self._handle_book is None and self._handles is not None:
            self._handle_book = self._handles(self)
        return self._handle_book

    @property
    def claims(self) -> Mapping[str, Any]:
        """What the caller's credential says (``Grant.claims``); empty when nothing."""
        return self.facts.claims

    @property
    def values(self) -> Mapping[str, Any]:
        """What the host's ``AUTHORIZE`` hook passed on (``Grant.values``); empty when
        nothing."""
        return self.facts.values

    @property
    def headers(self) -> Mapping[str, str]:
        """The request headers named in ``HANDLER_HEADERS`` that the request sent once (or
        repeated identically), by lower-case name; empty on stdio and in a task's run."""
        return self.facts.headers

    def finish(self) -> None:
        """The request was answered: nothing more is sent for it, and ``cancelled`` is true.
        The transport's own check holds what a worker thread emits in the same instant."""
        self._finished = True
        self._emit = None

    def cancel(self) -> None:
        self._cancelled.set()

    def release_connection(self) -> bool:
        """End this request's HTTP connection now, its reply going on as a stream the client
        resumes: it reconnects (``GET`` with ``Last-Event-ID``, after the stream's
        ``retry``) and receives what follows, the result last. For a long call behind a
        proxy that cuts idle connections. Served in a 2025-11-25 session over HTTP whose
        sessions live in the process; elsewhere it does nothing. Whether it was done. Safe
        from a worker thread."""
        release = self._release
        if release is None or self.cancelled:
            return False
        return release()

    def send(self, notification: dict[str, Any]) -> None:
        """Emit a notification as built (the server's own: acknowledgements, subscriptions)."""
        emit = self._emit
        if emit is not None:
            emit(notification)

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress; sent only when the request carried a ``progressToken``.

        Progress must increase with each notification (progress.mdx §Behavior
        Requirements): a value not above the last one sent, or not a finite number, is
        dropped, and the first such drop of a request is logged.
        """
        emit = self._emit  # read once: finish() may clear it from the loop meanwhile
        if self._progress_token is None or emit is None or self.cancelled:
            return
        last = self._last_progress
        if (
            not isinstance(progress, (int, float))
            or isinstance(progress, bool)
            or (isinstance(progress, float) and not math.isfinite(progress))
            or (last is not None and progress <= last)
        ):
            if not self._progress_dropped:
                self._progress_dropped = True
                logger.warning(
                    "MCP progress dropped: each value must be a finite number above the "
                    "last one sent (request id %.64r)",
                    self.request_id,
                )
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        emit(notification("notifications/progress", params))

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message; sent only at or above the level the client asked for."""
        if level not in _LEVEL_RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {LOG_LEVELS}")
        emit = self._emit  # read once: finish() may clear it from the loop meanwhile
        if self._log_rank is None or emit is None or self.cancelled:
            return
        if _LEVEL_RANK[level] < self._log_rank:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        emit(notification("notifications/message", params))
