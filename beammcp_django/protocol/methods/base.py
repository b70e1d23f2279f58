"""What every method family needs of a server: the compiled catalog, a call into host code
(bounded, observed, traced), a list paged for its caller, a name or URI looked up as the
caller may see it, and arguments checked against their schema.

``Server`` (``server.py``) adds receiving and routing; the families (``tools.py``,
``resources.py``...) are plain functions of a ``ServerBase``. A family calls another's
function by name where one method serves another's ends: a call of a tool that may run as a
task goes through ``tasks.as_task``, a listen stream's watched tasks through
``tasks.watched_tasks``.
"""

from __future__ import annotations

import bisect
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from .. import apps, echo, revisions
from ..access import Access, admits, admitted, hides, require_scopes
from ..calling import host_call
from ..catalog import ENTRY_KINDS, InputRequired, ResourceMatch
from ..context import RequestContext, RunSync
from ..cursor import CursorCodec, InvalidCursor
from ..errors import ESCAPING_EXCEPTIONS, INVALID_PARAMS, HostEscape, ProtocolError
from ..index import CatalogIndex, skills_of
from ..principal import principal_key
from ..request import Request, require_string
from ..round_trips import StateCodec, ask_in_session, input_required
from ..schema import CompiledSchema
from ..skills import EXTENSION as SKILLS
from ..task_wire import DISABLED, TaskRunner
from ..task_wire import EXTENSION as TASKS
from ..whole_numbers import whole_numbers

Reply = dict[str, Any]  # a JSON-RPC result or error, as the transport sends it
BoundHost = Callable[[Awaitable[Any]], Awaitable[Any]]
TraceHost = Callable[[str, str], AbstractContextManager[Any] | None]


async def run_inline(function: Callable[..., Any], *args: Any) -> Any:
    """The default for sync host code when no transport supplies a thread runner."""
    return function(*args)


@dataclass(frozen=True)
class Asked:
    """The ``input_required`` result of a 2026-07-28 request: the reply, not a host value."""

    result: dict[str, Any]


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
    # The project runs with DEBUG on: an internal error's data names its cause and place
    # (``faults.py``); off, it says only that the server logged it.
    debug: bool = False


class ServerBase:
    """One catalog's serving state, shared by concurrent requests: it holds no request
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
        handles: Callable[[RequestContext], Any] | None = None,
    ) -> None:
        self.catalog = catalog
        # What gives host code ``context.handles`` (the Django layer's handle book); None:
        # ``context.handles`` is None.
        self.handles = handles
        # Where the tasks extension's tasks are made and kept (the Django layer's runner);
        # None: no tool runs as a task, and the extension is neither advertised nor served.
        self.task_runner = tasks
        self._tasks_decided_for: CatalogIndex | None = None
        self._tasks_served = False
        self.options = options
        self.states = state_codec
        # Told (method, target) once per call that reached host code: the connectome's feed.
        self._observe = observe
        # Wraps every await of host code; the transport's clock puts a deadline on it (the
        # core has no clock of its own) and refuses by name past it.
        self.bound_host = bound_host
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
        # What every 2026-07-28 result's _meta carries.
        self.server_meta = {revisions.META_SERVER_INFO: self.server_info()}
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

    def capabilities(self, modern: bool = True) -> dict[str, Any]:
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
        extensions = self.extensions(modern)
        if extensions:
            capabilities["extensions"] = extensions
        return capabilities

    def extensions(self, modern: bool) -> dict[str, Any]:
        """The extensions this server serves at a revision: the skills extension at both
        when a skill is served (with ``resources/directory/read``; the resources capability
        it requires is always declared), MCP Apps at both when a view is (``{}``: the page
        defines settings for clients only), the tasks extension at 2026-07-28 when a tool
        may run as a task."""
        extensions: dict[str, Any] = {}
        index = self.index()
        if index.skill_keys:
            extensions[SKILLS] = {"directoryRead": True}
        if index.serves_views:
            extensions[apps.EXTENSION] = {}
        if modern and self.serves_tasks:
            extensions[TASKS] = {}
        return extensions

    @property
    def serves_tasks(self) -> bool:
        """Whether the tasks extension is served: a runner is there and a tool may run as a
        task (the extension is advertised on ``server/discover`` then, and only then)."""
        if self.task_runner is None:
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
            tools, resources, prompts, skills = index.sources
            if (
                tools is catalog.tools
                and resources is catalog.resources
                and prompts is catalog.prompts
                and skills is skills_of(catalog)
            ):
                return index
        with self._index_lock:
            self._index = CatalogIndex(catalog, self._index, self.options.legacy)
            return self._index

    @staticmethod
    def no_method(method: str, modern: bool) -> str:
        """The message refusing a method this server does not serve at that revision."""
        if echo.name(method) is not None:
            era = revisions.MODERN if modern else revisions.LEGACY
            return f"method '{method}' is not served at {era}"
        return "method not found"

    # -- calling the host --------------------------------------------------------------

    async def call_host(self, name: str, *args: Any) -> Any:
        """The catalog's ``name`` (``dispatch``, ``read_resource``...) called with ``args``:
        observed, traced and bounded as the transport asked, sync code on its threads."""
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
        bound = self.bound_host
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

    async def call_hook(self, hook: Callable[..., Any], *args: Any) -> Any:
        """A host hook that is not an entry's handler (``admit_task``), run where host code
        runs and bounded as host calls are."""
        pending = hook(*args) if inspect.iscoroutinefunction(hook) else self._run_sync(hook, *args)
        return await (self.bound_host(pending) if self.bound_host is not None else pending)

    async def answer_input(
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
        result the client retries from (``Asked``); in a 2025-11-25 session whose transport
        can ask the client (``context.ask``), the host's final answer once its inputs were
        asked as server-to-client requests and the host called ``host(*call)`` again."""
        if context.ask is None:
            return Asked(input_required(self.states, value, request, target, arguments))
        return await ask_in_session(
            context.ask, value, request, context, lambda: self.call_host(host, *call)
        )

    async def checked(
        self, request: Request, schema: CompiledSchema, arguments: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any]]:
        """The first rule ``arguments`` break, or None and the arguments as the host receives
        them (``whole_numbers``); a large message's are checked off the loop."""
        if request.large and self._offload is not None:
            return await self._offload(_checked_arguments, schema, arguments)
        return _checked_arguments(schema, arguments)

    def handler_of(self, method: str, params: Mapping[str, Any]) -> Any:
        """The host function that serves the target ``params`` names for ``method`` (the
        site's handler of the entry, or the catalog's own method), or None: where a fault's
        data places an answer off the host contract (``faults.py``)."""
        spec = self._target_spec(method, params)
        handlers = getattr(self.catalog, "handlers", None)
        if spec is not None and callable(handlers):
            return handlers(spec)
        return getattr(self.catalog, _CATALOG_METHODS.get(method, ""), None)

    def _target_spec(self, method: str, params: Mapping[str, Any]) -> Any:
        """The spec of the entry ``params`` names for ``method``, or None."""
        index = self.index()
        if method == "resources/read":
            uri = params.get("uri")
            match = next(iter(index.matches(uri)), None) if type(uri) is str else None
            return match.spec if match is not None else None
        named = {"tools/call": index.tool_entries, "prompts/get": index.prompt_entries}
        entries, name = named.get(method), params.get("name")
        entry = entries.get(name) if entries is not None and type(name) is str else None
        return entry.spec if entry is not None else None

    # -- lists and lookups as the caller may see them ------------------------------------

    def page(
        self,
        method: str,
        params: Mapping[str, Any],
        keys: list[str],
        wire: list[Any],
        context: RequestContext,
        *,
        within: str = "",
    ) -> tuple[list[Any], str | None]:
        """One page of a list. Its cursor is bound to the principal it was issued to: another
        principal presenting it is refused as for a forged one, so no caller's position
        (nor which entries it sees) carries to another; and to ``within`` (a directory's
        URI), the list it pages when a method pages more than one."""
        bound = f"{method} {within}" if within else method
        cursor = params.get("cursor")
        start = 0
        if cursor is not None and cursor != "":
            if type(cursor) is not str:
                raise ProtocolError(INVALID_PARAMS, f"params.cursor of {method} must be a string")
            try:
                last = self._cursors.decode(cursor, bound, principal_key(context.principal))
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
                bound, keys[end - 1], principal_key(context.principal)
            )
        return page, next_cursor

    async def listing(
        self,
        request: Request,
        context: RequestContext,
        field_name: str,
        keys: list[str],
        wire: list[Any],
        accesses: list[Any],
        *,
        varies: bool = False,
    ) -> dict[str, Any]:
        """A list as this caller may see it: without the entries its gates hide. ``varies``:
        the list depends on the client for another reason (its declared extensions)."""
        gated = self.index().gated and any(hides(access) for access in accesses)
        if gated:
            shown = await admitted(accesses, context)
            keys = [key for key, admit in zip(keys, shown, strict=True) if admit]
            wire = [entry for entry, admit in zip(wire, shown, strict=True) if admit]
        page, next_cursor = self.page(request.method, request.params, keys, wire, context)
        result: dict[str, Any] = {field_name: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if request.modern:
            self.add_cache_hint(result, request.method, gated or varies)
        return result

    def add_cache_hint(self, result: dict[str, Any], method: str, personal: bool = False) -> None:
        """``ttlMs`` and ``cacheScope``; a result whose content depends on who asked is
        ``private`` whatever ``CACHE_HINTS`` says (a shared cache must not hand one caller's
        list to another)."""
        hint = self._hints[method]
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = "private" if personal else hint.scope

    async def visible_match(self, uri: str, context: RequestContext) -> ResourceMatch | None:
        """What serves ``uri`` for this caller: the first match its gates do not hide. A URI
        that no entry serves, or one a gated entry does, has every resource gate asked at
        once first, as ``named_entry`` does for names: the same cost, so no oracle."""
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


async def named_entry(
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


Handler = Callable[[ServerBase, Request, RequestContext], Awaitable[dict[str, Any]]]

# How each host call is named for the observer: (method, target), targets from the catalog.
# A resource read is named by its entry's key, not the URI asked for: a template's URIs are
# the caller's to vary, and nothing the caller chooses may grow the observer's table.
_OBSERVED_AS: dict[str, Callable[[tuple[Any, ...]], tuple[str, str]]] = {
    "dispatch": lambda args: ("tools/call", args[0]),
    "read_resource": lambda args: ("resources/read", args[0].spec.key),
    "get_prompt": lambda args: ("prompts/get", args[0]),
    "complete": lambda args: ("completion/complete", ""),
}


# The catalog's own method serving each method that calls host code.
_CATALOG_METHODS = {
    "tools/call": "dispatch",
    "resources/read": "read_resource",
    "prompts/get": "get_prompt",
    "completion/complete": "complete",
}


def _checked_arguments(
    schema: CompiledSchema, arguments: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    violation = schema.violation(arguments, "arguments")
    return violation, (arguments if violation is not None else whole_numbers(arguments))
