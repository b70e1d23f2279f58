"""Deprecated: the tasks extension's worker is ``beammcp_django.tasks.worker``.

Kept because a Tasks backend stores the dotted path of the function its job runs: a job a
server of an earlier version queued names ``beammcp_django.task_worker.run_task``, and the
worker that takes it after an upgrade imports that path. It finds the same task here. To be
removed once no queue can hold such a job (CHANGELOG.md, "Moved").
"""

import warnings

from beammcp_django.tasks.worker import run_task

warnings.warn(
    "beammcp_django.task_worker is beammcp_django.tasks.worker; this path is kept for jobs "
    "queued before the move",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["run_task"]
