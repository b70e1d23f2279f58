"""The system checks of the host's catalog: the audit of its entries (``protocol/audit.py``
and the class registry's own), what 2025-11-25 cannot carry, tools that may run as tasks
with no backend to run them, and annotations the declared graph contradicts."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register

from beammcp_django.checks.ids import check_id
from beammcp_django.conf import load_catalog, task_settings
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.annotations import findings
from beammcp_django.connectome.core.canonical import node_id
from beammcp_django.protocol.audit import audit
from beammcp_django.protocol.index import skills_of
from beammcp_django.protocol.legacy_tools import output_schema_fits
from beammcp_django.protocol.task_wire import DISABLED
from beammcp_django.tasks.backend import NO_TASK_BACKEND, backend_problem


@register("beammcp")
def check_catalog(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        catalog = load_catalog()
    except Exception as error:
        return [
            Error(
                f"BEAMMCP['CATALOG'] cannot be loaded: {type(error).__name__}: {error}",
                hint="Give the dotted path of a catalog object, e.g. 'myapp.mcp.catalog'.",
                id=check_id("catalog_unloadable"),
            )
        ]
    problems = audit(catalog)
    class_problems = getattr(catalog, "problems", None)
    if callable(class_problems):
        problems.extend(class_problems())
    messages: list[CheckMessage] = [
        Error(str(problem), hint=problem.hint, obj=problem.subject, id=check_id(problem.rule))
        for problem in problems
    ]
    hidden = getattr(catalog, "hidden_skill_folders", None)
    if callable(hidden):
        messages.extend(
            Warning(str(problem), hint=problem.hint, obj=problem.subject, id=check_id(problem.rule))
            for problem in hidden()
        )
    if not problems:
        messages.extend(_nothing_served(catalog))
        messages.extend(_legacy_output_warnings(catalog))
        messages.extend(_task_backend_errors(catalog))
    return messages


def _nothing_served(catalog: Any) -> list[CheckMessage]:
    """Nothing registered at all: legal, and most often an app left out of
    ``INSTALLED_APPS`` or an ``mcp.py`` never imported; a project that serves nothing on
    purpose silences the warning by its id."""
    if catalog.tools or catalog.resources or catalog.prompts or skills_of(catalog):
        return []
    return [
        Warning(
            "the MCP catalog serves nothing: no tool, resource or prompt is registered, so "
            "tools/list, resources/list and prompts/list answer empty",
            hint="Register entries on beammcp_django.mcp.site in an installed app's mcp.py "
            "(is the app in INSTALLED_APPS?), or point BEAMMCP['CATALOG'] at your catalog. "
            f"A project that serves nothing on purpose adds '{check_id('nothing_served')}' "
            "to SILENCED_SYSTEM_CHECKS.",
            id=check_id("nothing_served"),
        )
    ]


def _task_backend_errors(catalog: Any) -> list[CheckMessage]:
    """A tool may run as a task, and the configured backend cannot run one."""
    tasked = [tool.name for tool in catalog.tools if tool.task != DISABLED]
    if not tasked:
        return []
    problem = backend_problem(task_settings()["BACKEND"])
    if problem is None:
        return []
    return [
        Error(
            f"tool '{tasked[0]}' may run as a task, but BEAMMCP['TASKS']['BACKEND'] {problem}",
            hint="Configure settings.TASKS with a backend whose workers run apart from the "
            "server, e.g. django-tasks-db's DatabaseBackend and its db_worker command.",
            obj=f"tool '{tasked[0]}'",
            id=check_id(NO_TASK_BACKEND),
        )
    ]


def _legacy_output_warnings(catalog: Any) -> list[CheckMessage]:
    """A tool's output schema is not an object schema, which 2025-11-25 cannot carry."""
    return [
        Warning(
            f"tool '{tool.name}': the output schema's root is not an object schema, which "
            "2025-11-25 (the stdio handshake era) cannot carry: those clients get the tool "
            "without outputSchema, and its results as JSON text without structuredContent",
            hint='Give the output schema "type": "object" at its root if 2025-11-25 '
            "clients should receive structured results.",
            obj=tool.name,
            id=check_id("legacy_output_schema"),
        )
        for tool in catalog.tools
        if not output_schema_fits(tool.output_schema)
    ]


# The annotation audit's tag of its own: it reads the scope's source, and a host may run it
# apart (``manage.py check --tag beammcp_annotations``); a plain ``manage.py check`` runs it.
ANNOTATIONS_TAG = "beammcp_annotations"


@register(ANNOTATIONS_TAG)
def check_annotations(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A tool's declared graph reaches an effect its annotations say it does not have. Read
    from the source, so known before the first call; the observed side is on the admin's
    connectome page and in the diff record."""
    try:
        catalog = load_catalog()
    except Exception:
        return []  # an unloadable catalog is check_catalog's to report
    if audit(catalog):
        return []  # the catalog's own errors come first (check_catalog)
    server = exports.server_name()
    names = {node_id(server, "tool", spec.key): spec.key for spec in catalog.tools}
    return [
        Warning(
            f"tool '{names[finding.tool]}' is {finding.sentence()}",
            hint="Correct the annotation, or the code, or silence this check by its id if the "
            "reach is intended (the package enforces nothing: annotations are hints).",
            obj=f"tool '{names[finding.tool]}'",
            id=check_id("annotation_contradicted"),
        )
        for finding in findings(exports.declared().graph, catalog.tools, server, "declared")
    ]
