"""A tool for the disconnect-cancels test: it runs in a worker thread, polls
``context.cancelled`` and leaves a marker file for each thing that happened to it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from beammcp_django import mcp
from tests.http.mcphttp_app.markers import write_marker


@mcp.site.register
class Vigil(mcp.Tool):
    """Waits up to ``seconds``; writes ``<token>.started`` (and reports progress 0) at once,
    then ``<token>.cancelled`` when it sees the cancellation or ``<token>.finished`` when the
    time runs out."""

    name = "mcphttp_vigil"
    input_schema = {
        "type": "object",
        "properties": {
            "token": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
            "seconds": {"type": "number", "minimum": 0, "maximum": 60},
        },
        "required": ["token", "seconds"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        token = arguments["token"]
        write_marker(token, "started", "started")
        # Sent only when the request carries a progressToken: the answer is then a stream.
        context.progress(0, None, "watching for the cancellation")
        deadline = time.monotonic() + arguments["seconds"]
        while time.monotonic() < deadline:
            if context.cancelled:
                write_marker(token, "cancelled", "cancelled")
                return "noticed the cancellation"
            time.sleep(0.01)
        write_marker(token, "finished", "finished")
        return "finished"


@mcp.site.register
class Region(mcp.Tool):
    """Answers its arguments; ``region`` and ``count`` are mirrored into ``Mcp-Param-Region``
    and ``Mcp-Param-Count`` headers (``x-mcp-header``)."""

    name = "mcphttp_region"
    input_schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
        },
        "required": ["region"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return f"{arguments['region']}:{arguments.get('count')}"


@mcp.site.register
class NeedsSampling(mcp.Tool):
    """Served only to a request that declares the ``sampling`` client capability."""

    name = "mcphttp_needs_sampling"
    input_schema = {"type": "object", "additionalProperties": False}
    required_client_capabilities = {"sampling": {}}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return "the client can sample"


@mcp.site.register
class Announce(mcp.Tool):
    """Publishes tools/list_changed, so listeners on every worker sharing the layer hear it."""

    name = "mcphttp_announce"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        from beammcp_django import notify

        notify.tools_changed()
        return "announced"


@mcp.site.register
class Touch(mcp.Tool):
    """Publishes notifications/resources/updated for ``uri``, as a host's post_save would."""

    name = "mcphttp_touch"
    input_schema = {
        "type": "object",
        "properties": {"uri": {"type": "string", "maxLength": 200}},
        "required": ["uri"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        from beammcp_django import notify

        notify.resource_updated(arguments["uri"])
        return "touched"


@mcp.site.register
class AskModel(mcp.Tool):
    """Asks the client's model a question (InputRequired): a multi-round-trip request at
    2026-07-28, a sampling/createMessage request in a 2025-11-25 session."""

    name = "mcphttp_ask_model"
    input_schema = {
        "type": "object",
        "properties": {"question": {"type": "string", "maxLength": 200}},
        "required": ["question"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        answer = context.input_responses.get("model")
        if answer is None:
            ask = mcp.inputs.sample([mcp.content.user(arguments["question"])], 50)
            return mcp.InputRequired(requests={"model": ask}, state="asked the model")
        return f"{context.request_state}: {answer['content']['text']}"


@mcp.site.register
class AskUser(mcp.Tool):
    """Asks the user for a city (InputRequired with an elicitation), twice if told to."""

    name = "mcphttp_ask_user"
    input_schema = {
        "type": "object",
        "properties": {"rounds": {"type": "integer", "minimum": 1, "maximum": 3}},
        "additionalProperties": False,
    }
    FORM = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        cities = list(context.request_state or [])
        answer = context.input_responses.get("city")
        if answer is not None:
            cities.append(answer["content"]["city"] if answer["action"] == "accept" else "-")
        if len(cities) < arguments.get("rounds", 1):
            ask = mcp.inputs.elicit(f"City number {len(cities) + 1}?", self.FORM)
            return mcp.InputRequired(requests={"city": ask}, state=cities)
        return ", ".join(cities)


@mcp.site.register
class AskForever(mcp.Tool):
    """Answers InputRequired whatever the client says: a host that never finishes asking."""

    name = "mcphttp_ask_forever"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        ask = mcp.inputs.elicit("Again?", {"type": "object", "properties": {}})
        return mcp.InputRequired(requests={"again": ask})


@mcp.site.register
class Release(mcp.Tool):
    """Ends its request's connection (``context.release_connection``), then reports progress
    1 to 3 about 0.1 s apart (with a progressToken) and answers whether it released: in a
    worker thread, as a sync tool runs."""

    name = "mcphttp_release"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        released = context.release_connection()
        for step in (1, 2, 3):
            time.sleep(0.1)
            context.progress(step, 3)
        return f"released: {released}"


@mcp.site.register
class Pause(mcp.Tool):
    """A task that awaits ``seconds`` on its worker's event loop, saying "pausing" first: an
    async tool, so a worker running several tasks at once runs them side by side on one
    loop (``tests/tasks/test_task_shift.py``)."""

    name = "mcphttp_pause"
    task = "required"
    input_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 30}},
        "required": ["seconds"],
        "additionalProperties": False,
    }

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        context.progress(0, None, "pausing")
        await asyncio.sleep(arguments["seconds"])
        return "paused"
