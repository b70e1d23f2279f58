"""``manage.py mcp_serve``, the main command, as a real process: the bounds it adds to uvicorn's
httptools parser (head bytes, field count, head time), the authority of an absolute-form
target, the refusal of several workers over process-local state, and its banner.

The server runs with ``tests.http_settings`` and a 1-s head clock
(``BEAMMCP_TEST_HEADER_TIMEOUT``), so a slow head is cut quickly.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path

import pytest

from tests.http.mcphttp_support import (
    REPLY_TIMEOUT,
    NoResponse,
    ServerProcess,
    Wire,
    discover_works,
    http_request,
    message,
    post,
    server_env,
    start_server,
)
from tests.stdio.conftest import memory_kib
from tests.support import REPO_ROOT

pytestmark = pytest.mark.slow

HEAD_TIMEOUT = 1.0
HEADER_MAX_BYTES = 16_384
HEADER_MAX_COUNT = 100
DISCOVER = message("serve-1", "server/discover")


@pytest.fixture(scope="module")
def serve_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = server_env(tmp_path_factory.mktemp("mcp-serve"))
    env["BEAMMCP_TEST_HEADER_TIMEOUT"] = str(HEAD_TIMEOUT)
    return env


@pytest.fixture(scope="module")
def served(
    serve_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    server = start_server("mcp_serve", serve_env, tmp_path_factory.mktemp("mcp-serve-logs"))
    yield server
    server.stop()


@pytest.fixture
def server(served: ServerProcess) -> Iterator[ServerProcess]:
    yield served
    assert served.alive(), served.log_tail()
    assert discover_works(served.port), f"mcp_serve stopped serving:\n{served.log_tail()}"


def head(path: str = "/mcp", fields: list[tuple[str, str]] | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in fields or []]
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def refusal(wire: Wire) -> tuple[int, str]:
    response = wire.response()
    assert response.says_close, response.headers
    return response.status, response.body.decode()


# -- size -----------------------------------------------------------------------------------


def test_a_head_longer_than_the_limit_is_431_naming_it_and_the_connection_closes(server):
    with Wire(server.port) as wire:
        wire.send(head(fields=[("X-Padding", "a" * HEADER_MAX_BYTES)]) + b"\r\n")
        status, reason = refusal(wire)
        assert wire.closed_by_server(REPLY_TIMEOUT)
    assert status == 431
    assert reason == f"the request head is longer than {HEADER_MAX_BYTES} bytes"


def test_a_head_just_under_the_limit_is_served(server):
    request = http_request(DISCOVER)
    padding = HEADER_MAX_BYTES - len(request.split(b"\r\n\r\n")[0]) - 64
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER, add=[("X-Padding", "a" * padding)]))
        response = wire.response()
    assert response.status == 200, response.body


def test_a_head_with_more_fields_than_the_limit_is_431(server):
    fields = [(f"X-Field-{number}", "1") for number in range(HEADER_MAX_COUNT)]
    with Wire(server.port) as wire:
        wire.send(head(fields=fields) + b"\r\n")
        status, reason = refusal(wire)
    assert status == 431
    assert reason == f"the request has more than {HEADER_MAX_COUNT} header fields"


def test_four_64_mib_headers_leave_the_resident_set_where_it_was(server):
    """The issue's measure: four 64 MiB header values took httptools from 90 to 348 MiB."""
    before = memory_kib(server.proc.pid, "VmRSS")
    chunk = b"a" * (1 << 20)
    outcomes = []
    for _ in range(4):
        with Wire(server.port) as wire:
            sent = 0
            try:
                wire.send(head() + b"X-Huge: ")
                while sent < 64:
                    wire.send(chunk)
                    sent += 1
            except OSError:
                pass  # the server closed: what it refused is not read
            try:
                outcomes.append((sent, wire.response().status))
            except NoResponse:
                outcomes.append((sent, None))
    grown = memory_kib(server.proc.pid, "VmRSS") - before
    assert all(sent < 64 for sent, _ in outcomes), outcomes
    assert {status for _, status in outcomes} <= {431, None}, outcomes
    assert grown < 8 * 1024, f"the resident set grew by {grown} KiB: {outcomes}"


def test_a_request_pipelined_after_a_head_refusal_is_never_served(server):
    huge = head(fields=[("X-Padding", "a" * HEADER_MAX_BYTES)]) + b"\r\n"
    with Wire(server.port) as wire:
        wire.send(huge + http_request(DISCOVER))
        first = wire.response()
        assert wire.closed_by_server(REPLY_TIMEOUT)
    assert first.status == 431


# -- time -----------------------------------------------------------------------------------


def test_a_connection_that_sends_nothing_gets_408_at_the_head_deadline(server):
    start = time.monotonic()
    with Wire(server.port) as wire:
        status, reason = refusal(wire)
        assert wire.closed_by_server(REPLY_TIMEOUT)
    assert status == 408
    assert reason == f"the request head did not arrive within {HEAD_TIMEOUT:g} s"
    assert HEAD_TIMEOUT * 0.9 <= time.monotonic() - start < HEAD_TIMEOUT + 5


def test_a_head_dripped_byte_by_byte_is_cut_at_the_deadline_on_one_clock(server):
    start = time.monotonic()
    text = head()
    with Wire(server.port) as wire:
        for byte in text:
            if wire.has_data(HEAD_TIMEOUT / 8):
                break
            try:
                wire.send(bytes([byte]))
            except OSError:
                break
        status, _ = refusal(wire)
    assert status == 408
    assert time.monotonic() - start < HEAD_TIMEOUT + 5


def test_two_hundred_slow_head_clients_are_all_disconnected(server):
    """The issue's measure: 200 slow-header clients were all still connected after 40 s."""
    clients = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(200)]
    try:
        for client in clients:
            client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        deadline = time.monotonic() + HEAD_TIMEOUT + 20
        open_clients = list(clients)
        while open_clients and time.monotonic() < deadline:
            for client in list(open_clients):
                client.settimeout(0.05)
                try:
                    data = client.recv(65_536)
                except TimeoutError:
                    continue
                except OSError:
                    data = b""
                if not data or b"\r\n\r\n" in data:
                    open_clients.remove(client)
            try:
                for client in open_clients:
                    client.sendall(b"X")
            except OSError:
                pass
        assert not open_clients, f"{len(open_clients)} of 200 slow heads still connected"
    finally:
        for client in clients:
            client.close()


def test_a_kept_alive_connection_serves_a_request_after_idling_within_the_keep_alive(server):
    with Wire(server.port) as wire:
        wire.send(http_request(DISCOVER))
        assert wire.response().status == 200
        time.sleep(HEAD_TIMEOUT * 1.5)  # past the head clock, within keep-alive (5 s)
        wire.send(http_request(message("serve-2", "server/discover")))
        second = wire.response()
    assert second.status == 200
    assert second.json()["id"] == "serve-2"


def test_a_response_s_head_and_body_arrive_in_one_segment(server):
    """uvicorn writes a response's head and body apart; the server sends them in one write,
    so a client's first read after each request holds the whole response (two writes put
    the head alone in most first reads)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=REPLY_TIMEOUT) as client:
        for number in range(30):
            client.sendall(http_request(message(f"one-{number}", "server/discover")))
            first = client.recv(1 << 20)
            head_bytes, _, body = first.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length: *(\d+)", head_bytes)
            assert length is not None, head_bytes
            assert len(body) == int(length.group(1)), f"request {number}: {first[:200]!r}"


# -- the authority of an absolute-form target -----------------------------------------------


def test_an_absolute_form_target_naming_another_host_is_refused_whatever_host_says(server):
    request = http_request(DISCOVER, path="http://evil.example/mcp", host=server.host)
    with Wire(server.port) as wire:
        wire.send(request)
        response = wire.response()
    assert response.status == 400
    assert "evil.example" not in response.body.decode()
    assert response.error()["error"]["code"] == -32600


def test_an_absolute_form_target_naming_this_server_is_served_whatever_host_says(server):
    request = http_request(DISCOVER, path=f"http://{server.host}/mcp", host="evil.example")
    with Wire(server.port) as wire:
        wire.send(request)
        response = wire.response()
    assert response.status == 200, response.body
    assert response.json()["id"] == "serve-1"


def test_django_pages_check_the_absolute_form_authority_too(server):
    with Wire(server.port) as wire:
        wire.send(
            f"GET http://evil.example/admin/login/ HTTP/1.1\r\nHost: {server.host}\r\n\r\n".encode()
        )
        response = wire.response()
    assert response.status == 400


# -- workers and the banner -----------------------------------------------------------------


def run_command(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "mcp_serve", *arguments],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_two_workers_over_the_embedded_defaults_are_refused_naming_the_settings(serve_env):
    result = run_command(serve_env, "--workers", "2", "--port", "1")
    assert result.returncode == 1
    assert "--workers 2 needs state shared between processes" in result.stderr
    assert "CACHES['default'] uses LocMemCache" in result.stderr
    assert "CHANNEL_LAYERS is not set" in result.stderr
    assert "Or serve with --workers 1." in result.stderr


def test_the_banner_names_the_parser_and_every_bound(served: ServerProcess):
    banner = served.log_tail(20_000)
    assert "sample_project.asgi:application on http://127.0.0.1:" in banner
    assert "httptools with bounded heads, 1 worker" in banner
    assert f"at most {HEADER_MAX_BYTES} bytes and {HEADER_MAX_COUNT} fields, within 1 s" in banner
    assert "at most 1 MiB, within 1 s" in banner
    assert "backlog 2048, 503 beyond 2048 per worker, keep-alive 5 s" in banner
    assert "2025-11-25 sessions: on, held in this process" in banner


def test_with_its_access_log_on_each_request_is_one_line_uvicorns_own(serve_env, tmp_path):
    """The README's command (no ``--no-access-log``): uvicorn's line for each request, written
    by the package's stand-in for its logger (``serving/access_log.py``), in order; the
    server stopped at once after the last answer writes the lines still waiting as it closes
    the connection."""
    server = start_server(
        "mcp_serve",
        serve_env,
        tmp_path,
        command=lambda port: [sys.executable, "manage.py", "mcp_serve", "--port", str(port)],
    )
    try:
        with Wire(server.port) as wire:
            for _ in range(3):
                wire.send(http_request(DISCOVER))
                assert wire.response().status == 200
            wire.send(head("/mcp?x={y}") + b"Content-Length: 0\r\n\r\n")
            refused = wire.response().status
    finally:
        server.stop()
    lines = [line for line in server.log_tail(50_000).splitlines() if '"POST /mcp' in line]
    client = r"INFO:     127\.0\.0\.1:\d+ - "
    expected = [client + r'"POST /mcp HTTP/1\.1" 200 OK'] * 3
    phrase = HTTPStatus(refused).phrase
    expected.append(client + rf'"POST /mcp\?x=\{{y\}} HTTP/1\.1" {refused} {phrase}')
    assert len(lines) == 4, server.log_tail()
    for line, pattern in zip(lines, expected, strict=True):
        assert re.fullmatch(pattern, line), line


def test_two_workers_with_redis_as_cache_and_channel_layer_serve(redis_url, tmp_path: Path):
    env = server_env(tmp_path)
    env["BEAMMCP_TEST_REDIS_URL"] = redis_url
    server = ServerProcess("mcp_serve", env, tmp_path, workers=2)
    try:
        server.wait_ready()
        for number in range(40):
            with Wire(server.port) as wire:
                wire.send(http_request(message(f"w-{number}", "server/discover"), close=True))
                response = wire.response()
                assert response.status == 200, response.body
        # Sessions are held by one process: with several workers every one refuses to open
        # any, by name, rather than answer a session's later request 404 on another worker.
        initialize = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
        }
        for _ in range(4):
            refused = post(server.port, initialize, drop=["MCP-Protocol-Version", "Mcp-Method"])
            assert refused.status == 404
            assert refused.json()["error"]["code"] == -32601
        workers = server.worker_pids()
    finally:
        server.stop()
    banner = server.log_tail(20_000)
    assert "httptools with bounded heads, 2 workers" in banner
    assert "2025-11-25 sessions: off with 2 workers" in banner
    assert "set SESSION_CACHE to share them" in banner
    assert len(workers) == 2, server.log_tail()


def test_two_workers_sharing_sessions_in_redis_serve_a_session_on_either(redis_url, tmp_path):
    """With ``SESSION_CACHE``, ``mcp_serve --workers 2`` serves 2025-11-25 sessions: each
    request of one session on a connection of its own, so the kernel spreads them over both
    workers, and every one is served in the session."""
    env = server_env(tmp_path)
    env["BEAMMCP_TEST_REDIS_URL"] = redis_url.rsplit("/", 1)[0] + "/4"
    env["BEAMMCP_TEST_SHARED_SESSIONS"] = "1"
    server = ServerProcess("mcp_serve", env, tmp_path, workers=2)
    try:
        server.wait_ready()
        initialize = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
        }
        opened = post(server.port, initialize, drop=["MCP-Protocol-Version", "Mcp-Method"])
        assert opened.status == 200, opened.body
        session = [("Mcp-Session-Id", opened.header("mcp-session-id") or "")]
        session.append(("MCP-Protocol-Version", "2025-11-25"))
        for number in range(20):
            ping = {"jsonrpc": "2.0", "id": number, "method": "ping"}
            with Wire(server.port) as wire:
                wire.send(
                    http_request(
                        ping, drop=["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"], add=session
                    )
                )
                answered = wire.response()
            assert answered.status == 200 and answered.json()["result"] == {}, answered.body
    finally:
        server.stop()
    assert "2025-11-25 sessions: on, shared by every worker in the Redis of CACHES['default']" in (
        server.log_tail(20_000)
    )


@pytest.mark.parametrize("flag", ["--workers", "--backlog", "--limit-concurrency"])
def test_a_count_below_one_is_refused_naming_the_option(serve_env, flag):
    result = run_command(serve_env, flag, "0", "--port", "1")
    assert result.returncode == 1
    assert f"{flag} must be at least 1" in result.stderr


def test_a_catalog_fault_stops_the_server_before_it_listens(serve_env):
    """The system checks run first, as for runserver and mcp_stdio."""
    env = {
        **serve_env,
        "DJANGO_SETTINGS_MODULE": "tests.stdio_settings",
        "BEAMMCP_TEST_CATALOG": "tests.broken_catalog.catalog",
    }
    result = run_command(env, "--port", "1")
    assert result.returncode == 1
    assert "SystemCheckError" in result.stderr
    assert "beammcp.E0" in result.stderr
    assert "beammcp-django:" not in result.stdout


def test_a_concurrency_limit_beyond_the_open_file_limit_is_refused_naming_both(serve_env):
    """The command raises its soft open-file limit to fit the connections it will take, up to
    the hard limit; past that it refuses rather than fail accepting under load."""
    result = run_command(serve_env, "--limit-concurrency", "1000000000", "--port", "1")
    assert result.returncode == 1
    assert "below --limit-concurrency 1000000000" in result.stderr
