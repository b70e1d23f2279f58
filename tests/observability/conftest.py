"""Fixtures: a uvicorn process serving ``sample_project.asgi:application`` with
``tests.observability.settings`` (the SDK's in-memory span exporter, the access log on
stderr, the probe app) for the whole session, and helpers to read what it recorded.

The span exporter lives in the server process; the tests read it through the
``probe_spans`` tool, over the same transport they test."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.mcphttp_support import ServerProcess, message, post, server_env, start_server

SETTINGS = "tests.observability.settings"


def observe_env(directory: Path) -> dict[str, str]:
    env = server_env(directory)
    env["DJANGO_SETTINGS_MODULE"] = SETTINGS
    return env


@pytest.fixture(scope="session")
def observe_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("observe")


@pytest.fixture(scope="session")
def observed_server(observe_workdir: Path) -> Iterator[ServerProcess]:
    server = start_server("uvicorn", observe_env(observe_workdir), observe_workdir)
    yield server
    server.stop()


def new_trace_id() -> str:
    return secrets.token_hex(16)


def new_span_id() -> str:
    return secrets.token_hex(8)


def traceparent(trace_id: str, span_id: str, sampled: bool = True) -> str:
    return f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"


def call_tool(
    port: int,
    name: str,
    arguments: dict[str, Any] | None = None,
    request_id: Any = None,
    **opts: Any,
) -> Any:
    """POST a tools/call; the HTTP response. ``opts``: ``meta`` (extra ``_meta`` members) and
    any option of ``post`` (``add`` for extra headers)."""
    extra_meta = opts.pop("meta", {})
    body = message(
        request_id if request_id is not None else f"call-{secrets.token_hex(4)}",
        "tools/call",
        {"name": name, "arguments": arguments or {}},
        **extra_meta,
    )
    return post(port, body, **opts)


def traced_call(
    port: int, name: str, arguments: dict[str, Any] | None = None, **opts: Any
) -> tuple[str, Any]:
    """A tools/call whose ``_meta`` carries a new sampled trace context (and ``meta``'s other
    members): the trace id, and the HTTP response."""
    trace_id = new_trace_id()
    meta = {"traceparent": traceparent(trace_id, new_span_id()), **opts.pop("meta", {})}
    return trace_id, call_tool(port, name, arguments, meta=meta, **opts)


def spans_over_http(port: int, trace_id: str) -> list[dict[str, Any]]:
    response = call_tool(port, "probe_spans", {"trace_id": trace_id})
    assert response.status == 200, response.body
    return json.loads(response.json()["result"]["content"][0]["text"])


def by_name(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    named = {span["name"]: span for span in spans}
    assert len(named) == len(spans), [span["name"] for span in spans]
    return named


class AccessLog:
    """The access-log lines a server process wrote (``ACCESS`` lines of its log, as
    ``tests.observability.settings`` formats them), read from a starting point on."""

    def __init__(self, text: Callable[[], str]) -> None:
        self._text = text
        self._start = len(text())

    def lines(self) -> list[str]:
        """The complete new lines: the process may be writing the last one as it is read
        (a CI run once parsed a line cut short in the middle of its trace id)."""
        text = self._text()[self._start :]
        complete = text[: text.rfind("\n") + 1]
        return [line for line in complete.splitlines() if "ACCESS " in line]

    def wait_for(self, count: int, timeout: float = 10.0) -> list[str]:
        """The first ``count`` new lines, waiting for them: a line is written once the
        response has been sent, so it may land just after the client read the response."""
        deadline = time.monotonic() + timeout
        while len(lines := self.lines()) < count:
            assert time.monotonic() < deadline, f"{len(lines)} of {count} lines: {lines}"
            time.sleep(0.02)
        return lines

    @staticmethod
    def fields(line: str) -> dict[str, str]:
        """The structured fields and the message of one line."""
        prefix, _, text = line.partition("ACCESS ")[2].partition(" ")
        names = ("transport", "method", "target", "status", "outcome", "code", "ms", "trace")
        return {**dict(zip(names, prefix.split("|"), strict=True)), "message": text}
