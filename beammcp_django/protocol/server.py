"""The protocol core: one decoded message in, one reply out (or nothing, and why).

No I/O happens here. ``Server.read`` reads a message (``request.py``: the envelope, the
revision, ``_meta``) without running host code; ``Server.serve`` answers the request it
read; ``handle`` does both. Between the two a transport may hold its carrier's rules against
what was read (HTTP's mirrored headers). The transport hands over the few things only it
owns: the legacy session of a stdio process, a thread-safe ``emit`` for request-scoped
notifications, a cancellation flag, and ``run_sync`` for host code that is not a coroutine
function. The core refuses what is malformed with the spec's code, validates against the
schemas it advertised (``index.py``), calls the host, and shapes the answer for the
request's revision (``results.py``).
"""

from __future__ import annotations

import bisect
import dataclasses
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from . import echo, jsonrpc, revisions, wire
from .access import Access, InsufficientScope, admits, admitted, hides, require_scopes
from .calling import host_call
from .catalog import ENTRY_KINDS, InputRequired, ResourceMatch
from .context import LOG_LEVELS, Cancellation, Emit, RequestContext, RunSync
from .cursor import CursorCodec, InvalidCursor
from .errors import (
    ESCAPING_EXCEPTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    HostContractError,
    HostEscape,
    PartDown,
    ProtocolError,
    ResourceNotFound,
    ToolError,
)
from .index import CatalogIndex
from .notifications import envelope_problem, is_notification
from .principal import principal_key
from .request import (
    LegacySession,
    Listener,
    Request,
    Unanswered,
    is_implementation,
    optional_object,
    read_request,
    require_string,
)
from .results import (
    completion,
    not_found,
    prompt_result,
    resource_contents,
    tool_error,
    tool_result,
)
from .round_trips import (
    Ask,
    StateCodec,
    ask_in_session,
    askable,
    input_required,
    receive_inputs,
)
from .schema import CompiledSchema
from .subscriptions import (
    MAX_SUBSCRIBED_URI_CHARS,
    MAX_SUBSCRIBED_URIS,
    SUBSCRIPTION_ID,
    listen_filter,
)
from .tasks import (
    DISABLED,
    EXTENSION,
    REQUIRED,
    TaskCall,
    TaskOutcome,
    TaskRunner,
    declares_tasks,
    input_responses_param,
    missing_tasks_capability,
    task_id_param,
)
from .whole_numbers import whole_numbers

logger = logging.getLogger("beammcp_django")

Reply = dict[str, Any]  # a JSON-RPC result or error, as the transport sends it


BoundHost = Callable[[Awaitable[Any]], Awaitable[Any]]
TraceHost = Callable[[str, str], AbstractContextManager[Any] | None]


async def run_inline(function: Callable[..., Any], *args: Any) -> Any:
    """The default for sync host code when no transport supplies a thread runner."""
    return function(*args)


@dataclass(frozen=True)
class _Asked:
    """The ``input_required`` result of a 2026-07-28 request: the reply, not a host value."""

    result: dict[str, Any]


# Resource subscriptions one 2025-11-25 session may hold: each is a URI kept for the session's
# life, so the client's count is bounded.


@dataclass(frozen=True)
class CacheHint:
    """``ttlMs`` and ``cacheScope`` for one cacheable result (2026-07-28 only)."""

    ttl_ms: int = 0
    scope: str = "private"


@dataclass(frozen=True)
class ServerOptions:
    name: str
    version: str
    title: str | None = None
    instructions: str | None = None
    page_size: int = 50
    cache_hints: Mapping[str, CacheHint] = field(default_factory=dict)
    # Serve the 2025-11-25 handshake era beside 2026-07-28 (stdio); HTTP serves 2026 only.
    legacy: bool = False
    # The transport can hold subscriptions/listen streams (advertises listChanged/subscribe).
    subscriptions: bool = False
    # Those streams may watch tasks (``notifications.taskIds``): the tasks' status changes,
    # made in worker processes, reach this one (a shared channel layer).
    task_notifications: bool = False


Handler = Callable[["Server", Request, RequestContext], Awaitable[dict[str, Any]]]


async def _named_entry(
    params: dict[str, Any],
    entries: dict[str, Any],
    accesses: Sequence[Access | None],
    kind: str,
    context: RequestContext,
) -> tuple[str, Any]:
    """The name ``params.name`` gives and the tool or prompt entry it names, which the caller
    may use; an unknown one, or one the caller's gates hide (answered the same, so the answer
    tells nothing of what exists), is refused naming the name only when it is plain (never
    echoing odd bytes).

    Same cost too: a name that is unknown or gated has every gate of the list (``accesses``)
    asked at once, so an unknown name waits for the same verdicts a hidden one does (one
    worker-thread hop for all the plain gates), and the time taken is no oracle either. An
    entry nobody is hidden from is looked up alone: the caller sees it listed anyway."""
    name = require_string(params, "name")
    entry = entries.get(name)
    if entry is None or hides(entry.spec.access):
        await admitted(accesses, context)  # each verdict is kept on the context
    if entry is None or not await admits(entry.spec.access, context):
        if echo.name(name) is not None:
            raise ProtocolError(INVALID_PARAMS, f"unknown {kind} '{name}'")
        raise ProtocolError(
            INVALID_PARAMS, f"unknown {kind} (the requested name is not a valid {kind} name)"
        )
    require_scopes(entry.spec.access, context)
    return name, entry


class Server:
    """Serves one catalog. Safe to share between concurrent requests: it holds no request
    state, and the legacy session (stdio only) is passed in by the transport."""

    def __init__(
        self,
        catalog: Any,
        options: ServerOptions,
        *,
        cursor_key: bytes,
        cursor_fallback_keys: Sequence[bytes] = (),
        run_sync: RunSync = run_inline,
        state_codec: StateCodec | None = None,
        observe: Callable[[str, str], None] | None = None,
        bound_host: BoundHost | None = None,
        offload: RunSync | None = None,
        trace_host: TraceHost | None = None,
        tasks: TaskRunner | None = None,
    ) -> None:
        self.catalog = catalog
        # Where the tasks extension's tasks are made and kept (the Django layer's runner);
        # None: no tool runs as a task, and the extension is neither advertised nor served.
        self._tasks = tasks
        self._tasks_decided_for: CatalogIndex | None = None
        self._tasks_served = False
        self.options = options
        self._states = state_codec
        # Told (method, target) once per call that reached host code: the connectome's feed.
        self._observe = observe
        # Wraps every await of host code; the transport's clock puts a deadline on it (the
        # core has no clock of its own) and refuses by name past it.
        self._bound_host = bound_host
        # Given (method, target) of each host call, a context manager to run it in (the
        # transport layer's span), or None; the core knows nothing of what it records.
        self._trace_host = trace_host
        self._cursors = CursorCodec(cursor_key, cursor_fallback_keys)
        self._run_sync = run_sync
        # Runs the core's own CPU work for a large message (its validation) off the loop, on
        # threads of its own: never queued behind host calls that hold the host's threads.
        # None: done inline.
        self._offload = offload
        self._index: CatalogIndex | None = None
        self._index_lock = threading.Lock()
        self._server_meta = {
            revisions.META_SERVER_INFO: self.server_info(),
        }
        self._hints = {
            method: options.cache_hints.get(method, CacheHint())
            for method in revisions.CACHEABLE_METHODS
        }
        self._async = {
            name: inspect.iscoroutinefunction(getattr(catalog, name, None))
            for name in (kind.handler for kind in ENTRY_KINDS)
        }

    @property
    def run_sync(self) -> RunSync:
        """How this server runs sync host code: what a transport uses for the host's other
        sync hooks (its rate limit), so they run where host code runs."""
        return self._run_sync

    # -- what the server says about itself ---------------------------------------------

    @property
    def has_completions(self) -> bool:
        return callable(getattr(self.catalog, "complete", None))

    @property
    def supported_versions(self) -> list[str]:
        return revisions.served(self.options.legacy)

    def server_info(self) -> dict[str, Any]:
        info = {"name": self.options.name, "version": self.options.version}
        if self.options.title is not None:
            info["title"] = self.options.title
        return info

    def capabilities(self) -> dict[str, Any]:
        # A transport that carries change notifications declares them: 2026-07-28 on
        # subscriptions/listen, 2025-11-25 on the session's stream (HTTP's GET).
        if self.options.subscriptions:
            capabilities: dict[str, Any] = {
                "tools": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True},
            }
        else:
            capabilities = {"tools": {}, "resources": {}, "prompts": {}}
        if self.has_completions:
            capabilities["completions"] = {}
        # Handlers may send notifications/message (context.log); a server that emits them
        # MUST declare logging, at 2026-07-28 too (server/utilities/logging.mdx).
        capabilities["logging"] = {}
        return capabilities

    @property
    def serves_tasks(self) -> bool:
        """Whether the tasks extension is served: a runner is there and a tool may run as a
        task (the extension is advertised on ``server/discover`` then, and only then)."""
        if self._tasks is None:
            return False
        index = self.index()
        if self._tasks_decided_for is not index:  # decided once per catalog, not per request
            self._tasks_served = any(
                entry.spec.task != DISABLED for entry in index.tool_entries.values()
            )
            self._tasks_decided_for = index
        return self._tasks_served

    def index(self) -> CatalogIndex:
        """The compiled catalog, rebuilt when the catalog hands out new list objects."""
        index = self._index
        catalog = self.catalog
        if index is not None:
            tools, resources, prompts = index.sources
            if (
                tools is catalog.tools
                and resources is catalog.resources
                and prompts is catalog.prompts
            ):
                return index
        with self._index_lock:
            self._index = CatalogIndex(catalog, self._index, self.options.legacy)
            return self._index

    # -- the entry point ---------------------------------------------------------------

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
        """Answer one decoded message: ``read`` it, then ``serve`` what it requests."""
        read = self.read(message, session=session, size=size)
        if type(read) is not Request:
            return read
        return await self.serve(
            read,
            emit=emit,
            cancelled=cancelled,
            listen=listen,
            principal=principal,
            scopes=scopes,
        )

    def read(
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
            if self._method(request) is None:
                raise ProtocolError(
                    METHOD_NOT_FOUND, self._no_method(request.method, request.modern)
                )
        except ProtocolError as refused:
            return jsonrpc.refusal(request_id, refused)
        if size >= wire.LARGE_MESSAGE_BYTES:
            request = dataclasses.replace(request, large=True)
        return request

    @staticmethod
    def _method(request: Request) -> Handler | None:
        return (_MODERN_METHODS if request.modern else _LEGACY_METHODS).get(request.method)

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
    ) -> Reply:
        """The reply to a request ``read`` gave: the host's answer shaped for its revision,
        or the error refusing it. ``listen`` is the transport's stream for
        ``subscriptions/listen``; without it the method is not served. ``principal`` is who
        is calling, as the transport established it (host code sees ``context.principal``),
        and ``scopes`` what the caller's token carries (None: not known, not held to scopes).

        Raises ``InsufficientScope`` (``access.py``) for an entry the caller may see but whose
        scopes its token lacks: the transport answers it as its carrier challenges; and
        ``PartDown`` when a part the server shares (the database behind tasks, the session
        store) did not answer: the transport answers it as unavailable."""
        request_id = request.id
        handler = self._method(request)
        assert handler is not None, "read() gives only requests this server serves"
        if request.method == "subscriptions/listen":
            request = dataclasses.replace(request, listener=listen)
        context = self._context(
            request, principal, scopes, emit=emit, cancelled=cancelled, ask=ask, release=release
        )
        try:
            result = await handler(self, request, context)
            if request.modern:
                result.setdefault("resultType", "complete")
                # A fresh dict each time: a transport may add keys to one result's _meta.
                result["_meta"] = {**result.get("_meta", {}), **self._server_meta}
            return jsonrpc.result(request_id, result)
        except (InsufficientScope, PartDown):
            raise
        except ProtocolError as refused:
            return jsonrpc.refusal(request_id, refused)
        except HostContractError as fault:
            logger.error(
                "MCP host answer off contract (request id %s): %s", _shown_id(request_id), fault
            )
            return jsonrpc.internal_error(request_id)
        except Exception:
            logger.exception("MCP host fault while serving request id %s", _shown_id(request_id))
            return jsonrpc.internal_error(request_id)
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
        )

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

    @staticmethod
    def _no_method(method: str, modern: bool) -> str:
        if echo.name(method) is not None:
            era = revisions.MODERN if modern else revisions.LEGACY
            return f"method '{method}' is not served at {era}"
        return "method not found"

    # -- calling the host --------------------------------------------------------------

    async def _host(self, name: str, *args: Any) -> Any:
        observed = token = None
        if self._observe is not None:
            observed = _OBSERVED_AS[name](args)
            self._observe(*observed)
            # Named for the call's observers (its queries, its mail) until it returns.
            token = host_call.set(observed)
        span = None
        if self._trace_host is not None:
            span = self._trace_host(*(observed or _OBSERVED_AS[name](args)))
        function = getattr(self.catalog, name)
        # `complete` may appear after start-up (a completer registered later): look each time.
        is_async = self._async.get(name)
        if is_async is None:
            is_async = inspect.iscoroutinefunction(function)
        bound = self._bound_host
        try:
            if span is None:
                pending = function(*args) if is_async else self._run_sync(function, *args)
                return await (bound(pending) if bound is not None else pending)
            with span:
                # Started inside the span: a sync handler's worker thread takes it along.
                pending = function(*args) if is_async else self._run_sync(function, *args)
                return await (bound(pending) if bound is not None else pending)
        except ESCAPING_EXCEPTIONS as raised:
            # Raised by host code on the loop (a signal never lands here: the transports
            # handle interrupts). Left to rise, SystemExit would stop the loop.
            raise HostEscape(raised) from raised
        finally:
            if token is not None:
                host_call.reset(token)

    def _page(
        self,
        method: str,
        params: Mapping[str, Any],
        keys: list[str],
        wire: list[Any],
        context: RequestContext,
    ) -> tuple[list[Any], str | None]:
        """One page of a list. Its cursor is bound to the principal it was issued to: another
        principal presenting it is refused as for a forged one, so no caller's position
        (nor which entries it sees) carries to another."""
        cursor = params.get("cursor")
        start = 0
        if cursor is not None and cursor != "":
            if type(cursor) is not str:
                raise ProtocolError(INVALID_PARAMS, f"params.cursor of {method} must be a string")
            try:
                last = self._cursors.decode(cursor, method, principal_key(context.principal))
                start = bisect.bisect_right(keys, last)
            except InvalidCursor:
                raise ProtocolError(
                    INVALID_PARAMS, f"params.cursor is not a cursor this server issued for {method}"
                ) from None
        end = start + self.options.page_size
        page = wire[start:end]
        next_cursor = None
        if end < len(keys):
            next_cursor = self._cursors.encode(
                method, keys[end - 1], principal_key(context.principal)
            )
        return page, next_cursor

    async def _listing(
        self,
        request: Request,
        context: RequestContext,
        field_name: str,
        keys: list[str],
        wire: list[Any],
        accesses: list[Any],
    ) -> dict[str, Any]:
        """A list as this caller may see it: without the entries its gates hide."""
        personal = self.index().gated and any(hides(access) for access in accesses)
        if personal:
            shown = await admitted(accesses, context)
            keys = [key for key, admit in zip(keys, shown, strict=True) if admit]
            wire = [entry for entry, admit in zip(wire, shown, strict=True) if admit]
        page, next_cursor = self._page(request.method, request.params, keys, wire, context)
        result: dict[str, Any] = {field_name: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if request.modern:
            self._add_cache_hint(result, request.method, personal)
        return result

    def _add_cache_hint(self, result: dict[str, Any], method: str, personal: bool = False) -> None:
        """``ttlMs`` and ``cacheScope``; a result whose content depends on who asked is
        ``private`` whatever ``CACHE_HINTS`` says (a shared cache must not hand one caller's
        list to another)."""
        hint = self._hints[method]
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = "private" if personal else hint.scope

    # -- subscriptions (2026-07-28) ------------------------------------------------------

    async def _listen(self, request: Request, context: RequestContext) -> dict[str, Any]:
        """Let the transport stream until it ends, acknowledging the filter once it listens,
        then close."""
        listen = request.listener
        if listen is None or not self.options.subscriptions:
            raise ProtocolError(METHOD_NOT_FOUND, self._no_method(request.method, True))
        honoured = listen_filter(request.params)
        if "taskIds" in honoured:
            honoured["taskIds"] = await self._watched_tasks(request, honoured["taskIds"], context)
        delivered = await self._deliverable(honoured, context)
        tag = {SUBSCRIPTION_ID: request.id}

        def acknowledge() -> None:
            context.send(
                jsonrpc.notification(
                    "notifications/subscriptions/acknowledged",
                    {"notifications": honoured, "_meta": tag},
                )
            )

        await listen(request.id, delivered, context, acknowledge)
        return {"_meta": tag}

    async def _watched_tasks(
        self, request: Request, task_ids: list[str], context: RequestContext
    ) -> list[str]:
        """The asked tasks the stream will be told of, which its acknowledgment names: the
        caller's own, where task notifications are served. Another caller's task is left
        out exactly as an unknown one is (no oracle)."""
        if not declares_tasks(request.capabilities):
            raise missing_tasks_capability("params.notifications.taskIds")
        if self._tasks is None or not self.options.task_notifications:
            return []
        owner = principal_key(context.principal)
        found = [await self._tasks.get(task_id, owner) for task_id in task_ids]
        return [task for task, view in zip(task_ids, found, strict=True) if view is not None]

    async def _deliverable(
        self, honoured: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """The filter the stream is served by: ``honoured`` less the URIs that only entries
        hidden from this caller serve. The acknowledgment still names them, as it names a
        URI nothing serves, so the caller cannot tell a hidden resource from an unknown one;
        and no change of a hidden one reaches it (no oracle). The gates of every URI are
        asked in one batch."""
        uris = honoured.get("resourceSubscriptions")
        if not uris:
            return honoured
        index = self.index()
        matches = {uri: list(index.matches(uri)) for uri in uris}
        accesses = [match.spec.access for found in matches.values() for match in found]
        if not any(hides(access) for access in accesses):
            return honoured
        verdicts = iter(await admitted(accesses, context))
        kept = []
        for uri, found in matches.items():
            shown = [next(verdicts) for _ in found]
            if not found or any(shown):
                kept.append(uri)
        return {**honoured, "resourceSubscriptions": kept}

    # -- methods ------------------------------------------------------------------------

    async def _discover(self, request: Request, context: RequestContext) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": self.supported_versions,
            "capabilities": self.capabilities(),
        }
        if self.serves_tasks:
            result["capabilities"]["extensions"] = {EXTENSION: {}}
        if self.options.instructions:
            result["instructions"] = self.options.instructions
        self._add_cache_hint(result, request.method)
        return result

    async def _initialize(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        requested = require_string(params, "protocolVersion")
        capabilities = optional_object(params, "capabilities")
        client_info = params.get("clientInfo")
        if client_info is not None and not is_implementation(client_info):
            raise ProtocolError(
                INVALID_PARAMS, "params.clientInfo must be an object with string name and version"
            )
        version = requested if requested in revisions.LEGACY_VERSIONS else revisions.LEGACY
        session = request.session
        if session is not None:
            session.version = version
            session.client_capabilities = capabilities
            session.client_info = client_info
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": self.server_info(),
        }
        if self.options.instructions:
            result["instructions"] = self.options.instructions
        return result

    async def _ping(self, request: Request, context: RequestContext) -> dict[str, Any]:
        return {}

    async def _set_level(self, request: Request, context: RequestContext) -> dict[str, Any]:
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, "params.level is not a log level")
        if request.session is not None:
            request.session.log_level = level
        return {}

    async def _subscribe(self, request: Request, context: RequestContext) -> dict[str, Any]:
        """2025-11-25 ``resources/subscribe``: the session's stream then carries
        ``notifications/resources/updated`` for the URI. Only a URI the catalog serves (a
        resource, or one a template matches), at most ``MAX_SUBSCRIBED_URIS`` of them,
        each at most ``MAX_SUBSCRIBED_URI_CHARS`` long: what a session holds is bounded."""
        session = self._subscribing_session(request)
        uri = require_string(request.params, "uri")
        if len(uri) > MAX_SUBSCRIBED_URI_CHARS:
            raise ProtocolError(
                INVALID_PARAMS,
                f"a subscribed URI is at most {MAX_SUBSCRIBED_URI_CHARS} characters",
            )
        if await self._visible_match(uri, context) is None:
            raise not_found(uri, request.modern)
        if uri not in session.subscriptions:
            if len(session.subscriptions) >= MAX_SUBSCRIBED_URIS:
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"a session holds at most {MAX_SUBSCRIBED_URIS} resource "
                    "subscriptions: unsubscribe from one first",
                )
            session.subscriptions[uri] = None
        return {}

    async def _unsubscribe(self, request: Request, context: RequestContext) -> dict[str, Any]:
        session = self._subscribing_session(request)
        session.subscriptions.pop(require_string(request.params, "uri"), None)
        return {}

    def _subscribing_session(self, request: Request) -> LegacySession:
        """The session a subscription request changes; only a transport that carries a
        session's notifications (HTTP's GET stream) serves these methods."""
        if not self.options.subscriptions or request.session is None:
            raise ProtocolError(
                METHOD_NOT_FOUND,
                f"{request.method} is not served on this transport: it has no stream to "
                "carry the notifications",
            )
        return request.session

    async def _input(
        self,
        value: InputRequired,
        request: Request,
        context: RequestContext,
        target: str,
        arguments: Any,
        host: str,
        *call: Any,
    ) -> Any:
        """What a host's ``InputRequired`` becomes: at 2026-07-28 the ``input_required``
        result the client retries from (``_Asked``); in a 2025-11-25 session whose transport
        can ask the client (``context.ask``), the host's final answer once its inputs were
        asked as server-to-client requests and the host called ``host(*call)`` again."""
        if context.ask is None:
            return _Asked(input_required(self._states, value, request, target, arguments))
        return await ask_in_session(
            context.ask, value, request, context, lambda: self._host(host, *call)
        )

    async def _checked(
        self, request: Request, schema: CompiledSchema, arguments: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any]]:
        """The first rule ``arguments`` break, or None and the arguments as the host receives
        them (``whole_numbers``); a large message's are checked off the loop."""
        if request.large and self._offload is not None:
            return await self._offload(_checked_arguments, schema, arguments)
        return _checked_arguments(schema, arguments)

    async def _tools_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        wire = index.tool_wire if request.modern else index.tool_wire_legacy
        return await self._listing(
            request, context, "tools", index.tool_keys, wire, index.tool_access
        )

    async def _tools_call(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        index = self.index()
        name, entry = await _named_entry(
            params, index.tool_entries, index.tool_access, "tool", context
        )
        arguments = optional_object(params, "arguments")
        _require_capabilities(entry.spec.required_client_capabilities, request)
        violation, arguments = await self._checked(request, entry.arguments, arguments)
        if violation is not None:
            return tool_error(f"invalid arguments for tool '{name}': {violation}")
        receive_inputs(self._states, request, context, name, arguments)
        if entry.spec.task != DISABLED:
            created = await self._as_task(request, context, name, arguments, entry.spec.task)
            if created is not None:
                return created
        try:
            value = await self._host("dispatch", name, arguments, context)
            if isinstance(value, InputRequired):
                value = await self._input(
                    value, request, context, name, arguments, "dispatch", name, arguments, context
                )
                if type(value) is _Asked:
                    return value.result
        except ToolError as error:
            return tool_error(str(error))
        return tool_result(value, entry, modern=request.modern)

    async def _as_task(
        self,
        request: Request,
        context: RequestContext,
        name: str,
        arguments: dict[str, Any],
        mode: str,
    ) -> dict[str, Any] | None:
        """The answer to a call of a tool that may run as a task: its ``CreateTaskResult``,
        an ``input_required`` result the host asks before the task is made, or None to run
        the call now (an optional tool, to a client that cannot take a task or when the
        host's ``admit_task`` says so). A required tool is refused by name where no task can
        be made: -32021 to a 2026-07-28 client that did not declare the extension, -32602
        in a 2025-11-25 session (the extension is 2026-07-28's) or on a server with no
        runner."""
        if not request.modern or self._tasks is None:
            if mode == REQUIRED:
                where = "in a 2025-11-25 session" if not request.modern else "on this transport"
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"tool '{name}' runs only as a task (the {EXTENSION} extension of "
                    f"2026-07-28), which cannot be made {where}",
                )
            return None
        if not declares_tasks(request.capabilities):
            if mode == REQUIRED:
                raise missing_tasks_capability(f"tool '{name}'")
            return None
        admitted = await self._admit_task(name, arguments, context)
        if isinstance(admitted, InputRequired):
            return input_required(self._states, admitted, request, name, arguments)
        if admitted is not True and admitted is not False:
            raise HostContractError("admit_task answered neither True, False nor InputRequired")
        if not admitted:
            if mode == REQUIRED:
                raise HostContractError(f"admit_task declined tool '{name}', which is required")
            return None
        view = await self._tasks.start(
            TaskCall(
                tool=name,
                arguments=arguments,
                owner=principal_key(context.principal),
                principal=context.principal,
                scopes=context.scopes,
                client_capabilities=request.capabilities,
                input_responses=context.input_responses,
                state=context.request_state,
            )
        )
        return view.created()

    async def _admit_task(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> Any:
        """The host's word on running this call as a task (``admit_task``, optional on a
        catalog): True when it has none."""
        admit = getattr(self.catalog, "admit_task", None)
        if admit is None:
            return True
        if inspect.iscoroutinefunction(admit):
            pending = admit(name, arguments, context)
        else:
            pending = self._run_sync(admit, name, arguments, context)
        return await (self._bound_host(pending) if self._bound_host is not None else pending)

    async def _tasks_get(self, request: Request, context: RequestContext) -> dict[str, Any]:
        task_id = self._task_request(request)
        view = await self._runner().get(task_id, principal_key(context.principal))
        if view is None:
            raise _no_task()
        return view.detailed()

    async def _tasks_update(self, request: Request, context: RequestContext) -> dict[str, Any]:
        task_id = self._task_request(request)
        responses = input_responses_param(request.params)
        if not await self._runner().update(task_id, principal_key(context.principal), responses):
            raise _no_task()
        return {}

    async def _tasks_cancel(self, request: Request, context: RequestContext) -> dict[str, Any]:
        task_id = self._task_request(request)
        if not await self._runner().cancel(task_id, principal_key(context.principal)):
            raise _no_task()
        return {}

    def _task_request(self, request: Request) -> str:
        """The task id a tasks/* request names, once the extension is served and the request
        declared it (per request: the extension has no session)."""
        if not self.serves_tasks:
            raise ProtocolError(METHOD_NOT_FOUND, self._no_method(request.method, True))
        if not declares_tasks(request.capabilities):
            raise missing_tasks_capability(request.method)
        return task_id_param(request.params)

    def _runner(self) -> TaskRunner:
        assert self._tasks is not None, "_task_request refuses a server with no runner"
        return self._tasks

    async def run_task(
        self,
        call: TaskCall,
        *,
        cancelled: Cancellation | None = None,
        emit: Emit | None = None,
        progress_token: str | None = None,
    ) -> TaskOutcome:
        """Run a task's tool once, in the worker: the host's ``call`` with the arguments the
        task was made with, ``call.input_responses`` the answers gathered so far and
        ``call.state`` what its last ``InputRequired`` kept. What it comes to, as the task
        records it: a tool error is a completed task (the extension: ``failed`` is for
        JSON-RPC errors only), a ``ProtocolError`` or a host fault a failed one."""
        entry = self.index().tool_entries.get(call.tool)
        if entry is None:
            refused = ProtocolError(INVALID_PARAMS, f"tool '{call.tool}' is no longer served")
            return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
        context = RequestContext(
            request_id="",
            method="tools/call",
            protocol_version=revisions.MODERN,
            client_capabilities=call.client_capabilities,
            client_info=None,
            meta={"progressToken": progress_token} if progress_token is not None else {},
            run_sync=self._run_sync,
            emit=emit,
            log_level=None,
            cancelled=cancelled,
            principal=call.principal,
            scopes=call.scopes,
        )
        context.input_responses = dict(call.input_responses)
        context.request_state = call.state
        try:
            value = await self._host("dispatch", call.tool, dict(call.arguments), context)
            if isinstance(value, InputRequired):
                kept, missing = askable(value, call.client_capabilities)
                if not kept:
                    refused = ProtocolError(
                        MISSING_CLIENT_CAPABILITY,
                        "the task needs client capabilities its request did not declare",
                        {"requiredCapabilities": missing},
                    )
                    return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
                return TaskOutcome(input_requests=kept, state=value.state)
            result = tool_result(value, entry, modern=True)
        except ToolError as error:
            result = tool_error(str(error))
        except ProtocolError as refused:
            return TaskOutcome(error=jsonrpc.refusal(None, refused)["error"])
        except HostContractError as fault:
            logger.error("MCP host answer off contract (task of tool %s): %s", call.tool, fault)
            return TaskOutcome(error=jsonrpc.internal_error(None)["error"])
        except Exception:
            logger.exception("MCP host fault while running a task of tool %s", call.tool)
            return TaskOutcome(error=jsonrpc.internal_error(None)["error"])
        finally:
            context.finish()
        result.setdefault("resultType", "complete")
        return TaskOutcome(result=result)

    async def _resources_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return await self._listing(
            request,
            context,
            "resources",
            index.resource_keys,
            index.resource_wire,
            index.resource_access,
        )

    async def _templates_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return await self._listing(
            request,
            context,
            "resourceTemplates",
            index.template_keys,
            index.template_wire,
            index.template_access,
        )

    async def _resources_read(self, request: Request, context: RequestContext) -> dict[str, Any]:
        uri = require_string(request.params, "uri")
        match = await self._visible_match(uri, context)
        if match is None:
            raise not_found(uri, request.modern)
        require_scopes(match.spec.access, context)
        receive_inputs(self._states, request, context, uri, {})
        try:
            value = await self._host("read_resource", match, context)
            if isinstance(value, InputRequired):
                value = await self._input(
                    value, request, context, uri, {}, "read_resource", match, context
                )
                if type(value) is _Asked:
                    return value.result
        except ResourceNotFound:
            raise not_found(uri, request.modern) from None
        result: dict[str, Any] = {"contents": resource_contents(value, match)}
        if request.modern:
            self._add_cache_hint(result, request.method, hides(match.spec.access))
        return result

    async def _visible_match(self, uri: str, context: RequestContext) -> ResourceMatch | None:
        """What serves ``uri`` for this caller: the first match its gates do not hide. A URI
        that no entry serves, or one a gated entry does, has every resource gate asked at
        once first, as ``_named_entry`` does for names: the same cost, so no oracle."""
        index = self.index()
        asked = False
        for match in index.matches(uri):
            if not asked and hides(match.spec.access):
                await admitted(index.read_access, context)
                asked = True
            if await admits(match.spec.access, context):
                return match
        if not asked:
            await admitted(index.read_access, context)
        return None

    async def _prompts_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return await self._listing(
            request, context, "prompts", index.prompt_keys, index.prompt_wire, index.prompt_access
        )

    async def _prompts_get(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        index = self.index()
        name, entry = await _named_entry(
            params, index.prompt_entries, index.prompt_access, "prompt", context
        )
        arguments = optional_object(params, "arguments")
        violation, arguments = await self._checked(request, entry.arguments, arguments)
        if violation is not None:
            raise ProtocolError(
                INVALID_PARAMS, f"invalid arguments for prompt '{name}': {violation}"
            )
        receive_inputs(self._states, request, context, name, arguments)
        value = await self._host("get_prompt", name, arguments, context)
        if isinstance(value, InputRequired):
            value = await self._input(
                value, request, context, name, arguments, "get_prompt", name, arguments, context
            )
            if type(value) is _Asked:
                return value.result
        return prompt_result(value, name)

    async def _complete(self, request: Request, context: RequestContext) -> dict[str, Any]:
        if not self.has_completions:
            raise ProtocolError(METHOD_NOT_FOUND, self._no_method(request.method, request.modern))
        params = request.params
        ref = optional_object(params, "ref")
        index = self.index()
        if ref.get("type") == "ref/prompt":
            name = ref.get("name")
            prompt = index.prompt_entries.get(name) if type(name) is str else None
            spec = prompt.spec if prompt is not None else None
            if spec is None or not await admits(spec.access, context):
                raise ProtocolError(INVALID_PARAMS, "params.ref names no prompt of this server")
            require_scopes(spec.access, context)
        elif ref.get("type") == "ref/resource":
            uri = ref.get("uri")
            spec = (
                index.resources.get(uri) or index.template_by_key.get(uri)
                if type(uri) is str
                else None
            )
            if spec is None or not await admits(spec.access, context):
                raise ProtocolError(INVALID_PARAMS, "params.ref names no resource of this server")
            require_scopes(spec.access, context)
        else:
            raise ProtocolError(
                INVALID_PARAMS, "params.ref.type must be ref/prompt or ref/resource"
            )
        argument = optional_object(params, "argument")
        if type(argument.get("name")) is not str or type(argument.get("value")) is not str:
            raise ProtocolError(INVALID_PARAMS, "params.argument must have string name and value")
        context_arguments = optional_object(optional_object(params, "context"), "arguments")
        value = await self._host("complete", ref, argument, context_arguments, context)
        return {"completion": completion(value)}


# How each host call is named for the observer: (method, target), targets from the catalog.
# A resource read is named by its entry's key, not the URI asked for: a template's URIs are
# the caller's to vary, and nothing the caller chooses may grow the observer's table.
_OBSERVED_AS: dict[str, Callable[[tuple[Any, ...]], tuple[str, str]]] = {
    "dispatch": lambda args: ("tools/call", args[0]),
    "read_resource": lambda args: ("resources/read", args[0].spec.key),
    "get_prompt": lambda args: ("prompts/get", args[0]),
    "complete": lambda args: ("completion/complete", ""),
}


_MODERN_METHODS: dict[str, Handler] = {
    "server/discover": Server._discover,
    "tools/list": Server._tools_list,
    "tools/call": Server._tools_call,
    "resources/list": Server._resources_list,
    "resources/templates/list": Server._templates_list,
    "resources/read": Server._resources_read,
    "prompts/list": Server._prompts_list,
    "prompts/get": Server._prompts_get,
    "completion/complete": Server._complete,
    "subscriptions/listen": Server._listen,
    "tasks/get": Server._tasks_get,
    "tasks/update": Server._tasks_update,
    "tasks/cancel": Server._tasks_cancel,
}

_LEGACY_METHODS: dict[str, Handler] = {
    "initialize": Server._initialize,
    "ping": Server._ping,
    "logging/setLevel": Server._set_level,
    "resources/subscribe": Server._subscribe,
    "resources/unsubscribe": Server._unsubscribe,
    **{
        method: handler
        for method, handler in _MODERN_METHODS.items()
        if method not in ("server/discover", "subscriptions/listen")
        and not method.startswith("tasks/")
    },
}

# Every method either revision serves: what a transport may name without trusting the client.
SERVED_METHODS: frozenset[str] = frozenset(_MODERN_METHODS) | frozenset(_LEGACY_METHODS)


# -- shaping answers ----------------------------------------------------------------------


def _checked_arguments(
    schema: CompiledSchema, arguments: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    violation = schema.violation(arguments, "arguments")
    return violation, (arguments if violation is not None else whole_numbers(arguments))


def _shown_id(request_id: jsonrpc.RequestId | None) -> str:
    """A request id as the server log shows it: the client chose it, so at most 64 characters."""
    shown = repr(request_id)
    return shown if len(shown) <= 64 else shown[:61] + "..."


def _no_task() -> ProtocolError:
    """An unknown, expired or another principal's task id, answered alike (never echoed)."""
    return ProtocolError(INVALID_PARAMS, "params.taskId names no task of this caller")


def _require_capabilities(required: Mapping[str, Any] | None, request: Request) -> None:
    if not required:
        return
    missing = {name: value for name, value in required.items() if name not in request.capabilities}
    if missing:
        raise ProtocolError(
            MISSING_CLIENT_CAPABILITY,
            "the tool needs client capabilities the request did not declare: "
            + ", ".join(sorted(missing)),
            {"requiredCapabilities": dict(missing)},
        )
