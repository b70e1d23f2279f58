"""The tasks extension on a real distributed queue: django-tasks-rq's backend, its jobs in a
redis-server of the test's own, run by ``manage.py rqworker`` (django-rq, RQ 3.0: a work
horse forked per job), beside ``manage.py mcp_serve``; the sample's ``seasonal_report``
made, asked, fed, polled and cancelled, and run again after its worker is killed.

Only on Django 5.2 (Python 3.11's leg), through the django-tasks backport: django-tasks-rq
0.12.0 builds on the backport even on Django 6, where this package uses ``django.tasks``
(docs/tasks.md)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beammcp_django.tasks.backend import tasks_framework
from tests.http.mcphttp_support import redis_server, server_env

from .tasks_support import DOC, SHORT_LEASE, Worker, client, report_text, serving, task_row

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        tasks_framework() is None or tasks_framework().__name__ != "django_tasks",
        reason="django-tasks-rq builds on the django-tasks backport: the Django 5.2 leg only",
    ),
]


# django-rq's worker with django-tasks-rq's job class, as docs/tasks.md gives it.
RQ_WORKER = "python manage.py rqworker default --job-class django_tasks_rq.Job"
RQ_TASKS = 'TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}'


def rq_worker(name: str) -> list[str]:
    """The documented worker command, with a name of its own."""
    return [sys.executable, *RQ_WORKER.split()[1:], "--name", f"{name}-{time.monotonic_ns()}"]


def test_docs_tasks_gives_the_rq_settings_and_worker_these_tests_run():
    doc = DOC.read_text()
    assert f"\n{RQ_WORKER}\n" in doc and f"\n{RQ_TASKS}\n" in doc
    assert f"\n{RQ_TASKS}\n" in (Path(__file__).parent / "rq_settings.py").read_text()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The module's redis-server and ``mcp_serve`` on the RQ settings; no worker."""
    directory = tmp_path_factory.mktemp("rq")
    with redis_server(directory) as url:
        env = server_env(directory)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "tests.tasks.rq_settings",
                "BEAMMCP_TEST_RQ_URL": url,
                "BEAMMCP_TASK_LEASE_SECONDS": SHORT_LEASE,
                "BEAMMCP_TASK_MAX_ATTEMPTS": "2",
            }
        )
        with serving(env, directory, worker=False) as running:
            yield running


@pytest.fixture
def served(service: dict[str, Any], tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The module's server with an RQ worker of the test's own (a test may kill it)."""
    worker = Worker(service["env"], tmp_path, "first", rq_worker("first"))
    try:
        yield {**service, "worker": worker, "dir": tmp_path}
    finally:
        worker.stop()


def test_on_rq_a_task_asks_is_fed_and_polled_to_its_report_and_another_is_cancelled(served):
    ada = client(served, elicitation={})
    task_id = ada.start(city="lisbon", weeks=2)
    asked = ada.wait_for(task_id, "input_required")
    assert set(asked["inputRequests"]) == {"detail"}
    answer = {"detail": {"action": "accept", "content": {"outlook": True}}}
    ada.result("tasks/update", {"taskId": task_id, "inputResponses": answer})
    text = report_text(ada.wait_for(task_id, "completed"))
    assert text.startswith("Seasonal report for Lisbon, 2 week(s):") and ", mostly " in text

    plain = client(served)
    running = plain.start(city="oslo", weeks=12)
    plain.wait_for_first_half(running)
    plain.result("tasks/cancel", {"taskId": running})
    assert plain.wait_for(running, "cancelled", "completed", "failed")["status"] == "cancelled"


def test_on_rq_a_task_whose_worker_is_killed_runs_again_on_another(served):
    ada = client(served)
    task_id = ada.start(city="sydney", weeks=8)
    ada.wait_for_first_half(task_id)
    served["worker"].kill()  # the worker and its work horse: one process group
    time.sleep(float(SHORT_LEASE) + 0.5)
    second = Worker(served["env"], served["dir"], "second", rq_worker("second"))
    try:
        text = report_text(ada.wait_for(task_id, "completed", "failed"))
    finally:
        second.stop()
    assert "week 8: about" in text
    assert task_row(served["env"]["DATABASE_URL"], task_id) == ("completed", 2)
