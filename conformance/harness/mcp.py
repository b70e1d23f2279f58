"""The catalog the official conformance suite calls by name (both requirement sets).

Names, keys and texts follow ``/work/shared/notes/conformance-scenarios.md`` and the scenario
sources of ``@modelcontextprotocol/conformance@0.2.0-alpha.11``. Everything is declared
through the public API (``beammcp_django.mcp``) exactly as a host would declare it: the
harness tests the library, never works around it. The 2025-11-25 tools that ask the client
for input (``test_sampling``, ``test_elicitation``, ``test_elicitation_sep1034_defaults``,
``test_elicitation_sep1330_enums``) answer ``InputRequired`` like the 2026-07-28 ones: in a
2025-11-25 session the server sends their input requests to the client as server-to-client
requests and calls them again with the answers.

``test_reconnection`` ends its request's connection mid-call
(``context.release_connection()``); the client resumes the stream with ``Last-Event-ID``
and gets the result there.

The tasks extension's fixtures (``greet`` to ``test_tool_with_task``, as
``conformance/tasks-scenarios.md`` lists them) run their tasks in a worker of the harness's
Tasks backend (``conformance/serve.sh`` starts django-tasks-db's ``db_worker`` beside the
server), never in the serving process.
"""

from __future__ import annotations

import asyncio
import io
import json
import struct
import time
import wave
import zlib
from typing import Any

from beammcp_django import mcp

content = mcp.content
inputs = mcp.inputs


# -- fixture media --------------------------------------------------------------------------


def _png_pixel() -> bytes:
    """A real 1x1 RGBA PNG (signature, IHDR, IDAT, IEND, each with its CRC)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)  # 1x1, 8-bit RGBA
    pixels = zlib.compress(b"\x00" + bytes((255, 0, 0, 255)))  # filter 0, one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    """A real WAV file: 10 ms of 16-bit mono silence at 8 kHz."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(8000)
        writer.writeframes(b"\x00\x00" * 80)
    return buffer.getvalue()


PNG = _png_pixel()
WAV = _wav_silence()


# -- reading a retry's inputResponses ------------------------------------------------------


def _accepted(context: mcp.RequestContext, key: str) -> dict[str, Any] | None:
    """The form content of an accepted elicitation answered under ``key``, else None."""
    answer = context.input_responses.get(key)
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return None
    form = answer.get("content")
    return form if isinstance(form, dict) else None


def _accepted_string(context: mcp.RequestContext, key: str, field: str) -> str | None:
    form = _accepted(context, key)
    value = form.get(field) if form is not None else None
    return value if isinstance(value, str) else None


def _sampled_text(context: mcp.RequestContext, key: str) -> str | None:
    """The text of a ``sampling/createMessage`` result answered under ``key``, else None."""
    answer = context.input_responses.get(key)
    if not isinstance(answer, dict):
        return None
    blocks = answer.get("content")
    if not isinstance(blocks, list):
        blocks = [blocks]
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return " ".join(texts) if texts else None


def _root_uris(context: mcp.RequestContext, key: str) -> list[str] | None:
    """The URIs of a ``roots/list`` result answered under ``key``, else None."""
    answer = context.input_responses.get(key)
    roots = answer.get("roots") if isinstance(answer, dict) else None
    if not isinstance(roots, list):
        return None
    return [
        root["uri"] for root in roots if isinstance(root, dict) and isinstance(root.get("uri"), str)
    ]


def _string_form(field: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field],
    }


ASK_NAME = inputs.elicit("What is your name?", _string_form("name"))
ASK_CAPITAL = inputs.sample([content.user("What is the capital of France?")], 100)
ASK_GREETING = inputs.sample([content.user("Generate a greeting")], 50)
ASK_ROOTS = inputs.list_roots()
ASK_CONFIRM = inputs.elicit(
    "Please confirm",
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
)


# -- tools: content ----------------------------------------------------------------------


@mcp.site.register
class SimpleText(mcp.Tool):
    """Tests simple text content response."""

    name = "test_simple_text"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return "This is a simple text response for testing."


@mcp.site.register
class ImageContent(mcp.Tool):
    """Tests image content response (a 1x1 PNG)."""

    name = "test_image_content"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> list[Any]:
        return [content.image(PNG, "image/png")]


@mcp.site.register
class AudioContent(mcp.Tool):
    """Tests audio content response (10 ms of WAV silence)."""

    name = "test_audio_content"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> list[Any]:
        return [content.audio(WAV, "audio/wav")]


@mcp.site.register
class EmbeddedResource(mcp.Tool):
    """Tests embedded resource content response."""

    name = "test_embedded_resource"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> list[Any]:
        return [
            content.embedded_text(
                "test://embedded-resource", "This is an embedded resource content.", "text/plain"
            )
        ]


@mcp.site.register
class MultipleContentTypes(mcp.Tool):
    """Tests response with multiple content types (text, image, resource)."""

    name = "test_multiple_content_types"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> list[Any]:
        return [
            content.text("Multiple content types test:"),
            content.image(PNG, "image/png"),
            content.embedded_text(
                "test://mixed-content-resource",
                json.dumps({"test": "data", "value": 123}),
                "application/json",
            ),
        ]


@mcp.site.register
class ErrorHandling(mcp.Tool):
    """Tests error response handling: always answers a result with isError true."""

    name = "test_error_handling"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        raise mcp.ToolError("This tool intentionally returns an error for testing")


# -- tools: notifications during a call ------------------------------------------------------


@mcp.site.register
class ToolWithProgress(mcp.Tool):
    """Tests progress notifications: reports 0, 50 and 100 of 100, about 50 ms apart."""

    name = "test_tool_with_progress"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        context.progress(0, 100, "Completed step 0 of 100")
        await asyncio.sleep(0.05)
        context.progress(50, 100, "Completed step 50 of 100")
        await asyncio.sleep(0.05)
        context.progress(100, 100, "Completed step 100 of 100")
        return "Progress reported: 0, 50, 100 of 100."


@mcp.site.register
class Reconnection(mcp.Tool):
    """Tests SSE polling: ends the connection of its own request mid-call, then answers once
    the client has had time to come back with ``Last-Event-ID``."""

    name = "test_reconnection"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        released = context.release_connection()
        await asyncio.sleep(0.2)
        return "Reconnected: the result arrived on the resumed stream." if released else "Done."


@mcp.site.register
class ToolWithLogging(mcp.Tool):
    """Tests log notifications: three info messages about 50 ms apart (when logs are asked for)."""

    name = "test_tool_with_logging"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        context.log("info", "Tool execution started")
        await asyncio.sleep(0.05)
        context.log("info", "Tool processing data")
        await asyncio.sleep(0.05)
        context.log("info", "Tool execution completed")
        return "Tool with logging executed successfully"


@mcp.site.register
class LoggingTool(mcp.Tool):
    """Diagnostic: tries to log; a request without a logLevel in _meta must receive no logs."""

    name = "test_logging_tool"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        for step in ("started", "working", "done"):
            context.log("info", f"test_logging_tool {step}")
            await asyncio.sleep(0.01)
        return "Logged three messages at info (sent only if the request asked for a log level)."


# -- tools: the stateless lifecycle (server-stateless) -----------------------------------------


@mcp.site.register
class MissingCapability(mcp.Tool):
    """Diagnostic: needs the client's sampling capability; refused -32021 without it."""

    name = "test_missing_capability"
    required_client_capabilities = {"sampling": {}}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return "The client declared sampling."


def _notify() -> Any:
    """``beammcp_django.notify``, imported at call time."""
    try:
        from beammcp_django import notify
    except ModuleNotFoundError as missing:
        if missing.name != "beammcp_django.notify":
            raise
        raise mcp.ToolError("beammcp_django.notify is not available in this build") from None
    return notify


@mcp.site.register
class TriggerToolChange(mcp.Tool):
    """Diagnostic: tells open subscriptions/listen streams that the tool list changed."""

    name = "test_trigger_tool_change"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        _notify().tools_changed()
        return "Announced a tool list change."


@mcp.site.register
class TriggerPromptChange(mcp.Tool):
    """Diagnostic: tells open subscriptions/listen streams that the prompt list changed."""

    name = "test_trigger_prompt_change"

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        _notify().prompts_changed()
        return "Announced a prompt list change."


@mcp.site.register
class StreamingElicitation(mcp.Tool):
    """Diagnostic: asks for a name the stateless way (InputRequired), never by a request on the
    response stream."""

    name = "test_streaming_elicitation"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        name = _accepted_string(context, "user_name", "name")
        if name is None:
            return mcp.InputRequired(requests={"user_name": ASK_NAME})
        return f"Hello, {name}!"


# -- tools: input in a 2025-11-25 session (tools-call-sampling, -elicitation, sep1034, sep1330) ---


def _form(context: mcp.RequestContext, key: str) -> str:
    """An elicitation answer as the suite reads it: the action and what was filled in."""
    answer = context.input_responses.get(key)
    answer = answer if isinstance(answer, dict) else {}
    return f"action={answer.get('action')}, content={json.dumps(answer.get('content'))}"


@mcp.site.register
class Sampling(mcp.Tool):
    """Asks the client's model to answer ``prompt``, then returns what it said."""

    name = "test_sampling"
    input_schema = {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "What the model is asked"}},
        "required": ["prompt"],
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        answer = _sampled_text(context, "completion")
        if answer is None:
            ask = inputs.sample([content.user(arguments["prompt"])], 100)
            return mcp.InputRequired(requests={"completion": ask})
        return f"LLM response: {answer}"


@mcp.site.register
class Elicitation(mcp.Tool):
    """Asks the user for a username and an email, then returns the answer."""

    name = "test_elicitation"
    input_schema = {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "What the user is asked"}},
        "required": ["message"],
    }
    FORM = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        if "user" not in context.input_responses:
            ask = inputs.elicit(arguments["message"], self.FORM)
            return mcp.InputRequired(requests={"user": ask})
        return f"User response: {_form(context, 'user')}"


@mcp.site.register
class ElicitationDefaults(mcp.Tool):
    """Asks for a form whose every primitive field has a default (SEP-1034)."""

    name = "test_elicitation_sep1034_defaults"
    FORM = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        if "form" not in context.input_responses:
            ask = inputs.elicit("Please review the defaults", self.FORM)
            return mcp.InputRequired(requests={"form": ask})
        return f"Elicitation completed: {_form(context, 'form')}"


@mcp.site.register
class ElicitationEnums(mcp.Tool):
    """Asks for a form with the five enum shapes of SEP-1330."""

    name = "test_elicitation_sep1330_enums"
    FORM = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        if "choices" not in context.input_responses:
            ask = inputs.elicit("Please choose", self.FORM)
            return mcp.InputRequired(requests={"choices": ask})
        return f"Elicitation completed: {_form(context, 'choices')}"


# -- tools: multi-round-trip requests (input-required-result-*) ------------------------------


@mcp.site.register
class InputRequiredElicitation(mcp.Tool):
    """Asks for the user's name (elicitation under user_name), then greets them."""

    name = "test_input_required_result_elicitation"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        answer = context.input_responses.get("user_name")
        if isinstance(answer, dict) and answer.get("action") in ("decline", "cancel"):
            return f"No name given (the user chose {answer['action']})."
        name = _accepted_string(context, "user_name", "name")
        if name is None:  # first round, a missing or wrong key, or a malformed answer
            return mcp.InputRequired(requests={"user_name": ASK_NAME})
        return f"Hello, {name}!"


@mcp.site.register
class InputRequiredSampling(mcp.Tool):
    """Asks the client's model for the capital of France (sampling under capital_question)."""

    name = "test_input_required_result_sampling"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        answer = _sampled_text(context, "capital_question")
        if answer is None:
            return mcp.InputRequired(requests={"capital_question": ASK_CAPITAL})
        return f"The model answered: {answer}"


@mcp.site.register
class InputRequiredListRoots(mcp.Tool):
    """Asks the client for its roots (roots/list under client_roots), then names them."""

    name = "test_input_required_result_list_roots"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        uris = _root_uris(context, "client_roots")
        if uris is None:
            return mcp.InputRequired(requests={"client_roots": ASK_ROOTS})
        return "Client roots: " + (", ".join(uris) if uris else "(none)")


@mcp.site.register
class InputRequiredRequestState(mcp.Tool):
    """Asks for a confirmation with a sealed requestState; answers state-ok once both return."""

    name = "test_input_required_result_request_state"
    STATE = {"tool": "test_input_required_result_request_state", "step": "confirm"}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        form = _accepted(context, "confirm")
        if context.request_state == self.STATE and form is not None:
            return f"state-ok: the requestState came back verified; ok={form.get('ok')!r}"
        return mcp.InputRequired(requests={"confirm": ASK_CONFIRM}, state=self.STATE)


@mcp.site.register
class InputRequiredMultipleInputs(mcp.Tool):
    """Asks for a name, a sampled greeting and the client's roots at once, with a requestState."""

    name = "test_input_required_result_multiple_inputs"
    STATE = {"tool": "test_input_required_result_multiple_inputs", "step": "all"}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        name = _accepted_string(context, "user_name", "name")
        greeting = _sampled_text(context, "greeting")
        uris = _root_uris(context, "client_roots")
        if context.request_state == self.STATE and None not in (name, greeting, uris):
            return f"{greeting} {name}; your roots: {', '.join(uris) or '(none)'}"
        return mcp.InputRequired(
            requests={"user_name": ASK_NAME, "greeting": ASK_GREETING, "client_roots": ASK_ROOTS},
            state=self.STATE,
        )


@mcp.site.register
class InputRequiredMultiRound(mcp.Tool):
    """Three rounds: asks for a name (step1), then a color (step2), each with a new state."""

    name = "test_input_required_result_multi_round"
    ROUND_1 = {"tool": "test_input_required_result_multi_round", "round": 1}
    ASK_COLOR = inputs.elicit("Step 2: What is your favorite color?", _string_form("color"))
    ASK_STEP1_NAME = inputs.elicit("Step 1: What is your name?", _string_form("name"))

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        state = context.request_state
        if isinstance(state, dict) and state.get("tool") == self.name:
            if state.get("round") == 2:
                color = _accepted_string(context, "step2", "color")
                if color is not None:
                    return f"{state['name']}'s favorite color is {color}."
                return mcp.InputRequired(requests={"step2": self.ASK_COLOR}, state=state)
            if state.get("round") == 1:
                name = _accepted_string(context, "step1", "name")
                if name is not None:
                    return mcp.InputRequired(
                        requests={"step2": self.ASK_COLOR},
                        state={"tool": self.name, "round": 2, "name": name},
                    )
        return mcp.InputRequired(requests={"step1": self.ASK_STEP1_NAME}, state=self.ROUND_1)


@mcp.site.register
class InputRequiredTamperedState(mcp.Tool):
    """Issues a sealed requestState; the server refuses it if it comes back altered."""

    name = "test_input_required_result_tampered_state"
    STATE = {"tool": "test_input_required_result_tampered_state", "step": "confirm"}

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        if context.request_state == self.STATE and _accepted(context, "confirm") is not None:
            return "The requestState passed its integrity check."
        return mcp.InputRequired(requests={"confirm": ASK_CONFIRM}, state=self.STATE)


@mcp.site.register
class InputRequiredCapabilities(mcp.Tool):
    """Asks for both an elicitation and a sampling; only what the client declared is sent."""

    name = "test_input_required_result_capabilities"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        name = _accepted_string(context, "user_name", "name")
        greeting = _sampled_text(context, "greeting")
        if name is None and greeting is None:
            return mcp.InputRequired(requests={"user_name": ASK_NAME, "greeting": ASK_GREETING})
        received = [f"name={name!r}"] if name is not None else []
        if greeting is not None:
            received.append(f"greeting={greeting!r}")
        return "Received " + ", ".join(received)


# -- tools: schemas ----------------------------------------------------------------------------


@mcp.site.register
class JsonSchema202012(mcp.Tool):
    """Tool with JSON Schema 2020-12 features."""

    name = "json_schema_2020_12_tool"
    input_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return "Arguments accepted: " + json.dumps(arguments, sort_keys=True)


@mcp.site.register
class XMcpHeader(mcp.Tool):
    """Echoes its region, which clients also send as the Mcp-Param-Region header."""

    name = "test_x_mcp_header"
    input_schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return f"region={arguments['region']}"


# -- resources -----------------------------------------------------------------------------


@mcp.site.register
class StaticText(mcp.Resource):
    """A static text resource for testing."""

    uri = "test://static-text"
    name = "static-text"
    mime_type = "text/plain"

    def read(self, context: mcp.RequestContext) -> str:
        return "This is the content of the static text resource."


@mcp.site.register
class StaticBinary(mcp.Resource):
    """A static binary resource (a 1x1 PNG) for testing."""

    uri = "test://static-binary"
    name = "static-binary"
    mime_type = "image/png"

    def read(self, context: mcp.RequestContext) -> bytes:
        return PNG


@mcp.site.register
class TemplateData(mcp.ResourceTemplate):
    """A resource template with parameter substitution."""

    uri_template = "test://template/{id}/data"
    name = "template-data"
    mime_type = "application/json"

    def read(self, uri: str, variables: dict[str, str], context: mcp.RequestContext) -> str:
        item = variables["id"]
        return json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})


@mcp.site.register
class WatchedResource(mcp.Resource):
    """A resource that can be subscribed to for updates."""

    uri = "test://watched-resource"
    name = "watched-resource"
    mime_type = "text/plain"

    def read(self, context: mcp.RequestContext) -> str:
        return "Watched resource content"


# -- prompts ---------------------------------------------------------------------------------


@mcp.site.register
class SimplePrompt(mcp.Prompt):
    """A simple prompt without arguments."""

    name = "test_simple_prompt"

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> list[Any]:
        return [content.user("This is a simple prompt for testing.")]


@mcp.site.register
class PromptWithArguments(mcp.Prompt):
    """A prompt with required arguments."""

    name = "test_prompt_with_arguments"
    arguments = (
        mcp.PromptArgument("arg1", description="First test argument", required=True),
        mcp.PromptArgument("arg2", description="Second test argument", required=True),
    )
    SUGGESTIONS = ("hello", "test", "testing", "world")

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> list[Any]:
        return [
            content.user(
                f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"
            )
        ]

    def complete(
        self,
        argument: str,
        value: str,
        context_arguments: dict[str, str],
        context: mcp.RequestContext,
    ) -> list[str]:
        return [candidate for candidate in self.SUGGESTIONS if candidate.startswith(value)]


@mcp.site.register
class PromptWithEmbeddedResource(mcp.Prompt):
    """A prompt that includes an embedded resource."""

    name = "test_prompt_with_embedded_resource"
    arguments = (
        mcp.PromptArgument(
            "resourceUri", description="URI of the resource to embed", required=True
        ),
    )

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> list[Any]:
        return [
            content.user(
                content.embedded_text(
                    arguments["resourceUri"], "Embedded resource content for testing.", "text/plain"
                )
            ),
            content.user("Please process the embedded resource above."),
        ]


@mcp.site.register
class PromptWithImage(mcp.Prompt):
    """A prompt that includes image content."""

    name = "test_prompt_with_image"

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> list[Any]:
        return [
            content.user(content.image(PNG, "image/png")),
            content.user("Please analyze the image above."),
        ]


@mcp.site.register
class InputRequiredPrompt(mcp.Prompt):
    """Asks what context to use (elicitation under user_context), then renders the prompt."""

    name = "test_input_required_result_prompt"
    ASK_CONTEXT = inputs.elicit("What context should the prompt use?", _string_form("context"))

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> Any:
        value = _accepted_string(context, "user_context", "context")
        if value is None:
            return mcp.InputRequired(requests={"user_context": self.ASK_CONTEXT})
        return [content.user(f"Answer with this context in mind: {value}")]


# -- tools: the tasks extension (the ten tasks-* scenarios) ----------------------------------


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _working(context: mcp.RequestContext, seconds: float) -> bool:
    """Wait ``seconds`` in steps, as a long job would; False when cancelled first."""
    steps = int(seconds * 10)
    for step in range(steps):
        if context.cancelled:
            return False
        context.progress(step + 1, steps, f"{step + 1} of {steps} steps")
        time.sleep(0.1)
    return not context.cancelled


@mcp.site.register
class Greet(mcp.Tool):
    """Greets by name, at once: never a task."""

    name = "greet"
    input_schema = _object(name={"type": "string"})

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return f"Hello, {arguments.get('name', 'World')}!"


@mcp.site.register
class SlowCompute(mcp.Tool):
    """Works for the given seconds, then answers: a task when the client can take one (an
    instant job is answered at once), else run in the request."""

    name = "slow_compute"
    task = "optional"
    input_schema = _object(
        seconds={"type": "number", "minimum": 0, "maximum": 120}, label={"type": "string"}
    )

    def admit_task(self, arguments: dict[str, Any], context: mcp.RequestContext) -> bool:
        return arguments.get("seconds", 0) > 0

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        seconds = arguments.get("seconds", 0)
        if not _working(context, seconds):
            return "stopped: cancelled"
        return f"computed after {seconds} s ({arguments.get('label', '')})"


@mcp.site.register
class FailingJob(mcp.Tool):
    """A task whose tool answers an error result (a completed task with isError)."""

    name = "failing_job"
    task = "required"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        _working(context, 0.3)
        raise mcp.ToolError("the job failed, as it always does")


@mcp.site.register
class ProtocolErrorJob(mcp.Tool):
    """A task whose tool raises a JSON-RPC error (a failed task)."""

    name = "protocol_error_job"
    task = "required"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        _working(context, 0.3)
        raise mcp.ProtocolError(-32603, "the job hit a protocol error, as it always does")


CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


@mcp.site.register
class ConfirmDelete(mcp.Tool):
    """Asks the client to confirm before it deletes: from a task (input_required) when the
    client can take one, else in the request; a client that cannot be asked keeps the file.

    Optional, not required: the unscored http-header-validation scenario calls the first tool
    ``tools/list`` names (this one, by name order) with no capabilities, and expects a result.
    """

    name = "confirm_delete"
    task = "optional"
    input_schema = _object(filename={"type": "string"})

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        filename = arguments.get("filename", "")
        if "elicitation" not in context.client_capabilities:
            return f"kept {filename}: the client cannot be asked to confirm"
        form = _accepted(context, "confirm")
        if form is None and "confirm" not in context.input_responses:
            return mcp.InputRequired(
                requests={"confirm": inputs.elicit(f"Delete {filename}?", CONFIRM_FORM)}
            )
        if form is not None and form.get("confirm") is True:
            return f"deleted {filename}"
        return f"kept {filename}"


@mcp.site.register
class MultiInput(mcp.Tool):
    """A task that asks two inputs at once; they may be answered one at a time."""

    name = "multi_input"
    task = "required"

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        answered = [key for key in ("first", "second") if key in context.input_responses]
        if len(answered) < 2:
            form = _object(name={"type": "string"}, confirm={"type": "boolean"})
            return mcp.InputRequired(
                requests={
                    "first": inputs.elicit("The first input", form),
                    "second": inputs.elicit("The second input", form),
                }
            )
        names = [(_accepted(context, key) or {}).get("name") for key in answered]
        return f"both inputs: {', '.join(str(name) for name in names)}"


@mcp.site.register
class ToolWithTask(mcp.Tool):
    """Asks the caller's name in the request itself (a multi-round-trip before the task),
    then greets it from a task."""

    name = "test_tool_with_task"
    task = "required"

    def admit_task(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        if _accepted_string(context, "user_name", "name") is None:
            return mcp.InputRequired(requests={"user_name": ASK_NAME})
        return True

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return f"Hello, {_accepted_string(context, 'user_name', 'name')}!"
