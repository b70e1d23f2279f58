"""Settings for ``bench/tasks.py``: ``bench/bench_settings.py`` (the sample as served in
production, with ``benchapp``'s ``echo_task``), with ``TASKS["PER_PRINCIPAL"]`` raised: the
bench queues its 10,000 tasks as one caller (no principal, ``allow_all``) before a worker
runs, more than the default bound of 100 such tasks at once."""

from bench.bench_settings import *  # noqa: F403
from bench.bench_settings import BEAMMCP as _BEAMMCP

BEAMMCP = {**_BEAMMCP, "TASKS": {**_BEAMMCP["TASKS"], "PER_PRINCIPAL": 100_000}}
