"""Real ASGI servers in subprocesses, and a raw HTTP/1.1 client with a bound on every wait.

``ServerProcess`` starts uvicorn, daphne or ``manage.py runserver`` on 127.0.0.1 and a free
port, waits with a bounded poll until that process listens on it and kills the process in
``stop()``. ``Wire``
is one TCP connection: the test writes exact bytes (duplicate headers, chunked framing, a
drip, a lying Content-Length, pipelined requests) and reads whole responses, each within a
deadline. Nothing here can block longer than the timeout it was given.

Imported as ``tests.http.mcphttp_support`` by ``tests/http`` and ``tests/interop``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.migrated import migrated_database_url
from tests.support import (  # noqa: F401 - the HTTP tests import these from here
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN,
    REPO_ROOT,
    manage,
    message,
    meta,
)

SETTINGS = "tests.http_settings"
# Debian's redis-server (tests/run.sh installs it), for the tests that share state across
# worker processes; they are skipped without it.
REDIS = shutil.which("redis-server")
ROUTED_APP = "sample_project.asgi:application"
PLAIN_APP = "tests.http.mcphttp_app.plain_asgi:application"
# mcp_serve is the package's main command (uvicorn, httptools with bounded heads); uvicorn is
# uvicorn's own command line with h11; daphne is what runserver serves through.
SERVER_KINDS = ("mcp_serve", "daphne")

META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
MAX_BODY = 1_048_576
# The body deadline the servers run with (BEAMMCP_TEST_BODY_TIMEOUT), in seconds.
BODY_TIMEOUT = 1.0

# Kept in step with tests/faultapp/mcp.py and tests/http/mcphttp_app/hooks.py.
FAULT_SECRET = "fault-secret-7f3a9c-do-not-leak"
HOOK_SECRET = "mcphttp-hook-secret-51d0e2-do-not-leak"
RESOURCE_METADATA = (
    'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'
)

# A reply from a local server takes milliseconds; no single wait may exceed these.
REPLY_TIMEOUT = 10.0
START_TIMEOUT = 30.0


class NoResponse(AssertionError):
    """The server sent no (complete) response in time, or closed the connection first."""


# -- servers ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# What uvicorn and Twisted (daphne) both print when the port is taken.
ADDRESS_IN_USE = "Address already in use"


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process under it (runserver's reloader serves from a child)."""
    tree, index = [pid], 0
    while index < len(tree):
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{tree[index]}/task").iterdir():
                tree += [int(child) for child in (task / "children").read_text().split()]
        index += 1
    return tree


def listens(pid: int, port: int) -> bool:
    """Whether ``pid`` or a process under it holds a listening TCP socket on ``port``: the
    kernel's socket table (/proc/net/tcp, tcp6) names the socket's inode, and the process's
    descriptors show whether it holds it."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    for process in process_tree(pid):
        with contextlib.suppress(OSError):
            for descriptor in Path(f"/proc/{process}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if str(descriptor.readlink()) in inodes:
                        return True
    return False


def server_env(directory: Path, database_url: str | None = None) -> dict[str, str]:
    """The servers' environment: test settings, a migrated database (``database_url``,
    migrated here, or by default a copy of the run's migrated template, SQLite or PostgreSQL
    as the run uses: tests/databases.py), a 1-s deadline."""
    records = directory / "records"
    records.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": SETTINGS,
            "BEAMMCP_TEST_BODY_TIMEOUT": str(BODY_TIMEOUT),
            "MCPHTTP_RECORD_DIR": str(records),
            "PYTHONUNBUFFERED": "1",
        }
    )
    for name in ("BEAMMCP_TEST_CATALOG", "BEAMMCP_ALLOWED_ORIGINS", "DJANGO_ALLOWED_HOSTS"):
        env.pop(name, None)
    if database_url is None:
        env["DATABASE_URL"] = migrated_database_url(directory, env)
    else:
        env["DATABASE_URL"] = database_url
        manage(env, "migrate", "--noinput", "-v", "0")
    return env


def shared_sessions_env(directory: Path, redis_url: str) -> dict[str, str]:
    """``server_env`` with 2025-11-25 sessions and the channel layer in the Redis at
    ``redis_url`` (``SESSION_CACHE``: tests/http_settings.py)."""
    return {
        **server_env(directory),
        "BEAMMCP_TEST_REDIS_URL": redis_url,
        "BEAMMCP_TEST_SHARED_SESSIONS": "1",
    }


def server_command(
    kind: str, port: int, app: str = ROUTED_APP, backlog: int | None = None, workers: int = 1
) -> list[str]:
    """The command line of one server; ``backlog`` sets its listen queue (daphne has no option
    for it, so it then listens through a Twisted endpoint string that carries one)."""
    if kind == "uvicorn":
        return [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            # h11, uvicorn's pure-Python parser, whatever else is installed: with httptools
            # (bench/) uvicorn itself answers a few malformed requests (an unknown method,
            # bytes after a short Content-Length) with its own 400 before the app runs.
            "--http",
            "h11",
            *(("--backlog", str(backlog)) if backlog else ()),
        ]
    if kind == "mcp_serve":
        if app != ROUTED_APP:
            raise ValueError("mcp_serve serves the project's ASGI_APPLICATION only")
        return [
            sys.executable,
            "manage.py",
            "mcp_serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--workers",
            str(workers),
            *(("--backlog", str(backlog)) if backlog else ()),
        ]
    if kind == "daphne":
        if backlog:
            endpoint = f"tcp:port={port}:interface=127.0.0.1:backlog={backlog}"
            return [sys.executable, "-m", "daphne", "-e", endpoint, app]
        return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), app]
    if kind == "runserver":
        return [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    raise ValueError(kind)


class ServerProcess:
    """One server process; its output goes to a log file (no pipe can fill and stall it)."""

    # Whether the test named the port (a documented command line, a started process): if
    # so, a port lost to another process is a failure, not a reason to pick another.
    port_was_given = True

    def __init__(
        self,
        kind: str,
        env: Mapping[str, str],
        log_dir: Path,
        app: str = ROUTED_APP,
        backlog: int | None = None,
        workers: int = 1,
        command: Callable[[int], list[str]] | None = None,
        port: int | None = None,
    ):
        """``command``, when given, builds the command line from the port instead (a
        command a documentation page spells out); ``port``, when given, is the port (one
        the environment already names, as a resource URL)."""
        self.kind = kind
        self.records = Path(env["MCPHTTP_RECORD_DIR"])
        self.port_was_given = port is not None
        self.argv = command or (lambda port: server_command(kind, port, app, backlog, workers))
        self.env, self.log_dir = dict(env), log_dir
        self.launch(port or free_port())

    def launch(self, port: int) -> None:
        self.port = port
        self.log_path = self.log_dir / f"{self.kind}-{port}.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                self.argv(port),
                cwd=REPO_ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @classmethod
    def attach(
        cls, kind: str, proc: subprocess.Popen[bytes], port: int, log_path: Path
    ) -> ServerProcess:
        """A process the test started itself (a documented command line), watched the same
        way: its port polled, its log read, stopped in ``stop()``."""
        server = cls.__new__(cls)
        server.kind, server.proc, server.port, server.log_path = kind, proc, port, log_path
        return server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, size: int = 3000) -> str:
        try:
            return self.log_path.read_bytes()[-size:].decode(errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def worker_pids(self) -> set[int]:
        """The worker processes uvicorn spawned under this one (multiprocessing's own
        resource tracker left out)."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        workers = set()
        for child in children:
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"spawn_main" in command:
                    workers.add(int(child))
        return workers

    def wait_ready(self, timeout: float = START_TIMEOUT) -> ServerProcess:
        """Poll until this process (or one it started) listens on the port; fail if it dies
        first. A port that merely accepts a connection is not enough: a free port picked
        here can be taken by another test's server (or another run's) before this one binds
        it, and then the test would talk to that one. A port this process lost that way is
        picked again, when the test did not name it."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                if not self.port_was_given and ADDRESS_IN_USE in self.log_tail():
                    self.launch(free_port())
                    continue
                raise AssertionError(
                    f"{self.kind} exited with {self.proc.returncode}:\n{self.log_tail()}"
                )
            if listens(self.proc.pid, self.port):
                return self
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.kind} did not listen within {timeout}s:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        """Teardown: SIGTERM, a short grace, then SIGKILL; never leaves the process behind."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def start_server(
    kind: str,
    env: Mapping[str, str],
    log_dir: Path,
    app: str = ROUTED_APP,
    backlog: int | None = None,
    command: Callable[[int], list[str]] | None = None,
    port: int | None = None,
) -> ServerProcess:
    server = ServerProcess(kind, env, log_dir, app, backlog, command=command, port=port)
    try:
        return server.wait_ready()
    except BaseException:
        server.stop()
        raise


@contextlib.contextmanager
def mcp_serve_pair(env: Mapping[str, str], log_dir: Path) -> Iterator[list[ServerProcess]]:
    """Two ``mcp_serve`` processes on one environment (one database), stopped on leaving:
    what one worker wrote, the other must see."""
    with contextlib.ExitStack() as stack:
        servers = []
        for _ in range(2):
            server = start_server("mcp_serve", env, log_dir)
            stack.callback(server.stop)
            servers.append(server)
        yield servers


# -- messages -----------------------------------------------------------------------------


def encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def sentinel(value: str) -> str:
    """The ``=?base64?...?=`` form of a header value."""
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


NAMED_BY = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension's requests name their task.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def mcp_headers(value: Any) -> list[tuple[str, str]]:
    """The headers a correct client sends with this JSON-RPC message (a raw body, or none:
    the content headers alone)."""
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]
    if not isinstance(value, dict):
        return headers
    params = value.get("params") if isinstance(value.get("params"), dict) else {}
    request_meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = request_meta.get(META_PROTOCOL_VERSION, MODERN)
    headers.append(("MCP-Protocol-Version", str(version)))
    if isinstance(value.get("method"), str):
        headers.append(("Mcp-Method", value["method"]))
        named = NAMED_BY.get(value["method"])
        if named is not None and isinstance(params.get(named), str):
            headers.append(("Mcp-Name", params[named]))
    return headers


def http_request(
    value: Any = None,
    *,
    body: bytes | None = None,
    method: str = "POST",
    path: str = "/mcp",
    host: str | None = "127.0.0.1",
    drop: Iterable[str] = (),
    replace: Mapping[str, str] | None = None,
    add: Iterable[tuple[str, str]] = (),
    content_length: int | bool | None = True,
    close: bool = False,
) -> bytes:
    """The exact bytes of one HTTP/1.1 request.

    ``value`` is encoded as the body (unless ``body`` is given) and chooses the MCP headers;
    ``drop`` removes headers by name, ``replace`` swaps a header's value, ``add`` appends
    headers (a repeat stays a repeat). ``content_length``: True for the real length, an int
    to declare a different one, False/None to send none.
    """
    if body is None:
        body = b"" if value is None else encode(value)
    dropped = {name.lower() for name in drop}
    replaced = {name.lower(): text for name, text in (replace or {}).items()}
    headers: list[tuple[str, str]] = []
    if host is not None:
        headers.append(("Host", host))
    headers.extend(mcp_headers(value))
    headers = [
        (name, replaced.pop(name.lower(), text))
        for name, text in headers
        if name.lower() not in dropped
    ]
    headers.extend(replaced.items())
    headers.extend(add)
    if content_length is True:
        headers.append(("Content-Length", str(len(body))))
    elif content_length is not False and content_length is not None:
        headers.append(("Content-Length", str(content_length)))
    if close:
        headers.append(("Connection", "close"))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)
    return head.encode("latin-1") + b"\r\n" + body


# -- responses ----------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    reason: str
    headers: list[tuple[str, str]]  # names lower-cased, in arrival order
    body: bytes

    def header(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def all(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name.lower()]

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    @property
    def says_close(self) -> bool:
        tokens = ",".join(self.all("connection")).lower().split(",")
        return "close" in {token.strip() for token in tokens}

    def json(self) -> Any:
        assert self.content_type == "application/json", (self.status, self.headers, self.body)
        return json.loads(self.body)

    def events(self) -> list[dict[str, Any]]:
        """The JSON data of each SSE event, in order (every event must be ``message``); a
        comment, or a 2025-11-25 session's priming event (an id, ``retry``, empty data), is
        no message."""
        assert self.content_type == "text/event-stream", (self.status, self.headers)
        events = []
        for block in self.body.decode().split("\n\n"):
            if not block.strip() or block.startswith(":"):
                continue
            lines = block.split("\n")
            if "data:" in lines and not any(line.startswith("data: ") for line in lines):
                continue  # the priming event
            names = [line[6:].strip() for line in lines if line.startswith("event:")]
            data = "\n".join(line[5:].lstrip(" ") for line in lines if line.startswith("data:"))
            assert names in ([], ["message"]), block
            events.append(json.loads(data))
        return events

    def error(self) -> dict[str, Any]:
        payload = self.json()
        assert "error" in payload, payload
        return payload


class Wire:
    """One client connection with exact control over the bytes written."""

    def __init__(
        self, port: int, timeout: float = REPLY_TIMEOUT, receive_buffer: int | None = None
    ) -> None:
        """``receive_buffer`` sets SO_RCVBUF before connecting, so the window the client
        offers stays that small (a reader that stops reading fills it quickly)."""
        if receive_buffer is None:
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            self.sock.settimeout(timeout)
            self.sock.connect(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray()
        self.eof = False

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def local_port(self) -> int:
        return self.sock.getsockname()[1]

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def _fill(self, deadline: float) -> None:
        """Receive more bytes before ``deadline``; NoResponse on timeout or EOF."""
        remaining = deadline - time.monotonic()
        if self.eof:
            raise NoResponse("the server closed the connection")
        if remaining <= 0:
            raise NoResponse("no complete response before the deadline")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(65_536)
        except TimeoutError:
            raise NoResponse("no complete response before the deadline") from None
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
            raise NoResponse(f"the server closed the connection ({bytes(self.buffer[:200])!r})")
        self.buffer += chunk

    def _line(self, deadline: float) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            self._fill(deadline)
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    def _exactly(self, size: int, deadline: float) -> bytes:
        while len(self.buffer) < size:
            self._fill(deadline)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def has_data(self, timeout: float) -> bool:
        """True when response bytes (or EOF) are waiting, within ``timeout``."""
        if self.buffer or self.eof:
            return True
        readable, _, _ = select.select([self.sock], [], [], timeout)
        return bool(readable)

    def response(self, timeout: float = REPLY_TIMEOUT) -> Response:
        """Read one whole response (Content-Length, chunked, or up to EOF)."""
        deadline = time.monotonic() + timeout
        status_line = self._line(deadline)
        version, _, rest = status_line.decode("latin-1").partition(" ")
        assert version.startswith("HTTP/1."), status_line
        code, _, reason = rest.partition(" ")
        headers: list[tuple[str, str]] = []
        while line := self._line(deadline):
            name, _, value = line.decode("latin-1").partition(":")
            headers.append((name.strip().lower(), value.strip()))
        response = Response(int(code), reason, headers, b"")
        status = response.status
        if 100 <= status < 200 or status in (204, 304):
            return response
        if (response.header("transfer-encoding") or "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int(self._line(deadline).split(b";")[0], 16)
                if size == 0:
                    while self._line(deadline):  # trailers
                        pass
                    break
                body += self._exactly(size, deadline)
                assert self._exactly(2, deadline) == b"\r\n"
            response.body = bytes(body)
        elif (length := response.header("content-length")) is not None:
            response.body = self._exactly(int(length), deadline)
        else:
            while not self.eof:
                try:
                    self._fill(deadline)
                except NoResponse:
                    if not self.eof:
                        raise
            response.body = bytes(self.buffer)
            self.buffer.clear()
        return response

    def closed_by_server(self, timeout: float) -> bool:
        """True when the server closes the connection (EOF) within ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            try:
                self._fill(deadline)
            except NoResponse:
                return self.eof
        return True


def read_events(wire: Wire, want: int, timeout: float) -> list[dict]:
    """The JSON messages of the SSE stream so far, reading until ``want`` arrived."""
    received = bytearray()
    events: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(events) < want and time.monotonic() < deadline:
        readable, _, _ = select.select([wire.sock], [], [], 0.2)
        if not readable:
            continue
        chunk = wire.sock.recv(65_536)
        if not chunk:
            break
        received += chunk
        events = [
            json.loads(line[len("data: ") :])
            for line in received.decode("utf-8", "replace").splitlines()
            if line.startswith("data: ")
        ]
    return events


def exchange(port: int, data: bytes, timeout: float = REPLY_TIMEOUT) -> Response:
    """Send one request on a fresh connection and read its response. A server that refuses
    before the body and closes may do so while the rest of a large body is still being
    written: the write fails (a broken pipe), and the answer it sent is read all the same."""
    with Wire(port, timeout) as wire:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            wire.send(data)
        return wire.response(timeout)


def post(port: int, value: Any, timeout: float = REPLY_TIMEOUT, **options: Any) -> Response:
    """POST ``value`` with the headers a correct client sends (altered by ``options``)."""
    return exchange(port, http_request(value, **options), timeout)


def discover_works(port: int) -> bool:
    response = post(port, message("still-serving", "server/discover"))
    return response.status == 200 and response.json()["result"]["resultType"] == "complete"


def wait_for_file(path: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.02)
    return path.exists()


# -- marks --------------------------------------------------------------------------------


def servers(*, daphne: Any = ()) -> Any:
    """Parametrize the ``server`` fixture over both servers, with marks for daphne's run."""
    return pytest.mark.parametrize(
        "server", ["mcp_serve", pytest.param("daphne", marks=daphne)], indirect=True
    )


def daphne_reads_the_body_first() -> Any:
    return pytest.mark.xfail(
        strict=True,
        raises=NoResponse,
        reason=(
            "daphne (Twisted's http.Request) buffers the whole request body before it calls "
            "the ASGI application, so the endpoint cannot answer before the body arrives; "
            "the pre-body guarantees hold under uvicorn only"
        ),
    )


def close_mid_call(
    server: ServerProcess, *, streamed: bool, seconds: float = 30, within: float = 5.0
) -> str:
    """Start ``mcphttp_vigil``, close the socket while it runs, and return what it did:
    ``"cancelled"`` when it saw the cancellation ``within`` seconds, else ``"still running"``."""
    token = f"vigil-{server.kind}-{os.getpid()}-{time.monotonic_ns()}"
    extra = {"progressToken": token} if streamed else {}
    call = message(
        token,
        "tools/call",
        {"name": "mcphttp_vigil", "arguments": {"token": token, "seconds": seconds}},
        **extra,
    )
    with Wire(server.port) as wire:
        wire.send(http_request(call))
        assert wait_for_file(server.records / f"{token}.started", REPLY_TIMEOUT), "never started"
        if streamed:
            # The progress report opened the stream: the status line and headers arrive.
            assert wire.has_data(REPLY_TIMEOUT), "the stream never opened"
            head = wire.sock.recv(65_536)
            assert b"text/event-stream" in head.lower(), head
        else:
            assert not wire.has_data(0.05), "the server answered a call that should still run"
    if wait_for_file(server.records / f"{token}.cancelled", within):
        assert not (server.records / f"{token}.finished").exists()
        return "cancelled"
    return "still running"


class RedisServer:
    """A redis-server of its own on a free port, with no persistence and ``options`` added
    (a memory limit, an eviction policy): started, stopped and started again on the same
    port, as an outage and its end look to the processes using it."""

    def __init__(self, workdir: Path, *options: str) -> None:
        if REDIS is None:
            pytest.skip("no redis-server binary on this machine")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.command = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self.command += ["--appendonly", "no", "--dir", str(workdir), *options]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        """Start it and wait until it answers PING."""
        process = self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"redis-server exited with {process.returncode} (port taken?)")
            if not listens(process.pid, self.port):  # another process's port answers PING
                time.sleep(0.05)
                continue
            try:
                with Wire(self.port, timeout=0.5) as wire:
                    wire.send(b"PING\r\n")
                    if wire.has_data(0.5):
                        return self
            except OSError:
                time.sleep(0.1)
        pytest.fail("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def redis_server(workdir: Path, *options: str) -> Iterator[str]:
    """A ``RedisServer`` running until the block ends: its URL."""
    server = RedisServer(workdir, *options)
    try:
        yield server.start().url
    finally:
        server.stop()
