"""docs/deployment.md run as written: Debian's nginx with the page's configuration in front of
``mcp_serve --workers 2`` (the page's command) on Redis, driven through TLS by the official
MCP SDK client and by raw sockets.

What each test holds is a line of the page: SSE through the proxy (a progress stream, a
listen stream receiving a change made on either worker), the admin's static files, the health
probe, the body cap with clients that write before they read (item 3: through nginx every one
reads the 413; directly on uvicorn they see a reset, the residue the page documents), the
header limits, the forwarded headers, the catch-all server for other host names, the logging
configuration, and a worker replaced after it dies.
"""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.deployment import page
from tests.deployment.conftest import Deployment
from tests.deployment.nginx import TlsWire, error_log
from tests.http.mcphttp_support import (
    MAX_BODY,
    NoResponse,
    Wire,
    http_request,
    message,
    start_server,
    wait_for_file,
)

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

TIMEOUT_SECONDS = 30
HOST = "localhost"
OVERSIZED = 8 * MAX_BODY
CLIENTS = 150


def run(scenario: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT_SECONDS):
            return await scenario()

    return anyio.run(bounded)


def tls(deployment: Deployment, timeout: float = 10.0) -> TlsWire:
    return TlsWire(deployment.where.https_port, deployment.context(), HOST, timeout)


def through_nginx(deployment: Deployment, data: bytes, timeout: float = 10.0) -> Any:
    with tls(deployment, timeout) as wire:
        wire.send(data)
        return wire.response(timeout)


def get(path: str, host: str = HOST, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n".encode()


# -- the SDK client ----------------------------------------------------------------------


def test_the_sdk_client_lists_calls_and_streams_progress_through_nginx(deployment):
    reports: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, text: str | None) -> None:
        reports.append((progress, total))

    async def scenario() -> None:
        async with (
            httpx2.AsyncClient(verify=deployment.context(), timeout=20) as http,
            streamable_http_client(deployment.https_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.discover()
            tools = await session.list_tools()
            assert {"echo", "fault_progress"} <= {tool.name for tool in tools.tools}
            echoed = await session.call_tool("echo", {"text": "through nginx"})
            assert [block.text for block in echoed.content] == ["through nginx"]
            progressed = await session.call_tool(
                "fault_progress", {}, progress_callback=on_progress
            )
            assert [block.text for block in progressed.content] == ["progressed"]

    run(scenario)
    assert reports == [(1, 3), (2, 3), (3, 3)]


# -- subscriptions/listen across the two workers ----------------------------------------


def sse_messages(wire: TlsWire, want: int, timeout: float) -> list[dict[str, Any]]:
    """The JSON messages of the stream read so far, reading until ``want`` have arrived."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = [
            json.loads(line[len("data: ") :])
            for line in wire.buffer.decode("utf-8", "replace").splitlines()
            if line.startswith("data: ")
        ]
        if len(events) >= want:
            return events
        if wire.has_data(0.2):
            try:
                wire._fill(deadline)
            except NoResponse:
                break
    raise AssertionError(f"{want} messages expected, the stream held: {bytes(wire.buffer)!r}")


@contextmanager
def only_one_worker(deployment: Deployment, pid: int) -> Iterator[None]:
    """Every other worker stopped (SIGSTOP) meanwhile: new connections go to ``pid``."""
    others = deployment.workers.worker_pids() - {pid}
    for other in others:
        os.kill(other, signal.SIGSTOP)
    try:
        yield
    finally:
        for other in others:
            os.kill(other, signal.SIGCONT)


def announce_on(deployment: Deployment, pid: int, number: int) -> None:
    """Call ``mcphttp_announce`` on worker ``pid``, on a connection of its own."""
    call = message(
        f"announce-{number}", "tools/call", {"name": "mcphttp_announce", "arguments": {}}
    )
    with only_one_worker(deployment, pid), Wire(deployment.workers.port) as wire:
        wire.send(http_request(call, host=HOST, close=True))
        answer = wire.response()
    assert answer.json()["result"]["content"][0]["text"] == "announced", answer.body


def test_a_listen_stream_through_nginx_receives_a_change_made_on_either_worker(deployment):
    workers = sorted(deployment.workers.worker_pids())
    assert len(workers) == 2, workers
    listen = message(
        "listen-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
    )
    with tls(deployment, timeout=20) as wire:
        wire.send(http_request(listen, host=HOST))
        (ack,) = sse_messages(wire, 1, timeout=10)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert b"text/event-stream" in bytes(wire.buffer).lower()
        # One announcement on each worker: whichever holds the stream, one change crosses.
        for number, pid in enumerate(workers):
            announce_on(deployment, pid, number)
        events = sse_messages(wire, 3, timeout=10)
    changes = [e for e in events if e.get("method") == "notifications/tools/list_changed"]
    assert len(changes) == 2, events
    assert {c["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for c in changes} == {
        "listen-1"
    }


def test_a_legacy_session_through_nginx_is_served_by_both_workers(deployment):
    """The page's ``SESSION_CACHE``: a session opened on one worker is used and ended on the
    other (each reached on a connection of its own while the other is stopped, as nginx's
    kept-alive upstream connections would otherwise hide which one answers), then the
    official SDK client holds a session (``initialize``) through nginx."""
    first, second = sorted(deployment.workers.worker_pids())
    modern = ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]

    def on(pid: int, data: bytes) -> Any:
        with only_one_worker(deployment, pid), Wire(deployment.workers.port) as wire:
            wire.send(data)
            return wire.response()

    initialize = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    opened = on(first, http_request(initialize, host=HOST, drop=modern, close=True))
    assert opened.status == 200, opened.body
    in_session = [
        ("Mcp-Session-Id", opened.header("mcp-session-id") or ""),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
    call = {"jsonrpc": "2.0", "id": "c", "method": "tools/call"}
    call["params"] = {"name": "echo", "arguments": {"text": "either worker"}}
    request = http_request(call, host=HOST, drop=modern, add=in_session, close=True)
    echoed = on(second, request)
    assert echoed.status == 200, echoed.body
    assert echoed.json()["result"]["content"][0]["text"] == "either worker"
    ending = http_request(None, method="DELETE", host=HOST, drop=modern, add=in_session)
    assert on(second, ending).status == 204
    assert on(first, request).status == 404

    async def scenario() -> None:
        async with (
            httpx2.AsyncClient(verify=deployment.context(), timeout=20) as http,
            streamable_http_client(deployment.https_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            initialized = await session.initialize()
            assert initialized.protocol_version == "2025-11-25"
            for _ in range(6):  # several requests, so nginx spreads them over both workers
                echoed = await session.call_tool("echo", {"text": "in a session"})
                assert [block.text for block in echoed.content] == ["in a session"]

    run(scenario)


# -- static files and the health probe ----------------------------------------------------


def test_the_admin_login_page_and_its_css_load_through_nginx(deployment):
    login = through_nginx(deployment, get("/admin/login/"))
    assert login.status == 200, login.body[:300]
    stylesheet = re.search(rb'href="(/static/admin/css/[\w.]+\.css)"', login.body)
    assert stylesheet, login.body[:2000]
    css = through_nginx(deployment, get(stylesheet.group(1).decode()))
    assert css.status == 200
    assert css.content_type == "text/css"
    relative = stylesheet.group(1).decode().removeprefix("/static/")
    assert css.body == (deployment.where.static_root / relative).read_bytes()


def test_the_health_probe_is_a_get_answered_by_a_worker_with_server_discover(deployment):
    health = through_nginx(deployment, get("/healthz"))
    assert health.status == 200, health.body
    result = health.json()["result"]
    assert result["resultType"] == "complete"
    server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert server_info["name"] == "beammcp-sample-weather"


def test_the_health_probe_fails_when_no_worker_answers(deployment):
    workers = deployment.workers.worker_pids()
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        health = through_nginx(deployment, get("/healthz"), timeout=15)
        waited = time.monotonic() - started
    finally:
        for pid in workers:
            # uvicorn's supervisor kills and replaces a worker that answers no ping for 5 s
            # (timeout_worker_healthcheck), the probe's own read timeout: which comes first
            # is a race, and either way the stopped worker did not answer.
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert health.status == 504, health.status
    assert waited < 10


# -- the body cap, and clients that write before they read (issue 12, item 3) ------------


def write_then_read(connect: Any) -> str:
    """One client that writes a whole oversized request, then reads: what it saw."""
    call = message("big", "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    request = http_request(call, body=b"x" * OVERSIZED, host=HOST)
    try:
        wire = connect()
    except OSError as error:
        return f"connect: {type(error).__name__}"
    with wire:
        try:
            wire.send(request)
        except (ssl.SSLError, OSError):
            return "reset while writing"
        try:
            response = wire.response(20)
        except NoResponse:
            return "reset or closed before a response"
        except (ssl.SSLError, OSError):
            return "reset while reading"
        return str(response.status)


def many_clients(connect: Any) -> Counter[str]:
    with ThreadPoolExecutor(CLIENTS) as pool:
        return Counter(pool.map(lambda _: write_then_read(connect), range(CLIENTS)))


def test_through_nginx_150_clients_that_write_8_mib_first_all_read_413(deployment):
    outcomes = many_clients(lambda: tls(deployment, timeout=30))
    assert outcomes == Counter({"413": CLIENTS}), outcomes


def test_nginx_refuses_an_oversized_body_with_the_endpoints_own_error(deployment):
    call = message("big", "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    declared = http_request(call, body=b"", content_length=MAX_BODY + 1, host=HOST, close=True)
    with Wire(deployment.workers.port) as wire:
        wire.send(declared)
        direct = wire.response()
    proxied = through_nginx(deployment, declared)
    assert direct.status == proxied.status == 413
    assert proxied.content_type == direct.content_type == "application/json"
    assert proxied.body == direct.body


def test_directly_on_mcp_serve_clients_that_write_8_mib_first_see_a_reset(deployment):
    """The residue the page states: the 413 is sent before the body is read, and a client
    still writing meets the reset of a connection closed with unread data."""
    outcomes = many_clients(lambda: Wire(deployment.workers.port, timeout=30))
    print(f"directly on mcp_serve, {CLIENTS} clients writing {OVERSIZED} bytes: {outcomes}")
    assert set(outcomes) <= {
        "413",
        "reset while writing",
        "reset while reading",
        "reset or closed before a response",
    }, outcomes
    assert outcomes["413"] < CLIENTS, outcomes


def test_a_chunked_body_through_nginx_reaches_the_endpoint_with_a_length(deployment):
    body = json.dumps(
        message("chunked", "tools/call", {"name": "echo", "arguments": {"text": "c"}})
    )
    request = (
        http_request(
            json.loads(body),
            body=b"",
            content_length=False,
            host=HOST,
            add=[("Transfer-Encoding", "chunked")],
            close=True,
        )
        + f"{len(body):x}\r\n{body}\r\n0\r\n\r\n".encode()
    )
    answer = through_nginx(deployment, request)
    assert answer.status == 200, answer.body
    assert answer.json()["result"]["content"][0]["text"] == "c"


# -- header limits ------------------------------------------------------------------------


def discover_with(*headers: tuple[str, str]) -> bytes:
    return http_request(message("h", "server/discover"), host=HOST, add=headers, close=True)


def test_a_head_over_header_max_bytes_reaches_the_workers_and_is_431_by_name(deployment):
    answer = through_nginx(
        deployment, discover_with(("X-Big", "a" * 12_000), ("X-Big2", "b" * 6_000))
    )
    assert answer.status == 431, answer.body[:300]
    assert b"16384 bytes" in answer.body


def test_a_single_header_line_over_16_kib_is_refused_by_nginx(deployment):
    answer = through_nginx(deployment, discover_with(("X-Big", "a" * 17_000)))
    assert answer.status == 400


def test_more_header_fields_than_header_max_count_are_431_from_the_workers(deployment):
    answer = through_nginx(deployment, discover_with(*[(f"X-F{n}", "v") for n in range(110)]))
    assert answer.status == 431, answer.body[:300]
    assert b"header fields" in answer.body


def test_a_head_that_never_completes_is_closed_by_nginx_at_its_timeout(deployment):
    with tls(deployment, timeout=20) as wire:
        wire.send(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        started = time.monotonic()
        assert wire.closed_by_server(15)
        assert 9 < time.monotonic() - started < 14


# -- hosts and forwarded headers ----------------------------------------------------------


def test_a_request_naming_another_host_is_closed_unanswered(deployment):
    with tls(deployment) as wire:
        wire.send(discover_with())
        served = wire.response()
    assert served.status == 200
    for request in (
        http_request(message("h", "server/discover"), host="evil.example", close=True),
        http_request(message("h", "server/discover"), host=HOST, close=True).replace(
            b"POST /mcp ", b"POST https://evil.example/mcp ", 1
        ),
    ):
        with tls(deployment) as wire:
            wire.send(request)
            with pytest.raises(NoResponse):
                wire.response()


def test_a_tls_handshake_for_another_name_is_refused(deployment):
    with pytest.raises(ssl.SSLError):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        TlsWire(deployment.where.https_port, context, "evil.example")


def test_plain_http_is_redirected_to_https(deployment):
    with Wire(deployment.where.http_port) as wire:
        wire.send(get("/mcp"))
        answer = wire.response()
    assert answer.status == 301
    assert answer.header("location") == "https://localhost/mcp"


def test_forwarded_headers_are_nginxs_whatever_the_client_sends(deployment):
    token = f"forwarded-{os.getpid()}-{time.monotonic_ns()}"
    answer = through_nginx(
        deployment,
        discover_with(
            ("X-Mcphttp-Record", token),
            ("X-Forwarded-Host", "evil.example"),
            ("X-Forwarded-For", "203.0.113.9"),
            ("X-Forwarded-Proto", "http"),
        ),
    )
    assert answer.status == 200, answer.body
    record = deployment.workers.records / f"{token}.hook"
    assert wait_for_file(record, 5)
    seen = json.loads(record.read_text())
    headers = seen["headers"]
    assert headers["host"] == [HOST]
    assert headers["x-forwarded-host"] == [HOST]
    assert headers["x-forwarded-for"] == ["127.0.0.1"]
    assert headers["x-forwarded-proto"] == ["https"]
    # uvicorn believed nginx (--forwarded-allow-ips): the client is the forwarded address.
    assert seen["client"] == ["127.0.0.1", 0]


# -- logging and workers -------------------------------------------------------------------


def test_the_documented_logging_writes_the_packages_and_uvicorns_lines(deployment):
    refused = through_nginx(deployment, discover_with(("X-Mcphttp-Authorize", "refuse-403")))
    assert refused.status == 403
    line = re.compile(
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\w+) ([\w.]+) pid=(\d+) (.*)$", re.MULTILINE
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = line.findall(deployment.workers.log_tail(200_000))
        if any(name == "beammcp_django.http" for _, name, _, _ in lines):
            break
        time.sleep(0.1)
    refusals = [text for level, name, _, text in lines if name == "beammcp_django.http"]
    assert any("refused by an authorization hook" in text for text in refusals), lines[-10:]
    started = {
        pid
        for _, name, pid, text in lines
        if name == "uvicorn.error" and "startup complete" in text
    }
    assert {int(pid) for pid in started} >= deployment.workers.worker_pids()


def test_without_no_access_log_uvicorn_writes_one_access_line_per_request(deployment, tmp_path):
    """The page's command minus ``--no-access-log`` (one worker, on a port of its own)."""

    def command(port: int) -> list[str]:
        serve = page.commands(sys.executable, port)[-1]
        serve.remove("--no-access-log")
        serve[serve.index("--workers") + 1] = "1"
        return serve

    server = start_server("mcp_serve", deployment.env, tmp_path, command=command)
    try:
        with Wire(server.port) as wire:
            wire.send(http_request(message("logged", "server/discover"), host=HOST, close=True))
            assert wire.response().status == 200
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "uvicorn.access" not in server.log_tail():
            time.sleep(0.1)
    finally:
        server.stop()
    access = [line for line in server.log_tail(50_000).splitlines() if " uvicorn.access " in line]
    assert len(access) == 1, server.log_tail()
    assert re.search(
        r' INFO uvicorn\.access pid=\d+ 127\.0\.0\.1:\d+ - "POST /mcp HTTP/1\.1" 200', access[0]
    )


def test_a_killed_worker_is_replaced_and_the_site_serves_on(deployment):
    before = deployment.workers.worker_pids()
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        now = deployment.workers.worker_pids()
        if len(now) == 2 and victim not in now:
            break
        time.sleep(0.2)
    assert victim not in now and len(now) == 2, (before, now)
    for _ in range(10):
        assert through_nginx(deployment, get("/healthz")).status == 200


def test_nginx_logged_no_upstream_failure(deployment):
    errors = [
        line
        for line in error_log(deployment.nginx.log_path.parent).splitlines()
        if "upstream prematurely closed" in line
        or "connect() failed" in line
        or ("upstream timed out" in line and "/healthz" not in line)
    ]
    assert errors == []
