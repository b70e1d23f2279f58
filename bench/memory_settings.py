"""Settings for ``bench/memory.py``: the HTTP bench's settings plus ``bench.memoryapp``."""

from bench import bench_settings as _bench

globals().update({name: value for name, value in vars(_bench).items() if name.isupper()})

INSTALLED_APPS = [*_bench.INSTALLED_APPS, "bench.memoryapp"]
