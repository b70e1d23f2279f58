"""The server-minted handles' purge (``beammcp_django/handles``) as a task of Django's Tasks
framework, for a project whose worker runs its periodic jobs (``purge_handles.enqueue()``
from its scheduler); ``manage.py mcp_handles purge`` does the same from cron. An expired
handle is already answered as unknown: the purge frees its row."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from beammcp_django.conf import task_settings
from beammcp_django.handles import store
from beammcp_django.tasks.backend import tasks_framework

framework: Any = tasks_framework()


@framework.task(backend=task_settings()["BACKEND"])
def purge_handles() -> int:
    """Delete every handle past its end: how many."""
    return store.purge(timezone.now())
