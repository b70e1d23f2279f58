"""A fuzz run of the MCP endpoint through real uvicorn and daphne processes.

Each case is one raw HTTP/1.1 request on a fresh connection, built by a seeded generator
(``THREAT_FUZZ_SEED`` replaces the seed; a failure names the seed and the case): JSON-RPC
messages with random, huge, unicode and control-character method names, ids, params and
``_meta``; bodies of mutated JSON or random bytes; headers dropped, repeated with other
values, filled with junk (``Content-Type``, ``Accept``, ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name``, ``Origin``, ``Host``, ``Content-Length`` that lies,
``Transfer-Encoding``); requests cut off mid-line, mid-headers or mid-body.

Every case must end in one well-formed HTTP response or a clean close (the server closes
without a byte). A response has a status docs/transports.md allows; a JSON body is one
JSON-RPC response whose error has an integer code and a string message matching the status;
no response carries traceback text, or a marker planted in the request wherever the server
has no reason to repeat it (method names, header names and values, tool and prompt names,
argument keys, random bodies; never ids, echo texts or URIs, which are answered back by
design). After the run the server is alive, logged no traceback, and serves a tools/call.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import socket
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.http.mcphttp_support import (
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN,
    NoResponse,
    Response,
    ServerProcess,
    Wire,
    message,
    post,
)

pytestmark = pytest.mark.slow

CASES_PER_SERVER = 1000
SEED = int(os.environ.get("THREAT_FUZZ_SEED", "20261129"))
# '~' and '!' are header-name characters but outside every set of names the server repeats
# in its messages, so the marker is never quoted by design.
MARKER = "~!fuzz-marker-3c9e1f!~"
TRACEBACK_TEXT = (b"Traceback", b'File "')

# docs/transports.md, "The order of checks, and every status": what a JSON-RPC error code
# may be answered with, and the statuses whose body is empty.
STATUS_OF_CODE = {
    -32700: {400},
    -32600: {400, 403, 408, 411, 413, 415},
    -32602: {400},
    -32020: {400},
    -32021: {400},
    -32022: {400},
    -32601: {404},
    -32603: {500},
}
EMPTY_BODY_STATUSES = {202, 401, 403, 405}
# The ASGI server's own refusal of a request it cannot parse as HTTP/1.1 (uvicorn's
# "Invalid HTTP request received.", Twisted's "Bad Request"), or, under mcp_serve, of a head
# past its bounds (431, naming which): before the endpoint runs.
SERVER_FRAMING_STATUSES = {400, 431}

METHODS = (
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)
# Methods this revision does not serve (404) and notifications (202); never
# subscriptions/listen, whose stream stays open by design.
OTHER_METHODS = (
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "notifications/cancelled",
    "notifications/initialized",
)
ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz/_-.",
    "".join(chr(code) for code in range(0x20)) + "\x7f",
    "\u00e9\u00fc\u00df\u00a0\u00ff",
    "\u2028\u2029\u200b\ufeff\ufffd\u4e2d\u0627",
    "\U0001f600\U0001f680\U00010348",
    "\ud800\udfff",  # lone surrogates: invalid UTF-8 once encoded
    "\"\\{}[]:,'",
)


# What a case may change about a correct request; each case draws a few (none a fifth of
# the time), so most requests reach the protocol core and each fault is met often alone.
MUTATIONS = {
    "method": 3,
    "id": 2,
    "_meta": 2,
    "envelope": 1,
    "argument key": 2,
    "body": 2,
    "mirror header": 3,
    "extra header": 3,
    "framing": 3,
    "request line": 1,
    "cut short": 1,
    "abandon": 1,
}
MUTATION_COUNTS = (0, 1, 1, 2, 3)


@dataclass
class Case:
    """One request: what was changed, its bytes, and how the client ends it."""

    number: int
    mutations: frozenset[str]
    data: bytes = b""
    # False when the server cannot have the whole request: the client then half-closes.
    complete: bool = True
    notes: list[str] = field(default_factory=list)

    def has(self, mutation: str) -> bool:
        return mutation in self.mutations

    def describe(self) -> str:
        notes = ", ".join(sorted(self.mutations) + self.notes) or "no mutation"
        return f"case {self.number} (seed {SEED}; {notes}): {self.data[:600]!r}"


class RequestFuzzer:
    """Random requests from one seed: a correct request with a few mutations drawn."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def chance(self, probability: float) -> bool:
        return self.random.random() < probability

    # -- text -----------------------------------------------------------------------------

    def text(self, longest: int = 40) -> str:
        """Random text from a few alphabets: controls, separators, astral, lone surrogates."""
        pick = self.random.choice
        alphabets = self.random.sample(ALPHABETS, self.random.randint(1, 3))
        return "".join(pick(pick(alphabets)) for _ in range(self.random.randint(0, longest)))

    def safe_text(self) -> str:
        """Text that may be answered back by design: never the marker."""
        return self.text().replace("~!", "~")

    def marked(self) -> str:
        return f"{self.safe_text()}{MARKER}{self.safe_text()}"

    def huge(self) -> str:
        unit = self.random.choice(("m", "\u00e9", "\U0001f600", MARKER))
        return unit * self.random.randint(1_000, 200_000)

    def junk_bytes(self, longest: int) -> bytes:
        return self.random.randbytes(self.random.randint(0, longest))

    # -- the JSON-RPC message -------------------------------------------------------------

    def method(self, case: Case) -> Any:
        if not case.has("method"):
            return self.random.choice(METHODS)
        return self.random.choice(
            (*OTHER_METHODS, self.marked(), self.marked(), self.huge(), "", 17, None, ["ping"])
        )

    def arguments(self, tool: str, case: Case) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        if tool == "echo":
            arguments = {"text": self.safe_text()}
        elif tool == "get_forecast":
            arguments = {"city": self.random.choice(("oslo", "lisbon", self.safe_text()))}
            arguments["days"] = self.random.choice((1, 3, 7, 0, 99, "3", None))
        elif tool == "mcphttp_region":
            arguments = {"region": self.safe_text(), "count": self.random.randint(-5, 5)}
        if case.has("argument key"):
            arguments[self.marked()] = self.random.choice((1, "x", None, [], {}))
        return arguments

    def params(self, method: Any, case: Case) -> dict[str, Any]:
        if method == "tools/call":
            tool = self.random.choice(
                ("echo", "echo", "get_forecast", "mcphttp_region", "fault_progress", self.marked())
            )
            return {"name": tool, "arguments": self.arguments(tool, case)}
        if method == "resources/read":
            uri = self.random.choice(
                (
                    "weather://stations",
                    "weather://observations/oslo",
                    f"weather://observations/{self.safe_text()}",
                    self.safe_text(),
                )
            )
            return {"uri": uri}
        if method == "prompts/get":
            name = self.random.choice(("forecast_briefing", "forecast_briefing", self.marked()))
            return {"name": name, "arguments": {"city": self.safe_text()}}
        if method == "completion/complete":
            return {
                "ref": {"type": "ref/prompt", "name": "forecast_briefing"},
                "argument": {"name": "city", "value": self.safe_text()},
            }
        if isinstance(method, str) and method.endswith("/list") and self.chance(0.2):
            return {"cursor": self.marked()}
        return {}

    def meta(self, method: Any, case: Case) -> Any:
        value: dict[str, Any] = {META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: {}}
        if method == "tools/call" and self.chance(0.3):
            value["progressToken"] = self.random.choice((self.safe_text(), 7))
        if not case.has("_meta"):
            return value
        mutation = self.random.randrange(6)
        if mutation == 0:
            value[META_PROTOCOL_VERSION] = self.random.choice(
                (self.marked(), "2025-11-25", "v999", 2026, None)
            )
        elif mutation == 1:
            value[META_CLIENT_CAPABILITIES] = self.random.choice(([], "all", None))
        elif mutation == 2:
            value[META_LOG_LEVEL] = self.random.choice(("debug", self.marked()))
        elif mutation == 3:
            value["progressToken"] = self.random.choice(({"no": 1}, 1.5, [], None))
        elif mutation == 4:
            del value[self.random.choice(list(value))]
        else:
            return self.random.choice((None, [], self.marked()))
        return value

    def request_id(self, case: Case) -> Any:
        if case.has("id"):
            return self.random.choice((None, 1.5, True, [], {}, 10**40))
        return self.random.choice((self.random.randint(-(2**63), 2**63), self.safe_text()))

    def message(self, case: Case) -> Any:
        method = self.method(case)
        value: dict[str, Any] = {"jsonrpc": "2.0", "id": self.request_id(case), "method": method}
        params = self.params(method, case)
        params["_meta"] = self.meta(method, case)
        value["params"] = params
        if not case.has("envelope"):
            return value
        mutation = self.random.randrange(7)
        case.notes.append(f"envelope {mutation}")
        if mutation == 0:
            value["jsonrpc"] = self.random.choice(("1.0", 2.0, self.marked()))
        elif mutation == 1:
            value["params"] = self.random.choice(([], self.safe_text(), None))
        elif mutation == 2:
            value["_meta"] = {}
        elif mutation == 3:
            del value["id"]  # a notification
        elif mutation == 4:
            value[self.marked()] = self.nested(self.random.randint(1, 80))
        elif mutation == 5:
            value = self.random.choice(([value], [], self.safe_text(), 42, None))
        else:
            value = self.nested(self.random.randint(60, 200))
        return value

    def nested(self, depth: int) -> Any:
        value: Any = self.safe_text()
        for level in range(depth):
            value = [value] if level % 2 else {"k": value}
        return value

    # -- the body -------------------------------------------------------------------------

    def body(self, value: Any, case: Case) -> bytes:
        body = json.dumps(value, ensure_ascii=self.chance(0.5)).encode("utf-8", "surrogatepass")
        if not case.has("body"):
            return body
        mutation = self.random.randrange(7)
        case.notes.append(f"body {mutation}")
        if mutation == 0:
            return body[: self.random.randrange(len(body))]
        if mutation == 1:
            at = self.random.randrange(len(body) + 1)
            return body[:at] + self.junk_bytes(8) + body[at:]
        if mutation == 2:
            return body.replace(b'{"jsonrpc"', b'{"jsonrpc": "2.0", "jsonrpc"', 1)
        if mutation == 3:
            return body.replace(b'"2.0"', b"NaN", 1)
        if mutation == 4:
            return b"\xef\xbb\xbf" + body
        if mutation == 5:
            return b" \r\n\t" * self.random.randint(0, 3)
        return self.junk_bytes(400) + MARKER.encode() + self.junk_bytes(400)

    # -- the head -------------------------------------------------------------------------

    def mirror_headers(self, value: Any) -> list[tuple[bytes, bytes]]:
        """What a correct client sends with this message (values as UTF-8 bytes)."""
        headers = [
            (b"Host", b"127.0.0.1"),
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json, text/event-stream"),
            (b"MCP-Protocol-Version", MODERN.encode()),
        ]
        if not isinstance(value, dict) or not isinstance(value.get("method"), str):
            return headers
        method = value["method"]
        # A huge method mirrored whole would make the head too long for the server to parse.
        headers.append((b"Mcp-Method", method[:4096].encode("utf-8", "surrogatepass")))
        params = value.get("params") if isinstance(value.get("params"), dict) else {}
        named = params.get("uri" if method == "resources/read" else "name")
        if isinstance(named, str):
            headers.append((b"Mcp-Name", header_value(named)))
        arguments = params.get("arguments")
        if isinstance(arguments, dict) and isinstance(arguments.get("region"), str):
            headers.append((b"Mcp-Param-Region", header_value(arguments["region"])))
        return headers

    def header_junk(self) -> bytes:
        return self.random.choice(
            (
                self.marked().encode("utf-8", "surrogatepass"),
                MARKER.encode(),
                self.junk_bytes(30).replace(b"\r", b"").replace(b"\n", b""),
                b"=?base64?" + self.marked().encode("utf-8", "surrogatepass") + b"?=",
                b"=?base64?fn5+?=",
                b"",
                MARKER.encode() * self.random.randint(50, 400),
            )
        )

    def extra_header(self) -> tuple[bytes, bytes]:
        marker = MARKER.encode()
        return self.random.choice(
            (
                (b"Origin", b"http://localhost:8000"),
                (b"Origin", b"https://evil.example"),
                (b"Origin", marker),
                (b"Host", self.random.choice((b"127.0.0.1", b"evil.example", marker))),
                (b"X-Forwarded-Host", marker),
                (b"Content-Type", self.random.choice((b"text/plain", marker))),
                (b"Accept", marker),
                (b"Mcp-Param-Region", marker),
                (b"Mcp-Name", marker),
                (b"Mcp-Method", marker),
                (b"MCP-Protocol-Version", self.random.choice((b"2025-11-25", marker))),
                (b"X-" + marker, self.header_junk()),
                (marker + b"-" + self.random.randbytes(4).hex().encode(), b"1"),
                (b"X Bad Name", marker),
                (b"\xc3\xa9t\xc3\xa9" + marker, b"1"),
            )
        )

    def headers(self, value: Any, case: Case) -> list[tuple[bytes, bytes]]:
        headers = self.mirror_headers(value)
        if case.has("mirror header"):
            at = self.random.randrange(len(headers))
            name, text = headers[at]
            mutation = self.random.randrange(3)
            case.notes.append(f"{('dropped', 'junk', 'repeated')[mutation]} {name.decode()}")
            if mutation == 0:
                del headers[at]
            elif mutation == 1:
                headers[at] = (name, self.header_junk())
            else:
                headers.insert(at + 1, (name, self.random.choice((text, self.header_junk()))))
        if case.has("extra header"):
            extras = [self.extra_header() for _ in range(self.random.randint(1, 4))]
            case.notes.extend(f"extra {name[:40]!r}" for name, _ in extras)
            headers.extend(extras)
        self.random.shuffle(headers)
        return headers

    def framing(self, body: bytes, case: Case) -> tuple[list[tuple[bytes, bytes]], bytes]:
        """Content-Length and Transfer-Encoding headers, and the body bytes actually sent."""
        length = str(len(body)).encode()
        if not case.has("framing"):
            return [(b"Content-Length", length)], body
        mutation = self.random.randrange(5)
        if mutation == 0:
            case.notes.append("no Content-Length")
            return [], body
        if mutation == 1:
            case.notes.append("short Content-Length")
            return [(b"Content-Length", str(self.random.randrange(len(body) + 1)).encode())], body
        case.complete = False
        if mutation == 2:
            case.notes.append("long Content-Length")
            declared = self.random.choice((len(body) + 1, len(body) + 500, 1_048_577, 10**20))
            return [(b"Content-Length", str(declared).encode())], body
        if mutation == 3:
            case.notes.append("odd Content-Length")
            odd = self.random.choice(
                (b"abc", b"-1", b"+5", b" 5", b"0x10", b"1e2", MARKER.encode())
            )
            pairs = [(b"Content-Length", odd)]
            if self.chance(0.5):
                pairs.append((b"Content-Length", self.random.choice((length, b"0"))))
            return pairs, body
        coding = self.random.choice((b"chunked", b"chunked", b"gzip", b"chunked, chunked"))
        case.notes.append(f"Transfer-Encoding {coding.decode()}")
        pairs = [(b"Transfer-Encoding", coding)]
        if self.chance(0.3):
            pairs.append((b"Content-Length", length))
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
        if coding == b"chunked" and self.chance(0.6):
            case.complete = True
        else:
            chunked = chunked[: self.random.randrange(len(chunked))]
        return pairs, chunked

    def request_line(self, case: Case) -> bytes:
        if not case.has("request line"):
            return b"POST /mcp HTTP/1.1\r\n"
        verb = self.random.choice((b"POST", b"GET", b"PUT", b"DELETE", b"OPTIONS", b"FUZZ"))
        target = self.random.choice((b"/mcp", b"/mcp?a=1", b"/mcp?x=" + MARKER.encode()))
        version = self.random.choice((b"HTTP/1.1", b"HTTP/1.0"))
        return b"%s %s %s\r\n" % (verb, target, version)

    def case(self, number: int) -> Case:
        drawn = self.random.sample(
            list(MUTATIONS),
            self.random.choice(MUTATION_COUNTS),
            counts=list(MUTATIONS.values()),
        )
        case = Case(number, frozenset(drawn))
        value = self.message(case)
        body = self.body(value, case)
        framing, payload = self.framing(body, case)
        head = self.request_line(case) + b"".join(
            name + b": " + text + b"\r\n" for name, text in self.headers(value, case) + framing
        )
        case.data = head + b"\r\n" + payload
        if case.has("cut short") or case.has("abandon"):
            case.complete = False
            case.data = case.data[: self.random.randrange(1, len(case.data))]
        return case


def header_value(text: str) -> bytes:
    """A value as a correct client writes it: plain printable ASCII as is, anything else in
    the ``=?base64?...?=`` form."""
    data = text.encode("utf-8", "surrogatepass")
    if all(0x20 <= byte <= 0x7E for byte in data):
        return data
    return b"=?base64?" + base64.b64encode(data) + b"?="


# -- running and judging ------------------------------------------------------------------


def run_case(port: int, case: Case) -> Response | None:
    """The server's response, or None for a clean close; NoResponse for anything else."""
    with Wire(port) as wire:
        with contextlib.suppress(OSError):  # the server may refuse and close before the end
            wire.send(case.data)
        if case.has("abandon"):
            return None
        if not case.complete:
            with contextlib.suppress(OSError):
                wire.sock.shutdown(socket.SHUT_WR)
        try:
            return wire.response()
        except NoResponse:
            if wire.eof and not wire.buffer:
                return None
            raise


def judge(response: Response) -> str:
    """Why ``response`` breaks the rules, or "" when it keeps them."""
    raw = "".join(f"{name}: {value}\n" for name, value in response.headers).encode("latin-1")
    raw += response.reason.encode("latin-1") + response.body
    if MARKER.encode() in raw:
        return "the response repeats the marker planted in the request"
    if any(text in raw for text in TRACEBACK_TEXT):
        return "the response carries traceback text"
    status = response.status
    try:
        if response.content_type == "application/json":
            return judge_json(status, json.loads(response.body))
        if response.content_type == "text/event-stream":
            *notifications, reply = response.events()
            if status != 200 or any("method" not in item for item in notifications):
                return "a stream that is not notifications then one reply, with status 200"
            return judge_json(status, reply)
    except (ValueError, AssertionError) as malformed:
        return f"a {response.content_type} body that does not parse ({malformed})"
    if status in EMPTY_BODY_STATUSES:
        return "" if response.body == b"" else f"status {status} with a body"
    if status in SERVER_FRAMING_STATUSES:
        return ""
    return f"status {status} with content type {response.content_type!r}"


def judge_json(status: int, reply: Any) -> str:
    if type(reply) is not dict or reply.get("jsonrpc") != "2.0":
        return f"not a JSON-RPC response: {reply!r:.200}"
    if "id" in reply and type(reply["id"]) not in (str, int):
        return f"a reply id of type {type(reply['id']).__name__} (unreadable ids are left out)"
    if ("result" in reply) == ("error" in reply):
        return "a reply with neither or both of result and error"
    if "result" in reply:
        return "" if status == 200 else f"a result with status {status}"
    error = reply["error"]
    if type(error) is not dict or type(error.get("code")) is not int:
        return "an error without an integer code"
    if type(error.get("message")) is not str:
        return "an error without a string message"
    if status not in STATUS_OF_CODE.get(error["code"], set()):
        return f"error {error['code']} answered with status {status}"
    return ""


def outcome(response: Response | None) -> str:
    if response is None:
        return "closed"
    return f"{response.status} {response.content_type or 'no body'}"


@pytest.mark.parametrize("kind", ["mcp_serve", "daphne"])
def test_random_requests_get_well_formed_answers_or_a_clean_close_and_the_server_serves_on(
    request, kind
):
    server: ServerProcess = request.getfixturevalue(f"threat_{kind}")
    log_start = server.log_path.stat().st_size
    fuzzer = RequestFuzzer(SEED)
    tally: Counter[str] = Counter()
    for number in range(CASES_PER_SERVER):
        case = fuzzer.case(number)
        try:
            response = run_case(server.port, case)
        except (NoResponse, AssertionError, ValueError) as failure:
            pytest.fail(f"{kind}: no well-formed answer ({failure}) to {case.describe()}")
        if response is not None:
            broken = judge(response)
            assert not broken, f"{kind}: {broken}: {response!r:.800} to {case.describe()}"
        tally[outcome(response)] += 1
        assert server.alive(), f"{kind} died at {case.describe()}:\n{server.log_tail()}"

    endpoint_answers = sum(count for label, count in tally.items() if "json" in label)
    assert endpoint_answers >= CASES_PER_SERVER // 3, f"the fuzz rarely reached MCP: {tally}"
    log = server.log_path.read_bytes()[log_start:]
    for text in (*TRACEBACK_TEXT, b"Exception in ASGI application", b"Exception inside"):
        assert text not in log, f"{kind} logged {text!r} during the fuzz:\n{log[-3000:]!r}"
    assert server.alive()
    call = message("after-fuzz", "tools/call", {"name": "echo", "arguments": {"text": "ok"}})
    answer = post(server.port, call)
    assert answer.status == 200
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "ok"}]
