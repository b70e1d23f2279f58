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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .access import Access

# How a declaration's field goes on the wire: (attribute, wire name, conversion or None). A
# field whose value (after its conversion) is None is left out; the order is the wire's.
WireFields = tuple[tuple[str, str, Callable[[Any], Any] | None], ...]


def to_wire(declaration: Any, fields: WireFields) -> dict[str, Any]:
    """``declaration`` as the spec's JSON object, written from its table of fields."""
    wire: dict[str, Any] = {}
    for attribute, name, convert in fields:
        value = getattr(declaration, attribute)
        if value is not None and convert is not None:
            value = convert(value)
        if value is not None:
            wire[name] = value
    return wire


def _each_to_wire(declarations: Sequence[Any]) -> list[dict[str, Any]] | None:
    """A list of nested declarations on the wire; an empty one is left out."""
    return [declaration.to_wire() for declaration in declarations] or None


def _true_or_absent(value: bool) -> bool | None:
    return True if value else None


@dataclass(frozen=True)
class EntryKind:
    """One list of a catalog: its attribute, the tag its entries go by, the catalog callable
    that serves them, and the request method that calls it. The one table of these facts."""

    list: str
    tag: str
    handler: str
    method: str


ENTRY_KINDS = (
    EntryKind("tools", "tool", "dispatch", "tools/call"),
    EntryKind("resources", "resource", "read_resource", "resources/read"),
    EntryKind("prompts", "prompt", "get_prompt", "prompts/get"),
)
KIND_OF_TAG = {kind.tag: kind for kind in ENTRY_KINDS}


@dataclass(frozen=True, eq=False)
class ToolAnnotations:
    """Hints about a tool's behaviour; clients must not trust them for safety decisions."""

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _ANNOTATION_FIELDS)


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
    # Who may use it (``access.py``): the gates that hide it, the scopes using it needs.
    # Not on the wire.
    access: Access | None = None
    # Whether a call runs as a task of the tasks extension: "disabled", "optional" or
    # "required" (``tasks.TASK_MODES``). Server-directed, so not on the wire.
    task: str = "disabled"

    @property
    def key(self) -> str:
        """What ``tools/list`` sorts and pages by, and the connectome names it by."""
        return self.name

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _TOOL_FIELDS)


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
    # Who may use it (``access.py``): the gates that hide it, the scopes using it needs.
    # Not on the wire.
    access: Access | None = None

    @property
    def key(self) -> str:
        return self.uri

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _RESOURCE_FIELDS)


@dataclass(frozen=True, eq=False)
class ResourceTemplateSpec:
    """A family of resources named by an RFC 6570 template (``{var}`` and ``{+var}`` only)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    meta: Mapping[str, Any] | None = None
    # Who may use it (``access.py``): the gates that hide it, the scopes using it needs.
    # Not on the wire.
    access: Access | None = None

    @property
    def key(self) -> str:
        return self.uri_template

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _TEMPLATE_FIELDS)


@dataclass(frozen=True, eq=False)
class PromptArgument:
    name: str
    description: str | None = None
    title: str | None = None
    required: bool = False

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _ARGUMENT_FIELDS)


@dataclass(frozen=True, eq=False)
class PromptSpec:
    name: str
    description: str | None = None
    title: str | None = None
    arguments: Sequence[PromptArgument] = ()
    meta: Mapping[str, Any] | None = None
    # Who may use it (``access.py``): the gates that hide it, the scopes using it needs.
    # Not on the wire.
    access: Access | None = None

    @property
    def key(self) -> str:
        return self.name

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self, _PROMPT_FIELDS)


_NAMED: WireFields = (("name", "name", None), ("title", "title", None))
_DESCRIBED: WireFields = (("description", "description", None),)
_META: WireFields = (("meta", "_meta", None),)
_ANNOTATION_FIELDS: WireFields = (
    ("title", "title", None),
    ("read_only", "readOnlyHint", None),
    ("destructive", "destructiveHint", None),
    ("idempotent", "idempotentHint", None),
    ("open_world", "openWorldHint", None),
)
_TOOL_FIELDS: WireFields = (
    *_NAMED,
    *_DESCRIBED,
    ("input_schema", "inputSchema", None),
    ("output_schema", "outputSchema", None),
    ("annotations", "annotations", ToolAnnotations.to_wire),
    *_META,
)
_RESOURCE_FIELDS: WireFields = (
    ("uri", "uri", None),
    *_NAMED,
    *_DESCRIBED,
    ("mime_type", "mimeType", None),
    ("size", "size", None),
    *_META,
)
_TEMPLATE_FIELDS: WireFields = (
    ("uri_template", "uriTemplate", None),
    *_NAMED,
    *_DESCRIBED,
    ("mime_type", "mimeType", None),
    *_META,
)
_ARGUMENT_FIELDS: WireFields = (*_NAMED, *_DESCRIBED, ("required", "required", _true_or_absent))
_PROMPT_FIELDS: WireFields = (
    *_NAMED,
    *_DESCRIBED,
    ("arguments", "arguments", _each_to_wire),
    *_META,
)


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
