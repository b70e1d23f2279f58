"""Settings for ``bench/handles.py``: ``bench/bench_settings.py`` plus ``bench.handleapp`` (a
kind of handle and its tools), the caller named by the ``X-Bench-Principal`` header
(``bench/handles_hook.py``): two principals on one server."""

from bench.bench_settings import *  # noqa: F403
from bench.bench_settings import BEAMMCP as _BEAMMCP
from bench.bench_settings import INSTALLED_APPS as _APPS

INSTALLED_APPS = [*_APPS, "bench.handleapp"]
BEAMMCP = {**_BEAMMCP, "AUTHORIZE": "bench.handles_hook.authorize"}
