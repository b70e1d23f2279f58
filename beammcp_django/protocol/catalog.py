"""The host contract: what a host declares (frozen specs) and what it answers (results).

A *catalog* is any object with three lists and the callables that serve them:

- ``tools``: a sequence of ``ToolSpec``;
- ``resources``: a sequence of ``ResourceSpec`` and ``ResourceTemplateSpec``;
- ``prompts``: a sequence of ``PromptSpec``;
- ``dispatch(name, arguments, context)``: runs a tool;
- ``read_resource(match, context)``: reads a listed resource or a templated URI;
- ``get_prompt(name, arguments, context)``: renders a prompt;
- optionally ``complete(ref, argument, context_arguments, context)``: argument completion.

Each callable may be a plain function (run in a worker thread by the transport) or a
coroutine function (awaited). A list may be empty; a missing list is malformed. The
registry in ``beammcp_django.registry`` builds such a catalog from Python classes; a host that
generates its catalog can hand over its own object (``BEAMMCP["CATALOG"]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, eq=False)
class ToolAnnotations:
    """Hints about a tool's behaviour; clients must not trust them for safety decisions."""

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def to_wire(self) -> dict[str, Any]:
        names = (
            ("title", self.title),
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        )
        return {key: value for key, value in names if value is not None}


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """A tool as advertised by ``tools/list`` and enforced by ``tools/call``."""

    name: str
    input_schema: Mapping[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    meta: Mapping[str, Any] | None = None
    # Client capabilities the tool cannot work without (e.g. {"sampling": {}}); a call from a
    # client that did not declare them is refused -32021 before the tool runs. Not on the wire.
    required_client_capabilities: Mapping[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        tool: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            tool["title"] = self.title
        if self.description is not None:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        if self.annotations is not None:
            tool["annotations"] = self.annotations.to_wire()
        if self.meta is not None:
            tool["_meta"] = self.meta
        return tool


@dataclass(frozen=True, eq=False)
class ResourceSpec:
    """A concrete resource listed by ``resources/list``."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    meta: Mapping[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _put_optional(resource, self.title, self.description, self.mime_type)
        if self.size is not None:
            resource["size"] = self.size
        if self.meta is not None:
            resource["_meta"] = self.meta
        return resource


@dataclass(frozen=True, eq=False)
class ResourceTemplateSpec:
    """A family of resources named by an RFC 6570 template (``{var}`` and ``{+var}`` only)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    meta: Mapping[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        template: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _put_optional(template, self.title, self.description, self.mime_type)
        if self.meta is not None:
            template["_meta"] = self.meta
        return template


@dataclass(frozen=True, eq=False)
class PromptArgument:
    name: str
    description: str | None = None
    title: str | None = None
    required: bool = False

    def to_wire(self) -> dict[str, Any]:
        argument: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            argument["title"] = self.title
        if self.description is not None:
            argument["description"] = self.description
        if self.required:
            argument["required"] = True
        return argument


@dataclass(frozen=True, eq=False)
class PromptSpec:
    name: str
    description: str | None = None
    title: str | None = None
    arguments: Sequence[PromptArgument] = ()
    meta: Mapping[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        prompt: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            prompt["title"] = self.title
        if self.description is not None:
            prompt["description"] = self.description
        if self.arguments:
            prompt["arguments"] = [argument.to_wire() for argument in self.arguments]
        if self.meta is not None:
            prompt["_meta"] = self.meta
        return prompt


def _put_optional(
    target: dict[str, Any], title: str | None, description: str | None, mime_type: str | None
) -> None:
    if title is not None:
        target["title"] = title
    if description is not None:
        target["description"] = description
    if mime_type is not None:
        target["mimeType"] = mime_type


@dataclass(frozen=True, eq=False)
class ResourceMatch:
    """What ``resources/read`` resolved a URI to, handed to the host's reader."""

    uri: str
    spec: ResourceSpec | ResourceTemplateSpec
    variables: Mapping[str, str] = field(default_factory=dict)


_ABSENT: Any = object()


@dataclass(frozen=True, eq=False)
class ToolResult:
    """A tool's answer. ``structured`` is validated against the tool's output schema.

    With ``structured`` and no ``content``, the serialised JSON becomes one text block, as
    the spec recommends for clients that read only content.
    """

    content: Sequence[Mapping[str, Any]] = ()
    structured: Any = _ABSENT
    is_error: bool = False
    meta: Mapping[str, Any] | None = None

    @property
    def has_structured(self) -> bool:
        return self.structured is not _ABSENT


@dataclass(frozen=True, eq=False)
class InputRequired:
    """Ask the client for input, then answer the retry (2026-07-28 multi-round-trip requests).

    ``requests`` maps a key of the host's choosing to an input request built with
    ``beammcp_django.protocol.inputs``; requests the client's declared capabilities cannot
    answer are left out. ``state`` is any JSON value: the server seals it (integrity, expiry,
    bound to this method, name and arguments) and hands it back verified as
    ``context.request_state`` on the retry. A tool, a prompt or a resource reader may return it.
    """

    requests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    state: Any = None


@dataclass(frozen=True, eq=False)
class PromptResult:
    messages: Sequence[Mapping[str, Any]]
    description: str | None = None
    meta: Mapping[str, Any] | None = None


@dataclass(frozen=True, eq=False)
class Completion:
    values: Sequence[str]
    total: int | None = None
    has_more: bool = False


@runtime_checkable
class Catalog(Protocol):
    """The lower-level contract; see the module docstring. ``complete`` is optional."""

    tools: Sequence[ToolSpec]
    resources: Sequence[ResourceSpec | ResourceTemplateSpec]
    prompts: Sequence[PromptSpec]

    def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any: ...

    def read_resource(self, match: ResourceMatch, context: Any) -> Any: ...

    def get_prompt(self, name: str, arguments: dict[str, str], context: Any) -> Any: ...
