"""The protocol core: one decoded message in, one reply out (or none, for a notification).

No I/O happens here. The transport hands over a decoded message and, optionally, the few
things only it owns: the legacy session of a stdio process, a thread-safe ``emit`` for
request-scoped notifications, a cancellation flag, and ``run_sync`` for host code that is not
a coroutine function. The core decides the revision of each request, refuses what is
malformed with the spec's code, validates against the schemas it advertised, calls the host,
and shapes the answer for that revision.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import inspect
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import content, echo, jsonrpc, revisions, wire
from .catalog import (
    Completion,
    InputRequired,
    PromptResult,
    PromptSpec,
    ResourceMatch,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolResult,
    ToolSpec,
)
from .context import LOG_LEVELS, Cancellation, Emit, RequestContext, RunSync
from .cursor import CursorCodec, InvalidCursor
from .errors import (
    ESCAPING_EXCEPTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND_LEGACY,
    UNSUPPORTED_PROTOCOL_VERSION,
    HostContractError,
    HostEscape,
    ProtocolError,
    ResourceNotFound,
    ToolError,
)
from .header_params import HeaderParameter, header_parameters
from .inputs import CAPABILITY_OF
from .legacy_tools import legacy_tool, output_schema_fits
from .notifications import is_notification
from .schema import CompiledSchema
from .uritemplate import UriTemplate

logger = logging.getLogger("beammcp_django")

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
MAX_COMPLETION_VALUES = 100
_VERSION_SHAPE = re.compile(r"[A-Za-z0-9._\-]{1,64}")
# The arguments as a request binding digests them (what json.dumps with these options writes),
# built once: json.dumps with options builds a new encoder on every call.
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


# The transport's subscriptions/listen stream: (subscription id, honoured filter, context,
# acknowledge). The transport calls ``acknowledge()`` once it would see a change published
# from then on (it has joined the layer's group): the acknowledgment promises exactly that.
Listener = Callable[[Any, Mapping[str, Any], RequestContext, Callable[[], None]], Awaitable[None]]


class InvalidState(Exception):
    """A ``requestState`` that fails its integrity check, has expired, or belongs elsewhere."""


class StateCodec(Protocol):
    """Seals a host's ``InputRequired.state`` into ``requestState`` and opens it on retry.

    ``binding`` names the request the state belongs to (method, name or URI, a digest of the
    arguments); ``open`` must refuse a token sealed for another binding.
    """

    def seal(self, state: Any, binding: str) -> str: ...

    def open(self, token: str, binding: str) -> Any: ...


BoundHost = Callable[[Awaitable[Any]], Awaitable[Any]]
TraceHost = Callable[[str, str], AbstractContextManager[Any] | None]


async def run_inline(function: Callable[..., Any], *args: Any) -> Any:
    """The default for sync host code when no transport supplies a thread runner."""
    return function(*args)


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


class LegacySession:
    """What a 2025-11-25 ``initialize`` negotiated; the only state the core ever keeps."""

    __slots__ = ("client_capabilities", "client_info", "log_level", "version")

    def __init__(self) -> None:
        self.version: str | None = None
        self.client_capabilities: Mapping[str, Any] = {}
        self.client_info: Mapping[str, Any] | None = None
        self.log_level: str | None = None

    def snapshot(self) -> LegacySession:
        """The session as it stands now: a request is served under the state in force when
        it arrived, not under a handshake that a later line made before it ran."""
        copy = LegacySession()
        copy.version = self.version
        copy.client_capabilities = self.client_capabilities
        copy.client_info = self.client_info
        copy.log_level = self.log_level
        return copy


# The requests that change a legacy session: a transport serves them in arrival order, on the
# session itself, and every other request on a snapshot taken when it arrived.
SESSION_METHODS = frozenset({"initialize", "logging/setLevel"})


@dataclass(frozen=True)
class Request:
    """A request after its revision was decided and its ``_meta`` validated.

    Transports see it through ``handle(admit=...)``, to hold carrier rules (HTTP headers
    that must mirror the body) against what the core decoded.
    """

    id: str | int
    method: str
    params: Mapping[str, Any]
    version: str
    modern: bool
    capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    meta: Mapping[str, Any]
    log_level: str | None
    session: LegacySession | None = None
    listener: Listener | None = None
    # A message of wire.LARGE_MESSAGE_BYTES or more: its arguments are validated off the
    # event loop (``offload``), which then serves other requests part of the time
    # (jsonschema-rs holds the GIL for most of its work: docs/threat-model.md, "Validation").
    large: bool = False


@dataclass(frozen=True)
class _ToolEntry:
    spec: ToolSpec
    arguments: CompiledSchema
    output: CompiledSchema | None
    header_params: tuple[HeaderParameter, ...] = ()
    # 2025-11-25 can carry this tool's structured results (legacy_tools.py).
    legacy_structured: bool = True


@dataclass(frozen=True)
class _PromptEntry:
    spec: PromptSpec
    arguments: CompiledSchema


def prompt_arguments_schema(spec: PromptSpec) -> dict[str, Any]:
    """The JSON Schema a prompt's declared arguments imply: named strings, no others."""
    return {
        "type": "object",
        "properties": {argument.name: {"type": "string"} for argument in spec.arguments},
        "required": [argument.name for argument in spec.arguments if argument.required],
        "additionalProperties": False,
    }


class _Index:
    """The catalog sorted, keyed and compiled; rebuilt only when a list object changes."""

    def __init__(self, catalog: Any, previous: _Index | None, legacy: bool) -> None:
        self.sources = (catalog.tools, catalog.resources, catalog.prompts)
        reuse = previous.compiled if previous is not None else {}
        self.compiled: dict[int, Any] = {}

        tools = sorted(catalog.tools, key=lambda spec: spec.name)
        self.tools: list[ToolSpec] = tools
        self.tool_keys = [spec.name for spec in tools]
        self.tool_wire = [spec.to_wire() for spec in tools]
        # Shaped for 2025-11-25 only on a server that speaks it.
        self.tool_wire_legacy = (
            [legacy_tool(wire) for wire in self.tool_wire] if legacy else self.tool_wire
        )
        self.tool_entries = {spec.name: self._tool_entry(spec, reuse) for spec in tools}

        statics = sorted(
            (spec for spec in catalog.resources if isinstance(spec, ResourceSpec)),
            key=lambda spec: spec.uri,
        )
        self.resource_keys = [spec.uri for spec in statics]
        self.resource_wire = [spec.to_wire() for spec in statics]
        self.resources = {spec.uri: spec for spec in statics}
        templates = sorted(
            (spec for spec in catalog.resources if isinstance(spec, ResourceTemplateSpec)),
            key=lambda spec: spec.uri_template,
        )
        self.template_keys = [spec.uri_template for spec in templates]
        self.template_wire = [spec.to_wire() for spec in templates]
        self.templates = [(spec, UriTemplate(spec.uri_template)) for spec in templates]

        prompts = sorted(catalog.prompts, key=lambda spec: spec.name)
        self.prompt_keys = [spec.name for spec in prompts]
        self.prompt_wire = [spec.to_wire() for spec in prompts]
        self.prompt_entries = {spec.name: self._prompt_entry(spec, reuse) for spec in prompts}

    def _reused(self, spec: Any, reuse: dict[int, Any], build: Callable[[], Any]) -> Any:
        """The compiled entry of ``spec`` from the previous index when it is the same spec
        object (ids are reused after an object dies, so identity is checked), else a new one."""
        entry = reuse.get(id(spec))
        if entry is None or entry.spec is not spec:
            entry = build()
        self.compiled[id(spec)] = entry
        return entry

    def _tool_entry(self, spec: ToolSpec, reuse: dict[int, Any]) -> _ToolEntry:
        def build() -> _ToolEntry:
            output = CompiledSchema(spec.output_schema) if spec.output_schema is not None else None
            return _ToolEntry(
                spec,
                CompiledSchema(spec.input_schema),
                output,
                header_parameters(spec.input_schema),
                output_schema_fits(spec.output_schema),
            )

        return self._reused(spec, reuse, build)

    def _prompt_entry(self, spec: PromptSpec, reuse: dict[int, Any]) -> _PromptEntry:
        return self._reused(
            spec, reuse, lambda: _PromptEntry(spec, CompiledSchema(prompt_arguments_schema(spec)))
        )

    def header_params(self, tool: str) -> tuple[HeaderParameter, ...]:
        entry = self.tool_entries.get(tool)
        return entry.header_params if entry is not None else ()

    def match(self, uri: str) -> ResourceMatch | None:
        spec = self.resources.get(uri)
        if spec is not None:
            return ResourceMatch(uri=uri, spec=spec)
        for template_spec, template in self.templates:
            variables = template.match(uri)
            if variables is not None:
                return ResourceMatch(uri=uri, spec=template_spec, variables=variables)
        return None


Handler = Callable[["Server", Request, RequestContext], Awaitable[dict[str, Any]]]


def _named(kind: str, name: str) -> str:
    """Name an unknown tool or prompt only when the name is plain; never echo odd bytes."""
    if echo.name(name) is not None:
        return f"unknown {kind} '{name}'"
    return f"unknown {kind} (the requested name is not a valid {kind} name)"


def _require_string(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if type(value) is not str:
        raise ProtocolError(INVALID_PARAMS, f"params.{key} must be a string")
    return value


def _optional_object(params: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise ProtocolError(INVALID_PARAMS, f"params.{key} must be an object")
    return value


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
    ) -> None:
        self.catalog = catalog
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
        self._index: _Index | None = None
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
            for name in ("dispatch", "read_resource", "get_prompt")
        }

    # -- what the server says about itself ---------------------------------------------

    @property
    def has_completions(self) -> bool:
        return callable(getattr(self.catalog, "complete", None))

    @property
    def supported_versions(self) -> list[str]:
        versions = list(revisions.MODERN_VERSIONS)
        if self.options.legacy:
            versions.extend(revisions.LEGACY_VERSIONS)
        return versions

    def server_info(self) -> dict[str, Any]:
        info = {"name": self.options.name, "version": self.options.version}
        if self.options.title is not None:
            info["title"] = self.options.title
        return info

    def capabilities(self, *, legacy: bool = False) -> dict[str, Any]:
        if self.options.subscriptions and not legacy:
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

    def index(self) -> _Index:
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
            self._index = _Index(catalog, self._index, self.options.legacy)
            return self._index

    # -- the entry point ---------------------------------------------------------------

    async def handle(
        self,
        message: dict[str, Any],
        *,
        session: LegacySession | None = None,
        emit: Emit | None = None,
        cancelled: Cancellation | None = None,
        admit: Callable[[Request], None] | None = None,
        listen: Listener | None = None,
        size: int = 0,
    ) -> dict[str, Any] | None:
        """Answer one decoded message; None for notifications and stray responses.

        ``size`` is the message's length in bytes, as the transport read it: from
        ``wire.LARGE_MESSAGE_BYTES`` on, validation runs off the event loop.

        ``admit``, when given, runs after the revision and ``_meta`` are validated and the
        method is found, before any host code: it raises ``ProtocolError`` to refuse.
        ``listen`` is the transport's stream for ``subscriptions/listen``; without it the
        method is not served.
        """
        if type(message) is not dict:
            return jsonrpc.error(None, INVALID_REQUEST, "message is not a JSON object")
        if jsonrpc.is_response(message):
            return None  # a response; this server sends no requests to answer
        if is_notification(message):
            return None  # never answered; the transport acts on the ones it owns
        request_id = jsonrpc.readable_id(message)
        context: RequestContext | None = None
        try:
            if request_id is None:
                raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
            if message.get("jsonrpc") != "2.0":
                raise ProtocolError(INVALID_REQUEST, 'the "jsonrpc" member must be "2.0"')
            method = message.get("method")
            if method is None:
                raise ProtocolError(INVALID_REQUEST, "message has no method")
            if type(method) is not str:
                raise ProtocolError(INVALID_REQUEST, "method must be a string")
            if "_meta" in message:
                raise ProtocolError(
                    INVALID_PARAMS,
                    "_meta belongs in params._meta, not at the top level of the message",
                )
            params = message.get("params")
            if params is None:
                params = {}
            elif type(params) is not dict:
                raise ProtocolError(INVALID_PARAMS, "params must be an object")
            request = self._request(request_id, method, params, session)
            handler = (_MODERN_METHODS if request.modern else _LEGACY_METHODS).get(method)
            if handler is None:
                raise ProtocolError(METHOD_NOT_FOUND, self._no_method(method, request.modern))
            if admit is not None:
                admit(request)
            if method == "subscriptions/listen":
                request = dataclasses.replace(request, listener=listen)
            if size >= wire.LARGE_MESSAGE_BYTES:
                request = dataclasses.replace(request, large=True)
            context = RequestContext(
                request_id=request_id,
                method=method,
                protocol_version=request.version,
                client_capabilities=request.capabilities,
                client_info=request.client_info,
                meta=request.meta,
                run_sync=self._run_sync,
                emit=emit,
                log_level=request.log_level,
                cancelled=cancelled,
            )
            result = await handler(self, request, context)
            if request.modern:
                result.setdefault("resultType", "complete")
                # A fresh dict each time: a transport may add keys to one result's _meta.
                result["_meta"] = {**result.get("_meta", {}), **self._server_meta}
            return jsonrpc.result(request_id, result)
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
            if context is not None:
                # Answered: whatever the host code still reports is dropped, and it reads
                # context.cancelled as true (a call cut off by its deadline goes on running).
                context.finish()

    @staticmethod
    def _no_method(method: str, modern: bool) -> str:
        if echo.name(method) is not None:
            era = revisions.MODERN if modern else revisions.LEGACY
            return f"method '{method}' is not served at {era}"
        return "method not found"

    # -- deciding the revision ---------------------------------------------------------

    def _request(
        self,
        request_id: str | int,
        method: str,
        params: Mapping[str, Any],
        session: LegacySession | None,
    ) -> Request:
        meta = params.get("_meta")
        if method == "initialize":
            if not self.options.legacy:
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f"initialize is not served: this endpoint speaks {revisions.MODERN} only",
                    {"supported": list(revisions.MODERN_VERSIONS)},
                )
            return self._legacy_request(request_id, method, params, meta, session, handshake=True)
        if method == "ping" and meta is None and self.options.legacy:
            # 2025-11-25 lets a client ping before (or without) the handshake.
            return self._legacy_request(request_id, method, params, meta, session)
        if type(meta) is dict and revisions.META_PROTOCOL_VERSION in meta:
            return self._modern_request(request_id, method, params, meta)
        if self.options.legacy and session is not None and session.version is not None:
            return self._legacy_request(request_id, method, params, meta, session)
        return self._modern_request(request_id, method, params, meta)

    def _modern_request(
        self, request_id: str | int, method: str, params: Mapping[str, Any], meta: Any
    ) -> Request:
        if meta is None:
            hint = " (a 2025-11-25 client sends initialize first)" if self.options.legacy else ""
            raise ProtocolError(
                INVALID_PARAMS, f"params._meta is required at {revisions.MODERN}{hint}"
            )
        if type(meta) is not dict:
            raise ProtocolError(INVALID_PARAMS, "params._meta must be an object")
        if revisions.META_PROTOCOL_VERSION not in meta:
            raise ProtocolError(
                INVALID_PARAMS, f"params._meta is missing '{revisions.META_PROTOCOL_VERSION}'"
            )
        version = meta[revisions.META_PROTOCOL_VERSION]
        if type(version) is not str or not _VERSION_SHAPE.fullmatch(version):
            raise ProtocolError(
                INVALID_PARAMS, f"params._meta '{revisions.META_PROTOCOL_VERSION}' is not a version"
            )
        if version not in revisions.MODERN_VERSIONS:
            raise ProtocolError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "unsupported protocol version",
                {"supported": list(revisions.MODERN_VERSIONS), "requested": version},
            )
        if revisions.META_CLIENT_CAPABILITIES not in meta:
            raise ProtocolError(
                INVALID_PARAMS,
                f"params._meta is missing '{revisions.META_CLIENT_CAPABILITIES}'",
            )
        capabilities = meta[revisions.META_CLIENT_CAPABILITIES]
        if type(capabilities) is not dict:
            raise ProtocolError(
                INVALID_PARAMS,
                f"params._meta '{revisions.META_CLIENT_CAPABILITIES}' must be an object",
            )
        client_info = meta.get(revisions.META_CLIENT_INFO)
        if client_info is not None and not _is_implementation(client_info):
            raise ProtocolError(
                INVALID_PARAMS,
                f"params._meta '{revisions.META_CLIENT_INFO}' must be an object with string "
                "name and version",
            )
        log_level = meta.get(revisions.META_LOG_LEVEL)
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ProtocolError(
                INVALID_PARAMS, f"params._meta '{revisions.META_LOG_LEVEL}' is not a log level"
            )
        _check_progress_token(meta)
        return Request(
            id=request_id,
            method=method,
            params=params,
            version=version,
            modern=True,
            capabilities=capabilities,
            client_info=client_info,
            meta=meta,
            log_level=log_level,
        )

    def _legacy_request(
        self,
        request_id: str | int,
        method: str,
        params: Mapping[str, Any],
        meta: Any,
        session: LegacySession | None,
        *,
        handshake: bool = False,
    ) -> Request:
        if meta is None:
            meta = {}
        elif type(meta) is not dict:
            raise ProtocolError(INVALID_PARAMS, "params._meta must be an object")
        _check_progress_token(meta)
        if handshake or session is None:
            return Request(
                request_id, method, params, revisions.LEGACY, False, {}, None, meta, None, session
            )
        return Request(
            id=request_id,
            method=method,
            params=params,
            version=session.version or revisions.LEGACY,
            modern=False,
            capabilities=session.client_capabilities,
            client_info=session.client_info,
            meta=meta,
            log_level=session.log_level,
            session=session,
        )

    # -- calling the host --------------------------------------------------------------

    async def _host(self, name: str, *args: Any) -> Any:
        observed = None
        if self._observe is not None:
            observed = _OBSERVED_AS[name](args)
            self._observe(*observed)
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

    def _page(
        self, method: str, params: Mapping[str, Any], keys: list[str], wire: list[Any]
    ) -> tuple[list[Any], str | None]:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None and cursor != "":
            if type(cursor) is not str:
                raise ProtocolError(INVALID_PARAMS, f"params.cursor of {method} must be a string")
            try:
                start = bisect.bisect_right(keys, self._cursors.decode(cursor, method))
            except InvalidCursor:
                raise ProtocolError(
                    INVALID_PARAMS, f"params.cursor is not a cursor this server issued for {method}"
                ) from None
        end = start + self.options.page_size
        page = wire[start:end]
        next_cursor = self._cursors.encode(method, keys[end - 1]) if end < len(keys) else None
        return page, next_cursor

    def _listing(
        self,
        request: Request,
        field_name: str,
        keys: list[str],
        wire: list[Any],
    ) -> dict[str, Any]:
        page, next_cursor = self._page(request.method, request.params, keys, wire)
        result: dict[str, Any] = {field_name: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if request.modern:
            self._add_cache_hint(result, request.method)
        return result

    def _add_cache_hint(self, result: dict[str, Any], method: str) -> None:
        hint = self._hints[method]
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = hint.scope

    # -- subscriptions (2026-07-28) ------------------------------------------------------

    async def _listen(self, request: Request, context: RequestContext) -> dict[str, Any]:
        """Let the transport stream until it ends, acknowledging the filter once it listens,
        then close."""
        listen = request.listener
        if listen is None or not self.options.subscriptions:
            raise ProtocolError(METHOD_NOT_FOUND, self._no_method(request.method, True))
        honoured = listen_filter(request.params)
        tag = {SUBSCRIPTION_ID: request.id}

        def acknowledge() -> None:
            context.send(
                jsonrpc.notification(
                    "notifications/subscriptions/acknowledged",
                    {"notifications": honoured, "_meta": tag},
                )
            )

        await listen(request.id, honoured, context, acknowledge)
        return {"_meta": tag}

    # -- multi-round-trip requests (2026-07-28) ------------------------------------------

    @staticmethod
    def _binding(request: Request, target: str, arguments: Any) -> str:
        """What a ``requestState`` is sealed to: the method, the tool, prompt or URI, and a
        digest of the arguments. Computed only when a state is opened or sealed: encoding
        the arguments costs 30 ms a MiB, which most calls never need."""
        digest = hashlib.sha256(_canonical_json.encode(arguments).encode("utf-8")).hexdigest()[:32]
        return f"{request.method}\x00{target}\x00{digest}"

    def _receive_inputs(
        self, request: Request, context: RequestContext, target: str, arguments: Any
    ) -> None:
        """Check a retry's inputResponses and requestState, and hand them to the context."""
        params = request.params
        if not request.modern:
            return
        responses = _optional_object(params, "inputResponses")
        for value in responses.values():
            if type(value) is not dict:
                raise ProtocolError(
                    INVALID_PARAMS, "params.inputResponses holds an answer that is not an object"
                )
        context.input_responses = responses
        token = params.get("requestState")
        if token is not None:
            if type(token) is not str:
                raise ProtocolError(INVALID_PARAMS, "params.requestState must be a string")
            if self._states is None:
                raise ProtocolError(INVALID_PARAMS, "params.requestState was not issued here")
            try:
                binding = self._binding(request, target, arguments)
                context.request_state = self._states.open(token, binding)
            except InvalidState as refusal:
                raise ProtocolError(INVALID_PARAMS, f"params.requestState {refusal}") from None

    def _input_required(
        self, value: InputRequired, request: Request, target: str, arguments: Any
    ) -> dict[str, Any]:
        if not request.modern:
            raise HostContractError(
                "a handler returned InputRequired to a 2025-11-25 request, which cannot "
                "carry it; check context.protocol_version first"
            )
        declared = request.capabilities
        kept: dict[str, Any] = {}
        missing: dict[str, Any] = {}
        for key, input_request in value.requests.items():
            needed = CAPABILITY_OF.get(input_request.get("method"))  # type: ignore[arg-type]
            if needed is None:
                raise HostContractError(
                    f"input request '{key}' is not elicitation/create, sampling/createMessage "
                    "or roots/list (use beammcp_django.protocol.inputs)"
                )
            if needed in declared:
                kept[key] = dict(input_request)
            else:
                missing[needed] = {}
        result: dict[str, Any] = {"resultType": "input_required"}
        if kept:
            result["inputRequests"] = kept
        if value.state is not None:
            if self._states is None:
                raise HostContractError("InputRequired.state needs a state codec on the server")
            # Sealed to the arguments as the retry will carry them: a handler reads its
            # arguments, it does not change them (docs/host-contract.md).
            binding = self._binding(request, target, arguments)
            result["requestState"] = self._states.seal(value.state, binding)
        if len(result) == 1:
            # Every input needs a capability this client lacks: nothing could be asked.
            raise ProtocolError(
                MISSING_CLIENT_CAPABILITY,
                "the request needs client capabilities it did not declare",
                {"requiredCapabilities": missing},
            )
        return result

    # -- methods ------------------------------------------------------------------------

    async def _discover(self, request: Request, context: RequestContext) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": self.supported_versions,
            "capabilities": self.capabilities(),
        }
        if self.options.instructions:
            result["instructions"] = self.options.instructions
        self._add_cache_hint(result, request.method)
        return result

    async def _initialize(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        requested = _require_string(params, "protocolVersion")
        capabilities = _optional_object(params, "capabilities")
        client_info = params.get("clientInfo")
        if client_info is not None and not _is_implementation(client_info):
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
            "capabilities": self.capabilities(legacy=True),
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

    async def _tools_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        wire = index.tool_wire if request.modern else index.tool_wire_legacy
        return self._listing(request, "tools", index.tool_keys, wire)

    async def _tools_call(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        name = _require_string(params, "name")
        entry = self.index().tool_entries.get(name)
        if entry is None:
            raise ProtocolError(INVALID_PARAMS, _named("tool", name))
        arguments = _optional_object(params, "arguments")
        _require_capabilities(entry.spec.required_client_capabilities, request)
        if request.large and self._offload is not None:
            violation = await self._offload(entry.arguments.violation, arguments, "arguments")
        else:
            violation = entry.arguments.violation(arguments, "arguments")
        if violation is not None:
            return _tool_error(f"invalid arguments for tool '{name}': {violation}")
        self._receive_inputs(request, context, name, arguments)
        try:
            value = await self._host("dispatch", name, arguments, context)
        except ToolError as error:
            return _tool_error(str(error))
        if isinstance(value, InputRequired):
            return self._input_required(value, request, name, arguments)
        return _tool_result(value, entry, modern=request.modern)

    async def _resources_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return self._listing(request, "resources", index.resource_keys, index.resource_wire)

    async def _templates_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return self._listing(request, "resourceTemplates", index.template_keys, index.template_wire)

    async def _resources_read(self, request: Request, context: RequestContext) -> dict[str, Any]:
        uri = _require_string(request.params, "uri")
        match = self.index().match(uri)
        if match is None:
            raise _not_found(uri, request.modern)
        self._receive_inputs(request, context, uri, {})
        try:
            value = await self._host("read_resource", match, context)
        except ResourceNotFound:
            raise _not_found(uri, request.modern) from None
        if isinstance(value, InputRequired):
            return self._input_required(value, request, uri, {})
        result: dict[str, Any] = {"contents": _resource_contents(value, match)}
        if request.modern:
            self._add_cache_hint(result, request.method)
        return result

    async def _prompts_list(self, request: Request, context: RequestContext) -> dict[str, Any]:
        index = self.index()
        return self._listing(request, "prompts", index.prompt_keys, index.prompt_wire)

    async def _prompts_get(self, request: Request, context: RequestContext) -> dict[str, Any]:
        params = request.params
        name = _require_string(params, "name")
        entry = self.index().prompt_entries.get(name)
        if entry is None:
            raise ProtocolError(INVALID_PARAMS, _named("prompt", name))
        arguments = _optional_object(params, "arguments")
        if request.large and self._offload is not None:
            violation = await self._offload(entry.arguments.violation, arguments, "arguments")
        else:
            violation = entry.arguments.violation(arguments, "arguments")
        if violation is not None:
            raise ProtocolError(
                INVALID_PARAMS, f"invalid arguments for prompt '{name}': {violation}"
            )
        self._receive_inputs(request, context, name, arguments)
        value = await self._host("get_prompt", name, arguments, context)
        if isinstance(value, InputRequired):
            return self._input_required(value, request, name, arguments)
        return _prompt_result(value, name)

    async def _complete(self, request: Request, context: RequestContext) -> dict[str, Any]:
        if not self.has_completions:
            raise ProtocolError(METHOD_NOT_FOUND, self._no_method(request.method, request.modern))
        params = request.params
        ref = _optional_object(params, "ref")
        index = self.index()
        if ref.get("type") == "ref/prompt":
            name = ref.get("name")
            if type(name) is not str or name not in index.prompt_entries:
                raise ProtocolError(INVALID_PARAMS, "params.ref names no prompt of this server")
        elif ref.get("type") == "ref/resource":
            uri = ref.get("uri")
            if type(uri) is not str or (
                uri not in index.resources and uri not in index.template_keys
            ):
                raise ProtocolError(INVALID_PARAMS, "params.ref names no resource of this server")
        else:
            raise ProtocolError(
                INVALID_PARAMS, "params.ref.type must be ref/prompt or ref/resource"
            )
        argument = _optional_object(params, "argument")
        if type(argument.get("name")) is not str or type(argument.get("value")) is not str:
            raise ProtocolError(INVALID_PARAMS, "params.argument must have string name and value")
        context_arguments = _optional_object(_optional_object(params, "context"), "arguments")
        value = await self._host("complete", ref, argument, context_arguments, context)
        return {"completion": _completion(value)}


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_LIST_CHANGED = {
    "tools": ("toolsListChanged", "notifications/tools/list_changed"),
    "prompts": ("promptsListChanged", "notifications/prompts/list_changed"),
    "resources": ("resourcesListChanged", "notifications/resources/list_changed"),
}


def listen_filter(params: Mapping[str, Any]) -> dict[str, Any]:
    """The filter a subscriptions/listen request asks for, validated; -32602 when malformed."""
    notifications = _optional_object(params, "notifications")
    honoured: dict[str, Any] = {}
    for flag, _ in _LIST_CHANGED.values():
        value = notifications.get(flag)
        if value is not None and type(value) is not bool:
            raise ProtocolError(INVALID_PARAMS, f"params.notifications.{flag} must be a boolean")
        if value:
            honoured[flag] = True
    uris = notifications.get("resourceSubscriptions")
    if uris is not None:
        if type(uris) is not list or not all(type(uri) is str for uri in uris):
            raise ProtocolError(
                INVALID_PARAMS, "params.notifications.resourceSubscriptions must be a list of URIs"
            )
        if uris:
            honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return honoured


def subscription_notification(
    event: Mapping[str, Any], honoured: Mapping[str, Any], subscription_id: Any
) -> dict[str, Any] | None:
    """The notification a published change becomes on one listen stream, or None when the
    stream did not ask for it. ``event`` is ``{"kind": "tools"|"prompts"|"resources"}`` or
    ``{"kind": "resource", "uri": ...}``."""
    kind = event.get("kind")
    params: dict[str, Any] = {}
    if kind in _LIST_CHANGED:
        flag, method = _LIST_CHANGED[kind]
        if not honoured.get(flag):
            return None
    elif kind == "resource" and event.get("uri") in honoured.get("resourceSubscriptions", ()):
        method = "notifications/resources/updated"
        params["uri"] = event["uri"]
    else:
        return None
    params["_meta"] = {SUBSCRIPTION_ID: subscription_id}
    return jsonrpc.notification(method, params)


def _read_target(match: ResourceMatch) -> str:
    # The catalog entry, not the URI asked for: a template's URIs are the caller's to vary,
    # and nothing the caller chooses may grow the observer's table.
    spec = match.spec
    return spec.uri if isinstance(spec, ResourceSpec) else spec.uri_template


# How each host call is named for the observer: (method, target), targets from the catalog.
_OBSERVED_AS: dict[str, Callable[[tuple[Any, ...]], tuple[str, str]]] = {
    "dispatch": lambda args: ("tools/call", args[0]),
    "read_resource": lambda args: ("resources/read", _read_target(args[0])),
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
}

_LEGACY_METHODS: dict[str, Handler] = {
    "initialize": Server._initialize,
    "ping": Server._ping,
    "logging/setLevel": Server._set_level,
    **{
        method: handler
        for method, handler in _MODERN_METHODS.items()
        if method not in ("server/discover", "subscriptions/listen")
    },
}

# Every method either revision serves: what a transport may name without trusting the client.
SERVED_METHODS: frozenset[str] = frozenset(_MODERN_METHODS) | frozenset(_LEGACY_METHODS)


# -- shaping answers ----------------------------------------------------------------------


def _shown_id(request_id: jsonrpc.RequestId | None) -> str:
    """A request id as the server log shows it: the client chose it, so at most 64 characters."""
    shown = repr(request_id)
    return shown if len(shown) <= 64 else shown[:61] + "..."


def _is_implementation(value: Any) -> bool:
    return (
        type(value) is dict and type(value.get("name")) is str and type(value.get("version")) is str
    )


def _check_progress_token(meta: Mapping[str, Any]) -> None:
    token = meta.get("progressToken")
    if token is not None and type(token) is not str and type(token) is not int:
        raise ProtocolError(
            INVALID_PARAMS, "params._meta.progressToken must be a string or an integer"
        )


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


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [content.text(message)], "isError": True}


def _not_found(uri: str, modern: bool) -> ProtocolError:
    """-32602 (2026-07-28) or -32002 (2025-11-25), with ``data.uri`` when the URI may be
    echoed (echo.py): a long or odd URI is not sent back."""
    shown = echo.uri(uri)
    data = {"uri": shown} if shown is not None else None
    code = INVALID_PARAMS if modern else RESOURCE_NOT_FOUND_LEGACY
    return ProtocolError(code, "resource not found", data)


def _content_blocks(blocks: Any, owner: str) -> list[Any]:
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence):
        raise HostContractError(f"{owner} content is not a list of content blocks")
    checked = list(blocks)
    for block in checked:
        if not isinstance(block, Mapping) or block.get("type") not in CONTENT_TYPES:
            raise HostContractError(
                f"{owner} content holds something that is not a content block "
                "(use beammcp_django.content to build them)"
            )
    return checked


def _tool_result(value: Any, entry: _ToolEntry, *, modern: bool) -> dict[str, Any]:
    owner = f"tool '{entry.spec.name}'"
    if isinstance(value, ToolResult):
        result = ToolResult(
            content=_content_blocks(value.content, owner),
            structured=value.structured,
            is_error=value.is_error,
            meta=value.meta,
        )
    elif isinstance(value, str):
        result = ToolResult(content=[content.text(value)])
    elif isinstance(value, (list, tuple)):
        result = ToolResult(content=_content_blocks(value, owner))
    else:
        raise HostContractError(
            f"{owner} returned a {type(value).__name__}; expected ToolResult, str or a list "
            "of content blocks"
        )
    wire: dict[str, Any] = {"content": list(result.content)}
    if result.has_structured:
        structured = result.structured
        if entry.output is not None and not result.is_error:
            violation = entry.output.violation(structured, "structuredContent")
            if violation is not None:
                raise HostContractError(f"{owner} broke its outputSchema: {violation}")
        if modern or (entry.legacy_structured and type(structured) is dict):
            wire["structuredContent"] = structured
        # else 2025-11-25 cannot carry it (legacy_tools.py): the JSON text below stands alone.
        if not wire["content"]:
            wire["content"] = [content.text(json.dumps(structured, ensure_ascii=False))]
    elif entry.output is not None and not result.is_error:
        raise HostContractError(
            f"{owner} declares an outputSchema but returned no structured content"
        )
    if result.is_error:
        wire["isError"] = True
    if result.meta is not None:
        wire["_meta"] = dict(result.meta)
    return wire


def _resource_contents(value: Any, match: ResourceMatch) -> list[Any]:
    mime_type = match.spec.mime_type
    if isinstance(value, str):
        return [content.text_contents(match.uri, value, mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [content.blob_contents(match.uri, bytes(value), mime_type)]
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or not value:
        raise HostContractError(
            "a resource reader returned nothing readable; return str, bytes or resource "
            "contents (an empty list is not allowed: raise ResourceNotFound instead)"
        )
    contents = list(value)
    for item in contents:
        if (
            not isinstance(item, Mapping)
            or type(item.get("uri")) is not str
            or ("text" not in item and "blob" not in item)
        ):
            raise HostContractError(
                "a resource reader returned an entry that is not resource contents "
                "(use beammcp_django.content.text_contents or blob_contents)"
            )
    return contents


def _prompt_result(value: Any, name: str) -> dict[str, Any]:
    owner = f"prompt '{name}'"
    if isinstance(value, PromptResult):
        messages, description, meta = value.messages, value.description, value.meta
    elif isinstance(value, (list, tuple)):
        messages, description, meta = value, None, None
    else:
        raise HostContractError(
            f"{owner} returned a {type(value).__name__}; expected PromptResult or messages"
        )
    checked = list(messages)
    for item in checked:
        if (
            not isinstance(item, Mapping)
            or item.get("role") not in ("user", "assistant")
            or not isinstance(item.get("content"), Mapping)
            or item["content"].get("type") not in CONTENT_TYPES
        ):
            raise HostContractError(
                f"{owner} returned something that is not a prompt message "
                "(use beammcp_django.content.user or assistant)"
            )
    result: dict[str, Any] = {"messages": checked}
    if description is not None:
        result["description"] = description
    if meta is not None:
        result["_meta"] = dict(meta)
    return result


def _completion(value: Any) -> dict[str, Any]:
    if isinstance(value, Completion):
        values, total, has_more = list(value.values), value.total, value.has_more
    elif isinstance(value, (list, tuple)):
        values, total, has_more = list(value), None, False
    else:
        raise HostContractError("a completer returned neither Completion nor a list of strings")
    if not all(type(item) is str for item in values):
        raise HostContractError("a completer returned a value that is not a string")
    if len(values) > MAX_COMPLETION_VALUES:
        values, has_more = values[:MAX_COMPLETION_VALUES], True
    completion: dict[str, Any] = {"values": values}
    if total is not None:
        completion["total"] = total
    if has_more:
        completion["hasMore"] = True
    return completion
