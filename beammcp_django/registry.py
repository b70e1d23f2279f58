"""Declaring a catalog with Python classes, and the site that collects them.

A host subclasses ``Tool``, ``Resource``, ``ResourceTemplate`` or ``Prompt`` in an ``mcp``
module of any installed app and registers it on the default ``site`` (``@site.register``),
as ``django.contrib.admin`` does with ``admin.py``. The site is itself a catalog (see
``beammcp_django.protocol.catalog``): the wire serves what it lists, from the same objects.

Handlers are plain methods or coroutine methods. A plain method runs in a worker thread with
Django's connection hygiene; a coroutine method is awaited on the event loop. A class whose
plain methods neither query nor wait on anything may say ``never_blocks = True``: they then
run on the event loop, without the thread (``runtime/on_loop.py`` says what holds the
promise; ``beammcp.E035`` checks the declaration).

Any declaration may say who may use it (``docs/authorization.md``):

- ``permissions = ("weather.add_observation",)``: Django permissions the caller must hold
  (``context.principal.has_perms``; a principal that is no Django user holds none). Each must
  exist on an installed model, which ``manage.py check`` verifies (``beammcp.E023``).
- ``visible(self, context)``: any other rule; answers True to show the entry (a plain method
  runs on a worker thread and may query the ORM; a coroutine method is awaited).
- ``scopes = ("weather.write",)``: OAuth scopes the caller's token must carry to use it.

The first two hide: a caller they refuse is answered as if the entry did not exist. Scopes
challenge: the entry is listed, and using it without them is answered 403
``insufficient_scope`` over HTTP, naming the scopes, so the client can step up.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from beammcp_django.handles.kinds import HandleKind, KindSpec, with_lifetimes
from beammcp_django.protocol.access import Access
from beammcp_django.protocol.audit import NO_HANDLER, Problem
from beammcp_django.protocol.catalog import (
    PromptArgument,
    PromptSpec,
    ResourceMatch,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolAnnotations,
    ToolSpec,
)
from beammcp_django.protocol.context import RequestContext
from beammcp_django.protocol.skills import SKILL_PATH, SkillProblem, SkillSpec
from beammcp_django.runtime.async_orm import sync_thread_connections
from beammcp_django.runtime.on_loop import OnLoop
from beammcp_django.skills import folders as skill_folders
from beammcp_django.skills.assembly import Assembled, assemble

INCOMPLETE_DECLARATION = "incomplete_declaration"
NEVER_BLOCKS = "never_blocks"
UNKNOWN_PERMISSION = "unknown_permission"


class AlreadyRegistered(Exception):
    """The same class was registered twice on one site."""


class NotRegistered(Exception):
    """The class was never registered on this site."""


@dataclass(frozen=True)
class _Handler:
    """A declaration's bound method, with whether it is a coroutine function and, if not,
    whether it runs on the loop (its class declares ``never_blocks``), decided once at
    registration rather than on every call."""

    method: Callable[..., Any]
    is_async: bool
    on_loop: OnLoop | None

    @classmethod
    def of(cls, method: Callable[..., Any], instance: _Declaration) -> _Handler:
        is_async = inspect.iscoroutinefunction(method)
        declaration = type(instance)
        on_loop = None
        if not is_async and declaration.never_blocks is True:
            name = f"{declaration.__module__}.{declaration.__qualname__}.{method.__name__}"
            on_loop = OnLoop(method, name)
        return cls(method, is_async, on_loop)

    async def run(self, context: RequestContext, *args: Any) -> Any:
        if self.is_async:
            try:
                return await self.method(*args)
            finally:
                if sync_thread_connections.due:  # its ORM queries' connection (async_orm)
                    await sync_thread_connections.tidy()
        if self.on_loop is not None:
            return self.on_loop(*args)
        return await context.run_sync(self.method, *args)


class _Declaration:
    """What the four kinds share: the spec a class declares, built from the class attributes
    named as the spec's fields (one rule for all four; ``description`` falls back to the
    class docstring)."""

    _spec_type: ClassVar[type]
    description: ClassVar[str | None] = None
    # Who may use it (the module's docstring): Django permissions and OAuth scopes.
    permissions: ClassVar[Sequence[str]] = ()
    scopes: ClassVar[Sequence[str]] = ()
    # True: its plain methods neither query nor wait, so they run on the event loop.
    never_blocks: ClassVar[bool] = False

    def spec(self) -> Any:
        cls = type(self)
        values = {
            field.name: getattr(cls, field.name)
            for field in fields(cls._spec_type)
            if field.name != "access"
        }
        values["description"] = cls.description or inspect.getdoc(cls)
        if "arguments" in values:
            values["arguments"] = tuple(values["arguments"])
        return cls._spec_type(**values, access=self.access())

    def access(self) -> Access | None:
        """What the class declares of who may use it, as the core enforces it."""
        gates: list[Any] = []
        shown: list[str] = []
        permissions = tuple(type(self).permissions)
        if permissions:
            gates.append(_holds_permissions(permissions))
            shown.append("permissions: " + ", ".join(permissions))
        visible = getattr(self, "visible", None)
        if callable(visible):
            gates.append(visible)
            shown.append(f"{type(self).__qualname__}.visible()")
        scopes = frozenset(type(self).scopes)
        if not gates and not scopes:
            return None
        return Access(gates=tuple(gates), scopes=scopes, shown=tuple(shown))


def _holds_permissions(permissions: tuple[str, ...]) -> Callable[[RequestContext], bool]:
    """The gate of ``permissions``: the principal holds all of them, as Django's
    authentication backends answer (``has_perms``, run on a worker thread: a backend may
    query). A principal that is no Django user (none, a token's claims) holds none."""

    def holds_permissions(context: RequestContext) -> bool:
        has_perms = getattr(context.principal, "has_perms", None)
        return callable(has_perms) and has_perms(permissions) is True

    def is_no_user(context: RequestContext) -> bool:
        """Decided on the loop, with no thread hop: a caller that is no Django user."""
        return not callable(getattr(context.principal, "has_perms", None))

    holds_permissions.permissions = permissions  # type: ignore[attr-defined]
    holds_permissions.quick_refusal = is_no_user  # type: ignore[attr-defined]
    return holds_permissions


def needs_permissions(access: Access | None) -> bool:
    """Whether ``access`` hides its entry from a caller holding no Django permissions (no
    principal, as ``allow_all`` serves): one of its gates is a ``permissions`` gate."""
    return access is not None and any(getattr(gate, "permissions", None) for gate in access.gates)


class Tool(_Declaration):
    """A tool. Override ``call``; declare the schema the arguments must satisfy.

    ``call(arguments, context)`` receives the arguments exactly as decoded (already valid
    against ``input_schema``) and returns a ``ToolResult``, a string (one text block) or a
    list of content blocks. Raise ``ToolError`` for an error the model should read.
    """

    _spec_type = ToolSpec
    name: ClassVar[str]
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    input_schema: ClassVar[Mapping[str, Any]] = {"type": "object", "additionalProperties": False}
    output_schema: ClassVar[Mapping[str, Any] | None] = None
    annotations: ClassVar[ToolAnnotations | None] = None
    meta: ClassVar[Mapping[str, Any] | None] = None
    # Client capabilities without which a call is refused -32021, e.g. {"sampling": {}}.
    required_client_capabilities: ClassVar[Mapping[str, Any] | None] = None
    # Run as a task of the tasks extension (``docs/tasks.md``): "disabled" (the default),
    # "optional" (a task when the client can take one and ``admit_task`` agrees) or
    # "required" (only ever a task). A task's ``call`` runs in a worker of Django's Tasks
    # framework, not in the request.
    task: ClassVar[str] = "disabled"
    # The handle kinds it mints (``HandleKind`` classes or names): its description then ends
    # with each one's lifetime (``docs/handles.md``).
    mints: ClassVar[Sequence[Any]] = ()

    def call(self, arguments: dict[str, Any], context: RequestContext) -> Any:
        raise NotImplementedError

    def admit_task(self, arguments: dict[str, Any], context: RequestContext) -> Any:
        """Asked in the request, before a task is made: True to make it, False to run the
        call now instead (an optional tool only), or ``InputRequired`` to ask the client
        first (a multi-round-trip on the request itself; the answers reach ``call`` in the
        task as ``context.input_responses``). A plain method runs on a worker thread, as
        ``call`` does outside a task; a coroutine method is awaited."""
        return True


class Resource(_Declaration):
    """A concrete resource at a fixed ``uri``. ``read(context)`` returns str, bytes or contents."""

    _spec_type = ResourceSpec
    uri: ClassVar[str]
    name: ClassVar[str]
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    mime_type: ClassVar[str | None] = None
    size: ClassVar[int | None] = None
    meta: ClassVar[Mapping[str, Any] | None] = None

    def read(self, context: RequestContext) -> Any:
        raise NotImplementedError


class ResourceTemplate(_Declaration):
    """Resources named by ``uri_template`` (``{var}`` one segment, ``{+var}`` several).

    ``read(uri, variables, context)`` gets the requested URI and its decoded variables; raise
    ``ResourceNotFound`` when they name nothing.
    """

    _spec_type = ResourceTemplateSpec
    uri_template: ClassVar[str]
    name: ClassVar[str]
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    mime_type: ClassVar[str | None] = None
    meta: ClassVar[Mapping[str, Any] | None] = None

    def read(self, uri: str, variables: Mapping[str, str], context: RequestContext) -> Any:
        raise NotImplementedError


class Prompt(_Declaration):
    """A prompt template. ``get(arguments, context)`` returns messages or a ``PromptResult``.

    Optionally ``complete(argument, value, context_arguments, context)`` suggests values for
    one argument; the server advertises completions when any registered class has it.
    """

    _spec_type = PromptSpec
    name: ClassVar[str]
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    arguments: ClassVar[Sequence[PromptArgument]] = ()
    meta: ClassVar[Mapping[str, Any] | None] = None

    def get(self, arguments: dict[str, str], context: RequestContext) -> Any:
        raise NotImplementedError


class Skill(_Declaration):
    """A skill of the skills extension (``docs/skills.md``): instructions an agent loads, a
    ``SKILL.md`` and the files beside it, served as ``skill://`` resources.

    Every installed app's ``skills/<name>/`` folder is served without a class, to every
    caller. A class named as a folder declares who may use that skill (``permissions``,
    ``visible()``, ``scopes``, as any entry); a class that overrides ``files()`` gives a
    skill from code (held in the database, generated), one contract for both.

    ``files()`` returns ``{path: bytes or str}``, ``SKILL.md`` among them; it is asked once,
    when the site's skills are assembled (at startup, and by ``site.refresh_skills()`` after
    the content changed), never per request.
    """

    # The skill's name: its SKILL.md's ``name``, its folder's, its URI's last segment.
    name: ClassVar[str]
    # An organisational prefix before the name in its URI (``acme/billing``), or none.
    prefix: ClassVar[str] = ""

    def files(self) -> Mapping[str, bytes | str]:
        """The folder ``skills/<name>/`` of the first installed app holding one."""
        folder = skill_folders.find(type(self).name)
        if folder is None:
            raise SkillProblem(
                SKILL_PATH,
                f"no installed app has a folder skills/{type(self).name}/ and the class does "
                "not give its files (override files())",
            )
        return skill_folders.read_folder(folder.path)

    files.reads_app_folder = True  # type: ignore[attr-defined]


_KINDS: tuple[tuple[type, str, tuple[str, ...]], ...] = (
    (Tool, "call", ("name",)),
    (Resource, "read", ("uri", "name")),
    (ResourceTemplate, "read", ("uri_template", "name")),
    (Prompt, "get", ("name",)),
    (Skill, "files", ("name",)),
    (HandleKind, "spec", ("kind", "prefix")),
)


def _kind_of(declaration: type) -> tuple[type, str, tuple[str, ...]]:
    for kind in _KINDS:
        if issubclass(declaration, kind[0]):
            return kind
    raise TypeError(
        f"{declaration.__qualname__} is not a Tool, Resource, ResourceTemplate, Prompt, Skill "
        "or HandleKind"
    )


class Site:
    """Registered declarations, served as a catalog. Lists are rebuilt only on change."""

    def __init__(self, *, app_skills: bool = False) -> None:
        # Serve the installed apps' skill folders (the default site does).
        self._app_skills = app_skills
        self._assembled: Assembled | None = None
        self._skills_lock = threading.Lock()
        self._declarations: list[type] = []
        self._instances: dict[type, Any] = {}
        self.tools: tuple[ToolSpec, ...] = ()
        self.resources: tuple[ResourceSpec | ResourceTemplateSpec, ...] = ()
        self.prompts: tuple[PromptSpec, ...] = ()
        self.handle_kinds: tuple[KindSpec, ...] = ()
        self._tool_by_name: dict[str, _Handler] = {}
        self._admit_by_name: dict[str, _Handler] = {}
        self._reader_by_spec: dict[int, _Handler] = {}
        self._prompt_by_name: dict[str, _Handler] = {}
        self._completers: dict[tuple[str, str], _Handler] = {}

    def register(self, *declarations: type) -> Any:
        """Register classes; usable as ``@site.register`` on one class."""
        # Check every class before changing anything: a failed call leaves the site as it was.
        for position, declaration in enumerate(declarations):
            _kind_of(declaration)
            if declaration in self._instances or declaration in declarations[:position]:
                raise AlreadyRegistered(f"{declaration.__qualname__} is already registered")
        for declaration in declarations:
            self._declarations.append(declaration)
            self._instances[declaration] = declaration()
        self._rebuild()
        return declarations[0] if len(declarations) == 1 else declarations

    def unregister(self, *declarations: type) -> None:
        for declaration in declarations:
            if declaration not in self._instances:
                raise NotRegistered(f"{declaration.__qualname__} is not registered")
        for declaration in dict.fromkeys(declarations):
            self._declarations.remove(declaration)
            del self._instances[declaration]
        self._rebuild()

    def is_registered(self, declaration: type) -> bool:
        return declaration in self._instances

    @property
    def declarations(self) -> tuple[type, ...]:
        return tuple(self._declarations)

    def _complete_declarations(self) -> list[type]:
        return [d for d in self._declarations if not self._incomplete_attributes(d)]

    @staticmethod
    def _incomplete_attributes(declaration: type) -> list[str]:
        _, _, required = _kind_of(declaration)
        # A kind built on another's (a view is a resource) names what it needs besides.
        required = (*required, *getattr(declaration, "also_required", ()))
        return [name for name in required if not hasattr(declaration, name)]

    def _rebuild(self) -> None:
        tools, resources, prompts = [], [], []
        tool_by_name: dict[str, _Handler] = {}
        admit_by_name: dict[str, _Handler] = {}
        reader_by_spec: dict[int, _Handler] = {}
        prompt_by_name: dict[str, _Handler] = {}
        completers: dict[tuple[str, str], _Handler] = {}
        with self._skills_lock:  # assembled again from the new classes when next asked
            self._assembled = None
        declared = self._complete_declarations()
        kinds = {
            declaration.kind: declaration.spec()
            for declaration in declared
            if issubclass(declaration, HandleKind)
        }
        for declaration in declared:
            instance = self._instances[declaration]
            if isinstance(instance, (Skill, HandleKind)):
                continue  # skills are assembled with the apps' folders; kinds are below
            spec = instance.spec()
            completer = getattr(instance, "complete", None)
            if isinstance(spec, ToolSpec):
                tools.append(with_lifetimes(spec, getattr(declaration, "mints", ()), kinds))
                tool_by_name.setdefault(spec.name, _Handler.of(instance.call, instance))
                if type(instance).admit_task is not Tool.admit_task:
                    admit_by_name.setdefault(spec.name, _Handler.of(instance.admit_task, instance))
            elif isinstance(spec, PromptSpec):
                prompts.append(spec)
                prompt_by_name.setdefault(spec.name, _Handler.of(instance.get, instance))
                if callable(completer):
                    completers.setdefault(
                        ("ref/prompt", spec.name), _Handler.of(completer, instance)
                    )
            else:
                resources.append(spec)
                reader_by_spec[id(spec)] = _Handler.of(instance.read, instance)
                if isinstance(spec, ResourceTemplateSpec) and callable(completer):
                    completers.setdefault(
                        ("ref/resource", spec.uri_template), _Handler.of(completer, instance)
                    )
        self.tools, self.resources, self.prompts = tuple(tools), tuple(resources), tuple(prompts)
        self.handle_kinds = tuple(kinds.values())
        self._tool_by_name = tool_by_name
        self._admit_by_name = admit_by_name
        self._reader_by_spec = reader_by_spec
        self._prompt_by_name = prompt_by_name
        self._completers = completers

    @property
    def skills(self) -> tuple[SkillSpec, ...]:
        """The skills served: assembled once (the first time they are asked for, which the
        server's start does) and kept until the classes change or ``refresh_skills``."""
        return self._assembled_skills().skills

    def refresh_skills(self) -> None:
        """Assemble the skills again, now, in the caller's thread: after a code-given
        skill's content changed (a model's ``post_save``), so that its digests are new and
        no request pays for them. The servers serve the new ones from their next request."""
        with self._skills_lock:
            self._assembled = self._assemble()

    def skill_problems(self) -> tuple[Problem, ...]:
        """Skills left out, each with the rule it broke (errors of ``manage.py check``)."""
        return self._assembled_skills().problems

    def hidden_skill_folders(self) -> tuple[Problem, ...]:
        """Skill folders not served because a class or an earlier app holds their name."""
        return self._assembled_skills().hidden

    def _assembled_skills(self) -> Assembled:
        assembled = self._assembled
        if assembled is None:
            with self._skills_lock:
                if self._assembled is None:
                    self._assembled = self._assemble()
                assembled = self._assembled
        return assembled

    def _assemble(self) -> Assembled:
        declared = [
            self._instances[declaration]
            for declaration in self._complete_declarations()
            if issubclass(declaration, Skill)
        ]
        return assemble(declared, app_folders=self._app_skills)

    # -- the catalog contract ------------------------------------------------------------

    async def dispatch(self, name: str, arguments: dict[str, Any], context: RequestContext) -> Any:
        return await self._tool_by_name[name].run(context, arguments, context)

    async def admit_task(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> Any:
        admit = self._admit_by_name.get(name)
        if admit is None:  # the tool keeps Tool's own answer, with no thread hop
            return True
        return await admit.run(context, arguments, context)

    async def read_resource(self, match: ResourceMatch, context: RequestContext) -> Any:
        reader = self._reader_by_spec[id(match.spec)]
        if isinstance(match.spec, ResourceTemplateSpec):
            return await reader.run(context, match.uri, match.variables, context)
        return await reader.run(context, context)

    async def get_prompt(
        self, name: str, arguments: dict[str, str], context: RequestContext
    ) -> Any:
        return await self._prompt_by_name[name].run(context, arguments, context)

    @property
    def complete(self) -> Callable[..., Any] | None:
        """The completer, present only when a registered class offers completion."""
        return self._complete if self._completers else None

    async def _complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, str],
        context_arguments: Mapping[str, Any],
        context: RequestContext,
    ) -> Any:
        key = ref.get("name") if ref["type"] == "ref/prompt" else ref.get("uri")
        owner = self._completers.get((ref["type"], key))
        if owner is None:
            return []
        return await owner.run(
            context,
            argument["name"],
            argument["value"],
            context_arguments,
            context,
        )

    def handlers(self, spec: ToolSpec | ResourceSpec | ResourceTemplateSpec | PromptSpec) -> Any:
        """The method that serves ``spec`` (for the connectome's declared graph)."""
        if isinstance(spec, ToolSpec):
            return self._tool_by_name[spec.name].method
        if isinstance(spec, PromptSpec):
            return self._prompt_by_name[spec.name].method
        return self._reader_by_spec[id(spec)].method

    # -- what only the classes can tell -------------------------------------------------

    def problems(self) -> list[Problem]:
        """Faults in the registered classes themselves (the catalog audit sees the rest)."""
        found = []
        for declaration in self._declarations:
            kind, method, _ = _kind_of(declaration)
            missing = self._incomplete_attributes(declaration)
            subject = (
                f"{kind.__name__.lower()} class {declaration.__module__}.{declaration.__qualname__}"
            )
            if missing:
                found.append(
                    Problem(
                        INCOMPLETE_DECLARATION,
                        subject,
                        "does not set " + ", ".join(f"'{name}'" for name in missing),
                    )
                )
            if kind is HandleKind:
                continue  # no handler, no gate: checks/handles.py holds the rest
            handler = getattr(declaration, method)
            if kind is not Skill and handler is getattr(kind, method):
                found.append(
                    Problem(
                        NO_HANDLER, subject, f"does not define '{method}', so nothing serves it"
                    )
                )
            found.extend(
                Problem(UNKNOWN_PERMISSION, subject, message)
                for message in _permission_problems(declaration.permissions)
            )
            found.extend(
                Problem(NEVER_BLOCKS, subject, message)
                for message in _never_blocks_problems(declaration, kind, handler)
            )
        found.extend(self.skill_problems())
        return found


def _never_blocks_problems(declaration: type, kind: type, handler: Any) -> Iterator[str]:
    """Why ``never_blocks`` cannot mean what it says: not a bool, on a skill (no method of
    its runs per request), or on a class with no plain method that a request runs for it to
    move onto the loop (a coroutine method is awaited there already)."""
    never_blocks = declaration.never_blocks  # type: ignore[attr-defined]
    if not isinstance(never_blocks, bool):
        yield "key 'never_blocks' must be True or False"
        return
    if never_blocks and kind is Skill:
        yield "declares never_blocks = True, but a skill's files are read once, not per request"
        return
    handlers = [handler]
    if kind is Prompt or kind is ResourceTemplate:  # the kinds whose `complete` is served
        handlers.append(getattr(declaration, "complete", None))
    if kind is Tool and declaration.admit_task is not Tool.admit_task:  # type: ignore[attr-defined]
        handlers.append(declaration.admit_task)  # type: ignore[attr-defined]
    if never_blocks and not any(
        callable(method) and not inspect.iscoroutinefunction(method) for method in handlers
    ):
        yield (
            "declares never_blocks = True, but its methods are coroutines, which run on the "
            "event loop already"
        )


def _permission_problems(permissions: Any) -> Iterator[str]:
    """Why ``permissions`` cannot be held: each must be ``app_label.codename`` of a permission
    an installed model declares (its default ones or ``Meta.permissions``), read from the
    models themselves, with no database: a name nobody can hold would hide the entry from
    everyone, silently."""
    if isinstance(permissions, str) or not isinstance(permissions, Sequence):
        yield "key 'permissions' must be a tuple of 'app_label.codename' names"
        return
    for permission in permissions:
        label, _, codename = permission.partition(".") if isinstance(permission, str) else ("",) * 3
        if not label or not codename:
            yield f"key 'permissions' holds {str(permission)[:64]!r}, not 'app_label.codename'"
        elif codename not in _declared_permissions(label):
            yield (
                f"key 'permissions' names '{permission}', which no model of an installed app "
                f"'{label}' declares"
            )


def _declared_permissions(app_label: str) -> set[str]:
    from django.apps import apps

    try:
        models = apps.get_app_config(app_label).get_models()
    except LookupError:
        return set()
    codenames: set[str] = set()
    for model in models:
        meta = model._meta
        codenames.update(f"{action}_{meta.model_name}" for action in meta.default_permissions)
        codenames.update(codename for codename, _ in meta.permissions)
    return codenames


site = Site(app_skills=True)
