"""Shaping what host code returned into the result its revision carries, and refusing (as a
``HostContractError``, answered -32603 and logged) whatever is off the host contract:
content blocks, tool results against their output schemas, resource contents, prompt
messages and completions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import content, echo
from .apps import carries_answer
from .catalog import Completion, PromptResult, ResourceMatch, ToolResult
from .errors import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, HostContractError, ProtocolError
from .index import ToolEntry

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


MAX_COMPLETION_VALUES = 100


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [content.text(message)], "isError": True}


def not_found(uri: str, modern: bool) -> ProtocolError:
    """-32602 (2026-07-28) or -32002 (2025-11-25), with ``data.uri`` when the URI may be
    echoed (echo.py): a long or odd URI is not sent back."""
    shown = echo.uri(uri)
    data = {"uri": shown} if shown is not None else None
    code = INVALID_PARAMS if modern else RESOURCE_NOT_FOUND_LEGACY
    return ProtocolError(code, "resource not found", data)


def _content_blocks(blocks: Any, owner: str) -> list[Any]:
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence):
        raise HostContractError(f"{owner} content is not a list of content blocks")
    checked = list(blocks)
    for block in checked:
        if not isinstance(block, Mapping) or block.get("type") not in CONTENT_TYPES:
            raise HostContractError(
                f"{owner} content holds something that is not a content block "
                "(use beammcp_django.content to build them)"
            )
    return checked


def tool_result(value: Any, entry: ToolEntry, *, modern: bool) -> dict[str, Any]:
    owner = f"tool '{entry.spec.name}'"
    if isinstance(value, ToolResult):
        result = ToolResult(
            content=_content_blocks(value.content, owner),
            structured=value.structured,
            is_error=value.is_error,
            meta=value.meta,
        )
    elif isinstance(value, str):
        result = ToolResult(content=[content.text(value)])
    elif isinstance(value, (list, tuple)):
        result = ToolResult(content=_content_blocks(value, owner))
    else:
        raise HostContractError(
            f"{owner} returned a {type(value).__name__}; expected ToolResult, str or a list "
            "of content blocks"
        )
    wire: dict[str, Any] = {"content": list(result.content)}
    if result.has_structured:
        structured = result.structured
        if entry.output is not None and not result.is_error:
            violation = entry.output.violation(structured, "structuredContent")
            if violation is not None:
                raise HostContractError(f"{owner} broke its outputSchema: {violation}")
        if modern or (entry.legacy_structured and type(structured) is dict):
            wire["structuredContent"] = structured
        # else 2025-11-25 cannot carry it (legacy_tools.py): the JSON text below stands alone.
        if not wire["content"]:
            wire["content"] = [content.text(json.dumps(structured, ensure_ascii=False))]
    elif entry.output is not None and not result.is_error:
        raise HostContractError(
            f"{owner} declares an outputSchema but returned no structured content"
        )
    if result.is_error:
        wire["isError"] = True
    elif entry.view is not None and not carries_answer(wire["content"]):
        raise HostContractError(
            f"{owner} is drawn by the view {entry.view} but its content says nothing: the "
            "model, and a host without MCP Apps, read only the content (return the answer "
            "as text beside what the view draws)"
        )
    if result.meta is not None:
        wire["_meta"] = dict(result.meta)
    return wire


def resource_contents(value: Any, match: ResourceMatch) -> list[Any]:
    mime_type = match.spec.mime_type
    if isinstance(value, str):
        return [content.text_contents(match.uri, value, mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [content.blob_contents(match.uri, bytes(value), mime_type)]
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or not value:
        raise HostContractError(
            "a resource reader returned nothing readable; return str, bytes or resource "
            "contents (an empty list is not allowed: raise ResourceNotFound instead)"
        )
    contents = list(value)
    for item in contents:
        if (
            not isinstance(item, Mapping)
            or type(item.get("uri")) is not str
            or ("text" not in item and "blob" not in item)
        ):
            raise HostContractError(
                "a resource reader returned an entry that is not resource contents "
                "(use beammcp_django.content.text_contents or blob_contents)"
            )
    return contents


def prompt_result(value: Any, name: str) -> dict[str, Any]:
    owner = f"prompt '{name}'"
    if isinstance(value, PromptResult):
        messages, description, meta = value.messages, value.description, value.meta
    elif isinstance(value, (list, tuple)):
        messages, description, meta = value, None, None
    else:
        raise HostContractError(
            f"{owner} returned a {type(value).__name__}; expected PromptResult or messages"
        )
    checked = list(messages)
    for item in checked:
        if (
            not isinstance(item, Mapping)
            or item.get("role") not in ("user", "assistant")
            or not isinstance(item.get("content"), Mapping)
            or item["content"].get("type") not in CONTENT_TYPES
        ):
            raise HostContractError(
                f"{owner} returned something that is not a prompt message "
                "(use beammcp_django.content.user or assistant)"
            )
    result: dict[str, Any] = {"messages": checked}
    if description is not None:
        result["description"] = description
    if meta is not None:
        result["_meta"] = dict(meta)
    return result


def completion(value: Any) -> dict[str, Any]:
    if isinstance(value, Completion):
        values, total, has_more = list(value.values), value.total, value.has_more
    elif isinstance(value, (list, tuple)):
        values, total, has_more = list(value), None, False
    else:
        raise HostContractError("a completer returned neither Completion nor a list of strings")
    if not all(type(item) is str for item in values):
        raise HostContractError("a completer returned a value that is not a string")
    if len(values) > MAX_COMPLETION_VALUES:
        values, has_more = values[:MAX_COMPLETION_VALUES], True
    completion: dict[str, Any] = {"values": values}
    if total is not None:
        completion["total"] = total
    if has_more:
        completion["hasMore"] = True
    return completion
