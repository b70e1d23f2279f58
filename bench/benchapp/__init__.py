"""A bench-only Django app: the async twin of the sample's ``echo`` tool (``echo_async``).

Installed only by ``bench/bench_settings.py``, never by the package or the sample project.
"""
