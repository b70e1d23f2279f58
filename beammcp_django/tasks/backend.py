"""Django's Tasks framework, where this Django has it, and whether a backend can run tasks.

The framework is ``django.tasks`` on Django 6.0 and later, and the ``django-tasks`` backport
on 5.2; the package adds no queue of its own. A backend can run the tasks extension's tasks
only when its work runs in another process: Django's ``ImmediateBackend`` runs it at once in
the caller (the request would wait for the whole call, which a task exists to avoid) and
``DummyBackend`` never runs it, so both are refused by ``manage.py check`` (``beammcp.E025``)
wherever a tool may run as a task.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from django.conf import settings

try:  # Django 6.0+
    import django.tasks as framework
except ImportError:  # pragma: no cover - Django 5.2: the backport, when it is installed
    try:
        import django_tasks as framework  # type: ignore[no-redef]
    except ImportError:
        framework = None  # type: ignore[assignment]

# The rule a catalog breaks when a tool may run as a task and no backend can run it.
NO_TASK_BACKEND = "no_task_backend"

# The model django-tasks-db keeps its queue in.
QUEUE_MODEL = "django_tasks_database.DBTaskResult"

# Backends whose work does not run in another process, by their class name.
IN_PROCESS_BACKENDS = frozenset({"ImmediateBackend", "DummyBackend"})


def tasks_framework() -> ModuleType | None:
    """The Tasks framework this Django has: ``django.tasks``, the backport, or None."""
    return framework


def backend_problem(alias: str) -> str | None:
    """Why the Tasks backend ``alias`` cannot run tasks, or None when it can."""
    if framework is None:
        return (
            "needs Django's Tasks framework: Django 6.0 or later, or the django-tasks "
            "backport on Django 5.2"
        )
    configured = getattr(settings, "TASKS", None) or {}
    if alias not in configured:
        return f"names the Tasks backend '{alias}', which settings.TASKS does not define"
    try:
        backend: Any = framework.task_backends[alias]
    except Exception as failure:  # the framework's own error names the cause
        return f"names the Tasks backend '{alias}', which cannot be loaded ({failure})"
    kind = type(backend).__name__
    if kind in IN_PROCESS_BACKENDS:
        return (
            f"names the Tasks backend '{alias}', a {kind}, whose work does not run in a "
            "worker of its own (use django-tasks-db's DatabaseBackend, or a queue's)"
        )
    return None


def queue_shares_database(alias: str) -> bool:
    """Whether the Tasks backend ``alias`` keeps its queue as rows in the database the
    package's task rows are written to (django-tasks-db's ``DatabaseBackend``, routed
    there): then a task and the job that runs it are written in one transaction, which
    commits both or neither, and a worker sees the job only once the task is there. A queue
    anywhere else (Redis, another database) sees a job at once, so its jobs are sent only
    after the task's transaction commits (``runner.enqueue``)."""
    backend = framework.task_backends[alias]
    if type(backend).__module__.partition(".")[0] != "django_tasks_db":
        return False
    from django.apps import apps
    from django.db import router

    from beammcp_django.models import McpTask

    queue = apps.get_model(QUEUE_MODEL)  # by name: the package does not require the backend
    return bool(router.db_for_write(queue) == router.db_for_write(McpTask))
