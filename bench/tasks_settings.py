"""Settings for ``bench/tasks.py``: ``bench/orm_settings.py`` (``bench/bench_settings.py``,
the sample as served in production with ``benchapp``'s ``echo_task``, its database handled
as ``BENCH_DB_MODE`` says: ``documented`` is docs/deployment.md's PostgreSQL pool) plus
``bench.taskapp`` (tasks that wait), with
``TASKS["PER_PRINCIPAL"]`` raised: the bench queues its 10,000 tasks as one caller (no
principal, ``allow_all``) before a worker runs, more than the default bound of 100 such tasks
at once. ``BENCH_WORKER_CONCURRENCY`` sets ``TASKS["WORKER_CONCURRENCY"]`` for the worker the
bench starts (1 when unset)."""

import os

from bench.orm_settings import *  # noqa: F403
from bench.orm_settings import BEAMMCP as _BEAMMCP
from bench.orm_settings import INSTALLED_APPS as _APPS

INSTALLED_APPS = [*_APPS, "bench.taskapp"]
BEAMMCP = {
    **_BEAMMCP,
    "TASKS": {
        **_BEAMMCP["TASKS"],
        "PER_PRINCIPAL": 100_000,
        "WORKER_CONCURRENCY": int(os.environ.get("BENCH_WORKER_CONCURRENCY", "1")),
    },
}
