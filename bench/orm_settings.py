"""Settings for ``bench/orm.py``: ``bench/bench_settings.py`` (the sample as served in
production) with the database connection handling ``BENCH_DB_MODE`` names.

- ``as-is``: ``DATABASE_URL`` as the sample reads it: on PostgreSQL ``CONN_MAX_AGE`` 0 (a
  connection per host call), PostgreSQL's first figure; on SQLite, the baseline, each thread
  keeping its connection (the sample's ``CONN_MAX_AGE`` 600 since 2026-12-07);
- ``persistent``: ``CONN_MAX_AGE`` 600 with ``CONN_HEALTH_CHECKS``: each host worker thread
  keeps its own connection;
- ``documented``: the ``DATABASES`` block of docs/deployment.md, executed as written
  (a psycopg pool per process).
"""

import os

from bench import bench_settings as _bench
from sample_project.settings import env  # noqa: F401 - the documented block reads it
from tests.databases import documented_setting

globals().update({name: value for name, value in vars(_bench).items() if name.isupper()})

MODE = os.environ.get("BENCH_DB_MODE", "as-is")
DATABASES = {"default": dict(_bench.DATABASES["default"])}
if MODE == "persistent":
    DATABASES["default"].update({"CONN_MAX_AGE": 600, "CONN_HEALTH_CHECKS": True})
elif MODE == "documented":
    exec(documented_setting(), globals())  # defines DATABASES, as a host's settings.py does
elif MODE != "as-is":
    raise ValueError(f"BENCH_DB_MODE={MODE!r}: as-is, persistent or documented")
