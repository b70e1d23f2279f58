"""Settings for ``bench/serve_paths.py``'s ``ours-debug``: ``bench/bench_settings.py`` with
``DEBUG`` on, as the sample ships it, to price ``DEBUG`` apart from the access log."""

from bench.bench_settings import *  # noqa: F403

DEBUG = True
