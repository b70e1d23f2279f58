"""Tools that misbehave on purpose, registered beside the demo catalog for the stdio tests.

They raise, write to standard output in three ways, sleep (cooperatively or not) so a call
can be cancelled or outlive stdin, and report progress from a worker thread or the loop.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from beammcp_django import mcp

# The exception text a raising tool carries; it must reach stderr and never the client.
SECRET = "fault-secret-7f3a9c-do-not-leak"
# Each stdout-writing mode writes this marker followed by the mode name.
MARKER = "FAULTAPP-STRAY-OUTPUT"

NO_ARGUMENTS = {"type": "object", "additionalProperties": False}
SECONDS = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 120}},
    "required": ["seconds"],
    "additionalProperties": False,
}


@mcp.site.register
class Explode(mcp.Tool):
    """Raises an unexpected exception from a worker thread."""

    name = "fault_explode"
    input_schema = NO_ARGUMENTS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        raise RuntimeError(f"host fault carrying {SECRET}")


@mcp.site.register
class ExplodeAsync(mcp.Tool):
    """Raises an unexpected exception from a coroutine on the event loop."""

    name = "fault_explode_async"
    input_schema = NO_ARGUMENTS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await asyncio.sleep(0)
        raise ValueError(f"async host fault carrying {SECRET}")


@mcp.site.register
class Stray(mcp.Tool):
    """Writes to standard output: print(), os.write(1, ...) or sys.__stdout__."""

    name = "fault_stray_output"
    input_schema = {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["print", "fd", "dunder", "partial"]}},
        "required": ["mode"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        mode = arguments["mode"]
        text = f"{MARKER}-{mode}"
        if mode == "print":
            print(text)
            print('{"jsonrpc":"2.0","id":"forged","result":{}}')
        elif mode == "fd":
            os.write(1, f"{text}\n".encode())
        elif mode == "dunder":
            assert sys.__stdout__ is not None
            sys.__stdout__.write(f"{text}\n")
            sys.__stdout__.flush()
        else:  # "partial": no newline, so it would glue itself to the next protocol line
            os.write(1, text.encode())
        return f"wrote {mode}"


@mcp.site.register
class Nap(mcp.Tool):
    """Sleeps on the event loop (cancellable at any await)."""

    name = "fault_nap"
    input_schema = SECONDS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await asyncio.sleep(arguments["seconds"])
        return "woke up"


@mcp.site.register
class Doze(mcp.Tool):
    """Sleeps in a worker thread, polling ``context.cancelled`` every 10 ms."""

    name = "fault_doze"
    input_schema = SECONDS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        deadline = time.monotonic() + arguments["seconds"]
        while time.monotonic() < deadline:
            if context.cancelled:
                return "noticed the cancellation"
            time.sleep(0.01)
        return "woke up"


@mcp.site.register
class Stubborn(mcp.Tool):
    """Sleeps in a worker thread and never looks at ``context.cancelled``."""

    name = "fault_stubborn"
    input_schema = SECONDS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        time.sleep(arguments["seconds"])
        return "woke up"


@mcp.site.register
class Progress(mcp.Tool):
    """Reports progress three times from a worker thread, then answers."""

    name = "fault_progress"
    input_schema = NO_ARGUMENTS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        for step in (1, 2, 3):
            context.progress(step, 3, f"step {step} of 3")
            time.sleep(0.02)
        return "progressed"


@mcp.site.register
class ProgressAsync(mcp.Tool):
    """Reports progress three times from a coroutine on the event loop, then answers."""

    name = "fault_progress_async"
    input_schema = NO_ARGUMENTS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        for step in (1, 2, 3):
            context.progress(step, 3, f"step {step} of 3")
            await asyncio.sleep(0.02)
        return "progressed"


@mcp.site.register
class OffContract(mcp.Tool):
    """Returns what the host contract does not allow: ``object`` a bare object;
    ``unencodable``, ``nan`` and ``cycle`` a result whose structured content JSON cannot carry
    (an object, a NaN, a dict holding itself), beside text that carries ``SECRET``."""

    name = "fault_off_contract"
    input_schema = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["object", "unencodable", "nan", "cycle"]}
        },
        "required": ["mode"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        mode = arguments["mode"]
        if mode == "object":
            return object()
        structured: dict[str, Any] = {"note": SECRET}
        if mode == "unencodable":
            structured["when"] = object()
        elif mode == "nan":
            structured["ratio"] = float("nan")
        else:
            structured["self"] = structured
        return mcp.ToolResult(content=[mcp.content.text(SECRET)], structured=structured)


@mcp.site.register
class ExplodingResource(mcp.Resource):
    """A resource whose reader raises an exception carrying ``SECRET``."""

    uri = "fault://explode"
    name = "fault_explode"

    def read(self, context: mcp.RequestContext) -> str:
        raise RuntimeError(f"resource fault carrying {SECRET}")


@mcp.site.register
class ExplodingPrompt(mcp.Prompt):
    """A prompt whose ``get`` raises an exception carrying ``SECRET``."""

    name = "fault_explode"

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> Any:
        raise RuntimeError(f"prompt fault carrying {SECRET}")


@mcp.site.register
class LogOffContract(mcp.Tool):
    """Logs at ``info`` a value JSON cannot carry, then ``{"token": token}``, from a worker
    thread; the first notification cannot be sent, the second and the answer can."""

    name = "fault_log_off_contract"
    input_schema = {
        "type": "object",
        "properties": {"token": {"type": "string"}},
        "required": ["token"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        context.log("info", {"token": arguments["token"], "when": object()})
        context.log("info", {"token": arguments["token"]})
        return "logged"


# What host code can raise beyond Exception, or what an asyncio future refuses to carry.
ESCAPING = {
    "StopIteration": StopIteration,
    "StopAsyncIteration": StopAsyncIteration,
    "GeneratorExit": GeneratorExit,
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": SystemExit,
    "CancelledError": asyncio.CancelledError,
}
KIND = {
    "type": "object",
    "properties": {"kind": {"type": "string", "enum": sorted(ESCAPING)}},
    "required": ["kind"],
    "additionalProperties": False,
}


@mcp.site.register
class RaiseEscaping(mcp.Tool):
    """Raises the named exception (SystemExit, KeyboardInterrupt...) from a worker thread."""

    name = "fault_raise"
    input_schema = KIND

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        raise ESCAPING[arguments["kind"]](SECRET)


@mcp.site.register
class RaiseEscapingAsync(mcp.Tool):
    """Raises the named exception from a coroutine on the event loop (not CancelledError:
    raised there it is indistinguishable from a real cancellation)."""

    name = "fault_raise_async"
    input_schema = KIND

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        await asyncio.sleep(0)
        raise ESCAPING[arguments["kind"]](SECRET)


# Written to stderr by fault_late_reports once its deadline has passed.
LATE_MARKER = "FAULTAPP-LATE-REPORTS"


@mcp.site.register
class LateReports(mcp.Tool):
    """Reports progress, sleeps past the call deadline in a worker thread, then says on
    stderr whether it sees ``context.cancelled`` and reports progress and a log again."""

    name = "fault_late_reports"
    input_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "token": {"type": "string"}},
        "required": ["seconds", "token"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        context.progress(1, 3, "before the deadline")
        time.sleep(arguments["seconds"])
        sys.stderr.write(f"{LATE_MARKER} {arguments['token']} cancelled={context.cancelled}\n")
        sys.stderr.flush()
        context.progress(2, 3, "after the deadline")
        context.log("error", "after the deadline")
        return "too late"


@mcp.site.register
class Halves(mcp.Tool):
    """Accepts a number that is a multiple of 0.5 (any size: an integer always is)."""

    name = "fault_halves"
    input_schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "multipleOf": 0.5}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return "a multiple of a half"


@mcp.site.register
class Files(mcp.ResourceTemplate):
    """Answers the path it was handed, as a reader joining it to a directory would use it."""

    uri_template = "fault://files/{+path}"
    name = "fault_files"

    def read(self, uri: str, variables: dict[str, str], context: mcp.RequestContext) -> str:
        return f"read {variables['path']}"


@mcp.site.register
class Unstoppable(mcp.Tool):
    """Sleeps on the event loop and swallows every cancellation: only a stopped loop ends it."""

    name = "fault_unstoppable"
    input_schema = NO_ARGUMENTS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue
