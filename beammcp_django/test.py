"""A test client for a host's catalog, in the manner of ``django.test.Client``.

``McpClient`` (sync) and ``AsyncMcpClient`` (async) call tools, read resources, get prompts
and list what the catalog offers, in process and without a socket, at either revision:

- **2026-07-28** goes through the real HTTP transport: the package's ``McpEndpoint`` (the
  ASGI application ``beammcp_django.asgi`` routes the endpoint's path to) is driven with an
  ASGI scope, ``receive`` and ``send``, with the headers a client must send (the version,
  ``Mcp-Method``, ``Mcp-Name``, every ``Mcp-Param-*`` the tool's schema asks for) plus the
  test's own (``Authorization`` for the ``AUTHORIZE`` hook, say). The endpoint's settings
  (``ALLOWED_HOSTS``, ``ALLOWED_ORIGINS``, ``AUTHORIZE``...) apply as they do in production.
- **2025-11-25** goes through the core stdio serves (not yet the HTTP endpoint's sessions)
  (the dual-era server) with a session of its own: ``initialize`` first, then each request
  under that session, as ``manage.py mcp_stdio`` does; the stdio framing is not run.

Sync host code runs on the thread that called the client (``asgiref``'s thread-sensitive
``sync_to_async``), not in the serving process's worker threads: inside
``django.test.TestCase`` that thread's connection holds the test's transaction, so a tool
that uses the ORM sees the test's rows and its writes are rolled back with the test
(docs/testing.md).

Results are plain dicts (``McpResult``) with a few conveniences; a JSON-RPC error is raised
as ``McpError`` carrying its code, message and data; an HTTP refusal with no JSON-RPC body
(the authorize hook's 401 or 403) as ``HttpRefusal``.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.urls import NoReverseMatch, reverse

from beammcp_django.process import build_server
from beammcp_django.protocol import jsonrpc, revisions, wire
from beammcp_django.protocol.header_params import HeaderParameter
from beammcp_django.protocol.request import SESSION_METHODS, LegacySession
from beammcp_django.protocol.server import Server
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.threads import from_any_thread

logger = logging.getLogger("beammcp_django.test")

MODERN = revisions.MODERN
LEGACY = revisions.LEGACY
REVISIONS = (MODERN, LEGACY)
CLIENT_INFO = {"name": "beammcp_django.test", "version": "1"}
# A walk over pages stops here: a server handing out cursors forever is a bug to report.
MAX_PAGES = 1000
_LISTINGS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
_NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class McpError(Exception):
    """A JSON-RPC error reply: ``code``, ``message`` and ``data`` as the server sent them,
    ``status`` the HTTP status (None over the stdio core), ``headers`` the HTTP response's
    (a 403 scope challenge's ``www-authenticate``), ``reply`` the whole message."""

    def __init__(
        self,
        reply: Mapping[str, Any],
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        error = reply["error"]
        self.code: int = error.get("code")
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")
        self.status = status
        self.headers = dict(headers or {})
        self.reply = dict(reply)
        where = f"HTTP {status}, " if status is not None else ""
        super().__init__(f"{where}JSON-RPC error {self.code}: {self.message}")


class HttpRefusal(Exception):
    """An HTTP answer with no JSON-RPC message in it: the authorize hook's 401 or 403 (the
    endpoint tells the caller nothing more; the reason is in the server log), a 405..."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.headers = dict(headers)
        self.body = body
        challenge = self.headers.get("www-authenticate")
        super().__init__(
            f"HTTP {status}" + (f" (WWW-Authenticate: {challenge})" if challenge else "")
        )


class McpResult(dict):
    """A result exactly as the server sent it (a dict), plus what the test usually wants.

    ``notifications`` holds what the server sent before the result (progress, log
    messages); ``status`` and ``headers`` are the HTTP response's (None and {} over the
    stdio core).
    """

    notifications: list[dict[str, Any]]
    status: int | None
    headers: dict[str, str]

    @property
    def is_error(self) -> bool:
        """A tool's own error (``isError``): a result, not a JSON-RPC error."""
        return self.get("isError") is True

    @property
    def structured(self) -> Any:
        """A tool's ``structuredContent``, or None."""
        return self.get("structuredContent")

    @property
    def content(self) -> list[Any]:
        return self.get("content", [])

    @property
    def text(self) -> str:
        """Every text of the result, joined by newlines: a tool's text blocks, a resource's
        text contents, or the text of a prompt's messages."""
        blocks: Iterable[Any] = self.get("content") or self.get("contents") or []
        if "messages" in self:
            blocks = [message.get("content", {}) for message in self["messages"]]
        return "\n".join(block["text"] for block in blocks if isinstance(block.get("text"), str))

    @property
    def logs(self) -> list[Any]:
        """The ``data`` of every ``notifications/message`` the call sent."""
        return [
            item["params"].get("data")
            for item in self.notifications
            if item.get("method") == "notifications/message"
        ]


def _header_value(value: Any) -> str:
    """A value as a client writes it in a header: plain when it is printable ASCII without
    surrounding blanks, else the ``=?base64?...?=`` form (streamable-http.mdx §Value
    Encoding); booleans and integers as JSON writes them."""
    if type(value) is bool:
        return "true" if value else "false"
    text = str(value)
    plain = (
        text.isascii()
        and text.isprintable()
        and text == text.strip(" \t")
        and not (text.startswith("=?") and text.endswith("?="))
    )
    if plain:
        return text
    return f"=?base64?{base64.b64encode(text.encode('utf-8')).decode('ascii')}?="


def _on_callers_thread(function: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """Sync host code on the thread that called the client (see the module's docstring):
    no connection hygiene around it, which would close the test's connection mid-transaction,
    as Django's own test client does not run it either."""
    return sync_to_async(function, thread_sensitive=True)(*args)


def _endpoint_path() -> str:
    try:
        return reverse("beammcp:endpoint")
    except NoReverseMatch:
        return "/mcp"


class _Response:
    """What the endpoint sent, collected from its ``send`` calls."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.complete = False

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the body: one JSON document, or an SSE stream's."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            found = []
            for event in bytes(self.body).decode("utf-8").split("\n\n"):
                data = [
                    line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:")
                ]
                if data:
                    found.append(json.loads("\n".join(data)))
            return found
        return [json.loads(self.body)] if self.body else []


async def drive_asgi(
    app: Callable[..., Awaitable[None]], scope: dict[str, Any], body: bytes
) -> _Response:
    """Run one HTTP exchange through an ASGI application in this task: the body in one
    ``http.request`` message, then ``http.disconnect`` only once the response is complete
    (an endpoint watching for a client that left waits until then)."""
    response = _Response()
    complete = asyncio.Event()
    bodies = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if bodies:
            return bodies.pop()
        await complete.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if response.complete:
            raise RuntimeError(f"the application sent {message['type']} after its response")
        if message["type"] == "http.response.start":
            response.status = message["status"]
            for name, value in message.get("headers", []):
                response.headers[name.decode("latin-1").lower()] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            response.body += message.get("body", b"")
            if not message.get("more_body", False):
                response.complete = True
                complete.set()

    try:
        await app(scope, receive, send)
    finally:
        complete.set()
    if not response.complete:
        raise RuntimeError("the application returned without completing its response")
    return response


class AsyncMcpClient:
    """The async client: ``await client.call_tool("echo", {"text": "hi"})``.

    ``revision``: ``"2026-07-28"`` (the HTTP endpoint, the default) or ``"2025-11-25"`` (the
    stdio core, with its session). ``headers`` go with every HTTP request (e.g.
    ``{"Authorization": "Bearer ..."}`` for the ``AUTHORIZE`` hook); each call may add more.
    ``capabilities`` and ``client_info`` are what the client declares: in every request's
    ``_meta`` at 2026-07-28, in ``initialize`` at 2025-11-25. ``log_level`` asks for log
    notifications (``result.logs``). ``host`` is the ``Host`` header: ``testserver``, which
    Django's test runner adds to ``ALLOWED_HOSTS``, as ``django.test.Client`` sends.
    ``user`` (2025-11-25 only) is who host code sees as ``context.principal``, as
    ``mcp_stdio --user`` gives it; at 2026-07-28 the ``AUTHORIZE`` hook names the principal from
    the request, so a test sends what its hook reads (``headers``).
    """

    def __init__(
        self,
        revision: str = MODERN,
        *,
        headers: Mapping[str, str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        host: str = "testserver",
        user: Any = None,
    ) -> None:
        if revision not in REVISIONS:
            raise ValueError(f"revision must be one of {', '.join(REVISIONS)}, not {revision!r}")
        if revision == LEGACY and headers:
            raise ValueError(
                f"at {LEGACY} this client takes stdio's path, which carries no HTTP headers "
                "(and runs no AUTHORIZE hook): test the hook at 2026-07-28"
            )
        if user is not None and revision != LEGACY:
            raise ValueError(
                f"user= is {LEGACY}'s (stdio's --user); at {MODERN} the AUTHORIZE hook names "
                "the principal from the request: send what it reads in headers="
            )
        self.revision = revision
        self.user = user
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        self.capabilities = dict(capabilities or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.log_level = log_level
        self.host = host
        # What the server answered to initialize (2025-11-25), once the session is open.
        self.initialize_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._built: Server | None = None
        self._endpoint: McpEndpoint | None = None
        self._session: LegacySession | None = None

    @property
    def server(self) -> Server:
        """The client's own server: the settings' catalog and options, with sync host code
        run on the caller's thread. Built on first use, as the process builds its own."""
        if self._built is None:
            self._built = build_server(
                stdio=self.revision == LEGACY,
                run_sync=_on_callers_thread,
                observed=False,
            )
        return self._built

    @property
    def endpoint(self) -> McpEndpoint:
        """The HTTP transport the 2026-07-28 requests go through: the package's ASGI
        endpoint, serving this client's server under the process's HTTP policy (settings),
        with a sync ``AUTHORIZE`` hook run on the caller's thread too."""
        if self._endpoint is None:
            self._endpoint = McpEndpoint(
                server=lambda: self.server, policy=get_http_policy, run_sync=_on_callers_thread
            )
        return self._endpoint

    # -- what a test calls --------------------------------------------------------------

    # Each call takes ``headers=`` (added to the client's, for this call) and ``meta=``
    # (merged into ``params._meta``): the options of ``request``.

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> McpResult:
        """``tools/call``. A tool's own error is a result (``result.is_error``)."""
        params = {"name": name, "arguments": dict(arguments or {})}
        return await self.request("tools/call", params, **options)

    async def read_resource(self, uri: str, **options: Any) -> McpResult:
        return await self.request("resources/read", {"uri": uri}, **options)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> McpResult:
        params = {"name": name, "arguments": dict(arguments or {})}
        return await self.request("prompts/get", params, **options)

    async def list_tools(self, **options: Any) -> list[dict[str, Any]]:
        """Every tool, across every page."""
        return await self._every("tools/list", **options)

    async def list_resources(self, **options: Any) -> list[dict[str, Any]]:
        return await self._every("resources/list", **options)

    async def list_resource_templates(self, **options: Any) -> list[dict[str, Any]]:
        return await self._every("resources/templates/list", **options)

    async def list_prompts(self, **options: Any) -> list[dict[str, Any]]:
        return await self._every("prompts/list", **options)

    async def list_page(
        self,
        method: str,
        cursor: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> McpResult:
        """One page of a listing (``tools/list``, ``resources/list``,
        ``resources/templates/list``, ``prompts/list``): ``page["nextCursor"]`` is absent on
        the last one."""
        if method not in _LISTINGS:
            raise ValueError(f"method must be one of {', '.join(_LISTINGS)}, not {method!r}")
        params = {"cursor": cursor} if cursor is not None else {}
        return await self.request(method, params, headers=headers)

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResult:
        """Any request (``ping``, ``server/discover``, ``completion/complete``...): its
        result, or ``McpError``. ``meta`` joins ``params._meta``. Not
        ``subscriptions/listen``: the client reads a response to its end, and a listen
        stream ends only with its lifetime."""
        if method == "subscriptions/listen":
            raise ValueError(
                "the test client does not hold subscriptions/listen streams; "
                "test what your code publishes with beammcp_django.notify"
            )
        if self.revision == LEGACY:
            if headers:
                raise ValueError(f"{LEGACY} is served over stdio: no HTTP headers to send")
            return await self._legacy(method, dict(params or {}), meta)
        return await self._http(method, dict(params or {}), headers, meta)

    # -- 2026-07-28: the HTTP endpoint --------------------------------------------------

    def _modern_meta(self, meta: Mapping[str, Any] | None) -> dict[str, Any]:
        value: dict[str, Any] = {
            revisions.META_PROTOCOL_VERSION: MODERN,
            revisions.META_CLIENT_CAPABILITIES: self.capabilities,
            revisions.META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            value[revisions.META_LOG_LEVEL] = self.log_level
        value.update(meta or {})
        return value

    def _mirrored(self, method: str, params: Mapping[str, Any]) -> dict[str, str]:
        """The headers that mirror the body, as a 2026-07-28 client sends them."""
        mirrored = {"mcp-protocol-version": MODERN, "mcp-method": method}
        named = _NAMED_BY.get(method)
        if named is not None and isinstance(params.get(named), str):
            mirrored["mcp-name"] = _header_value(params[named])
        arguments = params.get("arguments")
        if method == "tools/call" and isinstance(arguments, dict):
            parameters: tuple[HeaderParameter, ...] = self.server.index().header_params(
                str(params.get("name"))
            )
            for parameter in parameters:
                value = parameter.body_value(arguments)
                if value is not None:
                    mirrored[parameter.header] = _header_value(value)
        return mirrored

    async def _http(
        self,
        method: str,
        params: dict[str, Any],
        headers: Mapping[str, str] | None,
        meta: Mapping[str, Any] | None,
    ) -> McpResult:
        params["_meta"] = self._modern_meta({**params.get("_meta", {}), **(meta or {})})
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        body = wire.encode(message)
        sent = {
            "host": self.host,
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "content-length": str(len(body)),
            **self._mirrored(method, params),
            **self.headers,
            **{name.lower(): value for name, value in (headers or {}).items()},
        }
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": _endpoint_path(),
            "raw_path": _endpoint_path().encode("ascii"),
            "root_path": "",
            "query_string": b"",
            "headers": [
                (name.encode("latin-1"), str(value).encode("latin-1"))
                for name, value in sent.items()
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }
        response = await drive_asgi(self.endpoint, scope, body)
        messages = response.messages()
        if not messages:
            raise HttpRefusal(response.status, response.headers, bytes(response.body))
        *notes, reply = messages
        if "error" in reply:
            raise McpError(reply, response.status, response.headers)
        return _result(reply, notes, response.status, response.headers)

    # -- 2025-11-25: the stdio core and its session ----------------------------------------

    async def _legacy(
        self, method: str, params: dict[str, Any], meta: Mapping[str, Any] | None
    ) -> McpResult:
        if self._session is None:
            await self._open_session()
        if meta:
            params["_meta"] = {**params.get("_meta", {}), **meta}
        # As stdio serves them: initialize and logging/setLevel on the session itself, every
        # other request under the session as it stands.
        session = self._session if method in SESSION_METHODS else self._session.snapshot()
        return await self._serve_legacy(method, params, session)

    async def _open_session(self) -> None:
        session = LegacySession()
        params = {
            "protocolVersion": LEGACY,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        self.initialize_result = dict(await self._serve_legacy("initialize", params, session))
        await self.server.handle(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session
        )
        self._session = session
        if self.log_level is not None:
            await self._serve_legacy("logging/setLevel", {"level": self.log_level}, session)

    async def _serve_legacy(
        self, method: str, params: dict[str, Any], session: LegacySession
    ) -> McpResult:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        notes: list[dict[str, Any]] = []
        loop = asyncio.get_running_loop()
        # What stdio writes is JSON: the message and its reply cross the wire's encoder, so
        # a result JSON cannot carry fails here as it would there.
        decoded = wire.decode(wire.encode(message))
        reply = await self.server.handle(
            decoded,
            session=session,
            emit=from_any_thread(loop, notes.append),
            principal=self.user,
        )
        if type(reply) is not dict:
            raise RuntimeError(f"the server did not answer the {method} request")
        # What every transport answers for a host answer JSON cannot carry (and logs).
        reply = json.loads(jsonrpc.encode_reply(reply)[1])
        if "error" in reply:
            raise McpError(reply)
        return _result(reply, notes, None, {})

    # -- pages ------------------------------------------------------------------------------

    async def _every(self, method: str, **options: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await self.list_page(method, cursor, **options)
            items.extend(page.get(_LISTINGS[method], []))
            cursor = page.get("nextCursor")
            if not cursor:
                return items
            if cursor in seen:
                raise RuntimeError(f"{method} handed out the cursor {cursor!r} twice")
            seen.add(cursor)
        raise RuntimeError(f"{method} still had a next page after {MAX_PAGES} pages")


def _result(
    reply: Mapping[str, Any],
    notes: list[dict[str, Any]],
    status: int | None,
    headers: dict[str, str],
) -> McpResult:
    result = McpResult(reply["result"])
    result.notifications = notes
    result.status = status
    result.headers = headers
    return result


def _run_to_completion(name: str) -> Callable[..., Any]:
    """The sync form of ``AsyncMcpClient.<name>``: the same arguments, its outcome."""
    asynchronous = getattr(AsyncMcpClient, name)

    @functools.wraps(asynchronous)
    def method(self: McpClient, *args: Any, **kwargs: Any) -> Any:
        return async_to_sync(getattr(self.client, name))(*args, **kwargs)

    return method


class McpClient:
    """The sync client, for ``django.test.TestCase``: the async client's methods, each run
    to completion (``asgiref.sync.async_to_sync``) while sync host code runs on the calling
    thread, inside the test's transaction. Not for use where an event loop is running (an
    ``async def`` test): use ``AsyncMcpClient`` there."""

    def __init__(self, revision: str = MODERN, **options: Any) -> None:
        self.client = AsyncMcpClient(revision, **options)

    @property
    def revision(self) -> str:
        return self.client.revision

    @property
    def initialize_result(self) -> dict[str, Any] | None:
        return self.client.initialize_result

    call_tool = _run_to_completion("call_tool")
    read_resource = _run_to_completion("read_resource")
    get_prompt = _run_to_completion("get_prompt")
    list_tools = _run_to_completion("list_tools")
    list_resources = _run_to_completion("list_resources")
    list_resource_templates = _run_to_completion("list_resource_templates")
    list_prompts = _run_to_completion("list_prompts")
    list_page = _run_to_completion("list_page")
    request = _run_to_completion("request")
