"""CORS: a browser page on an allowed origin can call the endpoint, and no other page can.

Raw preflights and calls go to the session's real ``manage.py mcp_serve`` (uvicorn) and
daphne (their allowed origins are the sample's, ``http://127.0.0.1:8000`` and
``http://localhost:8000``), and to uvicorn serving the plain Django view; an ``mcp_serve``
with ``ALLOWED_ORIGINS = "any"`` answers the echo cases. Then Debian's headless Chromium loads a
page from a second local origin (a small HTTP server on another port) whose script calls
tools with ``fetch``: served when that origin is allowed, a CORS failure when it is not.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beammcp_django.transports.cors import PREFLIGHT_MAX_AGE_SECONDS, WITH_SESSIONS
from tests.chromium import chromium, skip_without_chromium
from tests.http.mcphttp_support import (
    PLAIN_APP,
    RESOURCE_METADATA,
    Response,
    ServerProcess,
    Wire,
    exchange,
    http_request,
    mcp_headers,
    message,
    post,
    server_env,
    start_server,
)

# The test servers serve both eras (HTTP_LEGACY_SESSIONS, on by default): DELETE and
# Mcp-Session-Id are allowed beside 2026-07-28's methods and headers.
CORS_REQUEST_HEADERS = WITH_SESSIONS.request_headers
ALLOWED = "http://127.0.0.1:8000"
DISALLOWED = "http://evil.example.com"
DISCOVER = message("c-1", "server/discover")
# What Chromium lists for a tools/call carrying one Mcp-Param header: lower-case, sorted.
BROWSER_REQUESTED = "content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version"


def preflight(
    origin: str | None = ALLOWED,
    method: str | None = "POST",
    requested: str | None = BROWSER_REQUESTED,
    **options: Any,
) -> bytes:
    """The bytes of a preflight as a browser sends it (no body, no content headers)."""
    add = list(options.pop("add", []))
    if origin is not None:
        add.append(("Origin", origin))
    if method is not None:
        add.append(("Access-Control-Request-Method", method))
    if requested is not None:
        add.append(("Access-Control-Request-Headers", requested))
    options.setdefault("content_length", False)
    return http_request(method="OPTIONS", drop=["Content-Type", "Accept"], add=add, **options)


def cors_headers(response: Response) -> dict[str, str]:
    return {name: value for name, value in response.headers if name.startswith("access-control-")}


def names(value: str | None) -> list[str]:
    return [item.strip().lower() for item in (value or "").split(",") if item.strip()]


def assert_refused_without_cors(response: Response, status: int, *words: str) -> None:
    assert response.status == status, (response.status, response.body)
    assert cors_headers(response) == {}, response.headers
    assert response.header("vary") is None
    assert response.says_close
    error = response.error()["error"]
    assert "id" not in response.json()
    for word in words:
        assert word in error["message"], error


# -- preflights ---------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [ALLOWED, "http://localhost:8000"])
def test_a_preflight_from_an_allowed_origin_is_204_allowing_post_and_the_mcp_headers(
    server, origin
):
    response = exchange(server.port, preflight(origin))
    assert response.status == 204, (response.status, response.body)
    assert response.body == b""
    assert response.header("access-control-allow-origin") == origin
    assert names(response.header("access-control-allow-methods")) == ["post", "get", "delete"]
    allowed = names(response.header("access-control-allow-headers"))
    assert set(allowed) == {name.lower() for name in CORS_REQUEST_HEADERS} | {"mcp-param-region"}
    assert response.header("access-control-max-age") == str(PREFLIGHT_MAX_AGE_SECONDS)
    assert "origin" in names(response.header("vary"))
    # Never credentials: a page's cookies must not authorize a cross-origin call.
    assert response.header("access-control-allow-credentials") is None


def test_a_preflight_keeps_the_connection_for_the_call_it_clears(server):
    """As a browser does: the preflight, then the POST on the same connection."""
    with Wire(server.port) as wire:
        wire.send(preflight())
        cleared = wire.response()
        assert cleared.status == 204 and not cleared.says_close, cleared.headers
        wire.send(http_request(DISCOVER, add=[("Origin", ALLOWED)]))
        answered = wire.response()
    assert answered.status == 200
    assert answered.header("access-control-allow-origin") == ALLOWED
    assert answered.json()["result"]["resultType"] == "complete"


def test_a_preflight_echoes_only_the_mcp_param_names_it_was_asked_for(server):
    requested = "Content-Type, MCP-Protocol-Version, Mcp-Param-Region, mcp-param-count"
    response = exchange(server.port, preflight(requested=requested))
    assert response.status == 204
    allowed = names(response.header("access-control-allow-headers"))
    assert [name for name in allowed if name.startswith("mcp-param-")] == [
        "mcp-param-region",
        "mcp-param-count",
    ]


def test_a_preflight_asking_for_no_header_is_answered_with_the_standard_ones(server):
    response = exchange(server.port, preflight(requested=None))
    assert response.status == 204
    allowed = names(response.header("access-control-allow-headers"))
    assert allowed == [name.lower() for name in CORS_REQUEST_HEADERS]


def test_a_preflight_from_a_disallowed_origin_is_403_with_no_cors_header(server):
    response = exchange(server.port, preflight(DISALLOWED))
    assert_refused_without_cors(
        response, 403, "the Origin header names an origin BEAMMCP['ALLOWED_ORIGINS'] does not allow"
    )
    assert b"evil.example.com" not in response.body


@pytest.mark.parametrize(
    "requested",
    [
        "content-type,x-api-key",
        "content-type,cookie",
        "mcp-param-",
        "mcp-param-bad/name",
        "last-event-id",  # not before resumable streams exist
    ],
)
def test_a_preflight_requesting_a_header_the_endpoint_does_not_accept_is_403(server, requested):
    response = exchange(server.port, preflight(requested=requested))
    assert_refused_without_cors(response, 403, "Access-Control-Request-Headers", "Mcp-Param-")
    assert requested.encode() not in response.body


@pytest.mark.parametrize("method", ["PUT", "PATCH", "post", "delete"])
def test_a_preflight_asking_for_a_method_the_endpoint_does_not_serve_is_403(server, method):
    response = exchange(server.port, preflight(method=method))
    assert_refused_without_cors(response, 403, "only for POST, GET, DELETE")


def test_an_options_without_access_control_request_method_is_400_naming_it(server):
    response = exchange(server.port, preflight(method=None))
    assert_refused_without_cors(response, 400, "Access-Control-Request-Method is missing")


def test_an_options_without_origin_is_400_naming_it(server):
    response = exchange(server.port, preflight(origin=None))
    assert_refused_without_cors(response, 400, "Origin is missing")


def test_two_disagreeing_request_methods_are_400(server):
    twice = preflight(add=[("Access-Control-Request-Method", "DELETE")])
    response = exchange(server.port, twice)
    assert_refused_without_cors(response, 400, "appears twice")


def test_a_preflight_naming_a_host_this_server_does_not_serve_is_400(server):
    response = exchange(server.port, preflight(host="evil.example.com"))
    assert_refused_without_cors(response, 400, "Host")


def test_a_preflight_is_answered_without_asking_the_authorize_hook(server):
    """A browser sends no credentials on a preflight: a hook that would refuse every call
    is not asked, and the call itself is still refused by it."""
    token = f"cors-{server.kind}-{uuid.uuid4().hex[:12]}"
    script = [("X-Mcphttp-Authorize", "deny"), ("X-Mcphttp-Record", token)]
    response = exchange(server.port, preflight(add=script))
    assert response.status == 204
    assert not (server.records / f"{token}.hook").exists()
    refused = post(server.port, DISCOVER, add=[*script, ("Origin", ALLOWED)])
    assert refused.status == 403
    assert (server.records / f"{token}.hook").exists()
    assert refused.header("access-control-allow-origin") == ALLOWED


@pytest.mark.parametrize("server", ["mcp_serve"], indirect=True)
def test_a_preflight_declaring_a_body_is_answered_and_the_connection_closed_unread(server):
    """No browser sends one; a body after it is never read as a request of its own."""
    smuggled = http_request(DISCOVER)
    with Wire(server.port) as wire:
        wire.send(preflight(content_length=len(smuggled)) + smuggled)
        response = wire.response()
        assert response.status == 204
        assert response.says_close
        assert wire.closed_by_server(2.0)
        assert bytes(wire.buffer) == b""


# -- the answers to an allowed origin ------------------------------------------------------


def sse_call(token: str) -> dict[str, Any]:
    arguments = {"token": token, "seconds": 0.05}
    return message(
        token, "tools/call", {"name": "mcphttp_vigil", "arguments": arguments}, progressToken=token
    )


ANSWERS = {
    "json-result": lambda token: {"value": DISCOVER},
    "json-rpc-error": lambda token: {"value": message(token, "no/such/method")},
    "sse-stream": lambda token: {"value": sse_call(token)},
    "notification-202": lambda token: {
        "value": {"jsonrpc": "2.0", "method": "notifications/initialized"}
    },
    "parse-error-400": lambda token: {"value": DISCOVER, "body": b"{not json"},
    "refused-415": lambda token: {"value": DISCOVER, "replace": {"Content-Type": "text/plain"}},
    "refused-401": lambda token: {
        "value": DISCOVER,
        "add": [("X-Mcphttp-Authorize", "refuse-401")],
    },
}
STATUS = {
    "json-result": 200,
    "json-rpc-error": 404,
    "sse-stream": 200,
    "notification-202": 202,
    "parse-error-400": 400,
    "refused-415": 415,
    "refused-401": 401,
}


@pytest.mark.parametrize("case", list(ANSWERS))
def test_every_answer_to_an_allowed_origin_carries_allow_origin_expose_and_vary(server, case):
    options = ANSWERS[case](f"cors-{server.kind}-{uuid.uuid4().hex[:12]}")
    value = options.pop("value")
    options["add"] = [*options.get("add", []), ("Origin", ALLOWED)]
    response = exchange(server.port, http_request(value, **options))
    assert response.status == STATUS[case], (response.status, response.body)
    assert response.header("access-control-allow-origin") == ALLOWED
    assert names(response.header("access-control-expose-headers")) == [
        "www-authenticate",
        "mcp-session-id",
    ]
    assert "origin" in names(response.header("vary"))
    assert response.header("access-control-allow-credentials") is None
    if case == "sse-stream":
        assert response.events()[-1]["result"]["content"][0]["text"] == "finished"
    if case == "refused-401":
        assert response.all("www-authenticate") == [RESOURCE_METADATA]


def test_an_answer_to_a_request_without_origin_carries_no_cors_header(server):
    response = post(server.port, DISCOVER)
    assert response.status == 200
    assert cors_headers(response) == {}
    assert response.header("vary") is None


def test_a_call_from_a_disallowed_origin_is_403_with_no_cors_header(server):
    response = post(server.port, DISCOVER, add=[("Origin", DISALLOWED)])
    assert_refused_without_cors(response, 403, "Origin")


def test_the_plain_django_view_answers_a_preflight_and_marks_its_answers_too(
    http_env, http_workdir
):
    """Behind Django's own ASGI handler (no MCP router) the same endpoint answers."""
    plain = start_server("uvicorn", http_env, http_workdir, app=PLAIN_APP)
    try:
        cleared = exchange(plain.port, preflight())
        answered = post(plain.port, DISCOVER, add=[("Origin", ALLOWED)])
        refused = exchange(plain.port, preflight(DISALLOWED))
    finally:
        plain.stop()
    assert cleared.status == 204, (cleared.status, cleared.body)
    assert cleared.header("access-control-allow-origin") == ALLOWED
    assert "mcp-param-region" in names(cleared.header("access-control-allow-headers"))
    assert answered.status == 200
    assert answered.header("access-control-allow-origin") == ALLOWED
    assert names(answered.header("access-control-expose-headers")) == [
        "www-authenticate",
        "mcp-session-id",
    ]
    assert refused.status == 403
    assert cors_headers(refused) == {}


# -- ALLOWED_ORIGINS = "any" ---------------------------------------------------------------


@pytest.fixture(scope="module")
def any_origin_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("cors-any")
    env = {**server_env(directory), "BEAMMCP_TEST_ANY_ORIGIN": "1"}
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


@pytest.mark.parametrize("origin", ["https://anything.example", "null"])
def test_with_any_origin_allowed_each_origin_is_echoed_never_a_wildcard(any_origin_server, origin):
    cleared = exchange(any_origin_server.port, preflight(origin))
    assert cleared.status == 204
    assert cleared.header("access-control-allow-origin") == origin
    answered = post(any_origin_server.port, DISCOVER, add=[("Origin", origin)])
    assert answered.status == 200
    assert answered.header("access-control-allow-origin") == origin
    assert "origin" in names(answered.header("vary"))
    for response in (cleared, answered):
        assert response.header("access-control-allow-credentials") is None


# -- in a real browser ---------------------------------------------------------------------

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>An MCP client on another origin</title>
<script>
// POST one JSON-RPC message with the MCP headers; what came back, or how fetch failed.
async function callMcp(endpoint, body, headers, credentials) {
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: headers,
      body: JSON.stringify(body),
      credentials: credentials,
    });
    return {
      status: response.status,
      contentType: response.headers.get("Content-Type"),
      wwwAuthenticate: response.headers.get("WWW-Authenticate"),
      body: await response.text(),
    };
  } catch (error) {
    return {error: error.name, message: error.message};
  }
}
</script>
"""


class PageHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the page; its request log would only clutter the test's output."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_origins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two origins serving the page: ``http://127.0.0.1:<port>`` twice, on two ports."""
    directory = tmp_path_factory.mktemp("cors-page")
    (directory / "client.html").write_text(PAGE)
    handler = functools.partial(PageHandler, directory=str(directory))
    pages = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    threads = [threading.Thread(target=page.serve_forever, daemon=True) for page in pages]
    for thread in threads:
        thread.start()
    try:
        yield tuple(f"http://127.0.0.1:{page.server_address[1]}" for page in pages)  # type: ignore[misc]
    finally:
        for page in pages:
            page.shutdown()
            page.server_close()


@pytest.fixture(scope="module")
def browser_server(
    tmp_path_factory: pytest.TempPathFactory, page_origins: tuple[str, str]
) -> Iterator[ServerProcess]:
    """``manage.py mcp_serve`` allowing the first page origin only."""
    directory = tmp_path_factory.mktemp("cors-browser")
    env = {**server_env(directory), "BEAMMCP_ALLOWED_ORIGINS": page_origins[0]}
    server = start_server("mcp_serve", env, directory)
    yield server
    server.stop()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    skip_without_chromium()
    with chromium(tmp_path, monkeypatch, console=True) as driver:
        yield driver


def call_from_page(
    driver: Any,
    origin: str,
    endpoint: str,
    body: Any,
    headers: Any,
    credentials: str = "same-origin",  # fetch's default
) -> Any:
    """What the page's ``callMcp`` returned: the answer's status, two headers and body, or
    the name and message of the error ``fetch`` rejected with."""
    if not driver.current_url.startswith(origin):
        driver.get(f"{origin}/client.html")
    return driver.execute_async_script(
        "callMcp(arguments[0], arguments[1], arguments[2], arguments[3]).then(arguments[4]);",
        endpoint,
        body,
        dict(headers),
        credentials,
    )


def tool_call(request_id: int, name: str, arguments: dict[str, Any], **meta: Any) -> Any:
    return message(request_id, "tools/call", {"name": name, "arguments": arguments}, **meta)


@pytest.mark.slow
@pytest.mark.one_leg  # a real browser: its outcome does not depend on the leg
def test_a_page_on_an_allowed_origin_calls_tools_with_fetch_in_chromium(
    browser, browser_server, page_origins
):
    allowed, _ = page_origins
    endpoint = browser_server.url

    echo = tool_call(1, "echo", {"text": "hello from another origin"})
    answer = call_from_page(browser, allowed, endpoint, echo, mcp_headers(echo))
    assert answer.get("status") == 200, answer
    assert json.loads(answer["body"])["result"]["content"][0]["text"] == (
        "hello from another origin"
    )

    # An Mcp-Param header the tool declares (x-mcp-header): its name cleared by the preflight.
    region = tool_call(2, "mcphttp_region", {"region": "eu", "count": 3})
    headers = [*mcp_headers(region), ("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "3")]
    answer = call_from_page(browser, allowed, endpoint, region, headers)
    assert answer.get("status") == 200, answer
    assert json.loads(answer["body"])["result"]["content"][0]["text"] == "eu:3"

    # A streamed answer is readable too.
    token = f"cors-browser-{uuid.uuid4().hex[:12]}"
    streamed = sse_call(token)
    answer = call_from_page(browser, allowed, endpoint, streamed, mcp_headers(streamed))
    assert answer.get("status") == 200, answer
    assert answer["contentType"] == "text/event-stream"
    assert '"text":"finished"' in answer["body"].replace(" ", "")

    # A 401's challenge is exposed, so a browser client can start the authorization flow.
    challenged = [*mcp_headers(echo), ("Authorization", "Bearer refuse-401")]
    answer = call_from_page(browser, allowed, endpoint, echo, challenged)
    assert answer.get("status") == 401, answer
    assert answer["wwwAuthenticate"] == RESOURCE_METADATA

    # Credentials are never allowed: a call sending the page's cookies is blocked.
    answer = call_from_page(browser, allowed, endpoint, echo, mcp_headers(echo), "include")
    assert answer == {"error": "TypeError", "message": "Failed to fetch"}, answer


@pytest.mark.slow
@pytest.mark.one_leg  # a real browser: its outcome does not depend on the leg
def test_a_page_on_a_disallowed_origin_cannot_call_a_tool_in_chromium(
    browser, browser_server, page_origins
):
    _, disallowed = page_origins
    echo = tool_call(1, "echo", {"text": "hello"})
    answer = call_from_page(browser, disallowed, browser_server.url, echo, mcp_headers(echo))
    assert answer == {"error": "TypeError", "message": "Failed to fetch"}, answer
    console = " ".join(entry["message"] for entry in browser.get_log("browser"))
    assert "blocked by CORS policy" in console, console
    assert "preflight" in console, console
    # The refusal is the preflight's: the same server answers the same call without Origin.
    assert post(browser_server.port, echo).status == 200


def test_with_any_origin_allowed_an_empty_origin_is_answered_as_none(any_origin_server):
    refused = exchange(any_origin_server.port, preflight(""))
    assert_refused_without_cors(refused, 400, "Origin is missing")
    answered = post(any_origin_server.port, DISCOVER, add=[("Origin", "")])
    assert answered.status == 200
    assert cors_headers(answered) == {}
