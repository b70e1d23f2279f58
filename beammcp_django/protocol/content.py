"""Builders for content blocks, resource contents and prompt messages.

Hosts call these instead of building dicts by hand, so field names and base64 encoding are
right by construction. Each returns a plain dict ready for the wire.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Literal


def _with_annotations(
    block: dict[str, Any], annotations: Mapping[str, Any] | None
) -> dict[str, Any]:
    if annotations:
        block["annotations"] = dict(annotations)
    return block


def text(value: str, *, annotations: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return _with_annotations({"type": "text", "text": value}, annotations)


def image(
    data: bytes, mime_type: str, *, annotations: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    block = {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}
    return _with_annotations(block, annotations)


def audio(
    data: bytes, mime_type: str, *, annotations: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    block = {"type": "audio", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}
    return _with_annotations(block, annotations)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (
        ("title", title),
        ("description", description),
        ("mimeType", mime_type),
        ("size", size),
    ):
        if value is not None:
            block[key] = value
    return _with_annotations(block, annotations)


def text_contents(uri: str, value: str, mime_type: str | None = None) -> dict[str, Any]:
    """One entry of a ``resources/read`` result, or the body of an embedded resource."""
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    contents["text"] = value
    return contents


def blob_contents(uri: str, data: bytes, mime_type: str | None = None) -> dict[str, Any]:
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    contents["blob"] = base64.b64encode(data).decode("ascii")
    return contents


def embedded_text(
    uri: str,
    value: str,
    mime_type: str | None = None,
    *,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    block = {"type": "resource", "resource": text_contents(uri, value, mime_type)}
    return _with_annotations(block, annotations)


def embedded_blob(
    uri: str,
    data: bytes,
    mime_type: str | None = None,
    *,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    block = {"type": "resource", "resource": blob_contents(uri, data, mime_type)}
    return _with_annotations(block, annotations)


def message(role: Literal["user", "assistant"], block: Mapping[str, Any] | str) -> dict[str, Any]:
    """A prompt message; a plain string becomes one text block."""
    content = text(block) if isinstance(block, str) else dict(block)
    return {"role": role, "content": content}


def user(block: Mapping[str, Any] | str) -> dict[str, Any]:
    return message("user", block)


def assistant(block: Mapping[str, Any] | str) -> dict[str, Any]:
    return message("assistant", block)
