"""A job queued before the tasks extension's worker moved (``beammcp_django.task_worker`` to
``beammcp_django.tasks.worker``) still runs: a Tasks backend stores the dotted path of the
task a job runs, and the old path gives the worker's own task, with a deprecation warning."""

from __future__ import annotations

import importlib
import sys

import pytest
from django.utils.module_loading import import_string

from beammcp_django.tasks.worker import run_task


def test_a_job_queued_under_the_old_path_finds_the_worker_s_task():
    sys.modules.pop("beammcp_django.task_worker", None)
    with pytest.warns(DeprecationWarning, match=r"beammcp_django\.tasks\.worker"):
        importlib.import_module("beammcp_django.task_worker")
    assert import_string("beammcp_django.task_worker.run_task") is run_task
    assert run_task.module_path == "beammcp_django.tasks.worker.run_task"
