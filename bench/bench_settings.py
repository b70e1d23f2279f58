"""Settings for ``bench/http.py``: the sample project as served in production, plus
``benchapp`` (the async ``echo_async`` tool).

Imported as ``bench.bench_settings`` from the repository root (``bench`` is a namespace
package). What differs from the sample:
DEBUG is off (no query log, no debug pages), and ``BENCH_OBSERVE=0`` in the environment turns
``CONNECTOME_OBSERVE`` off for the variant that prices the collector, and ``BENCH_FREEZE=0``
turns ``FREEZE_HEAP_AT_STARTUP`` (on in the sample) off for the variant that prices it. The
database is ``DATABASE_URL`` (the driver points it at a fresh migrated SQLite file). The sample's
``AUTHORIZE`` (``allow_all``) and ``ALLOWED_ORIGINS`` are kept: the bench sends no Origin.
``SESSIONS_PER_PRINCIPAL`` is raised for ``bench/sessions.py``, whose sessions all come from
one address with no principal; ``BENCH_REDIS_URL`` (``bench/sessions.py --store redis``) keeps
them in that Redis (``SESSION_CACHE``), with Channels' Redis layer on it, as several workers
would.
"""

import os

from sample_project import settings as _sample

globals().update({name: value for name, value in vars(_sample).items() if name.isupper()})

DEBUG = False
INSTALLED_APPS = [*_sample.INSTALLED_APPS, "bench.benchapp"]

BEAMMCP = dict(_sample.BEAMMCP)
BEAMMCP["CONNECTOME_OBSERVE"] = os.environ.get("BENCH_OBSERVE", "1") != "0"
BEAMMCP["FREEZE_HEAP_AT_STARTUP"] = os.environ.get("BENCH_FREEZE", "1") != "0"
# bench/sessions.py opens its 1,000 sessions from one address, with no principal (allow_all):
# more than the one address's default share of SESSIONS_PER_PRINCIPAL (100).
BEAMMCP["SESSIONS_PER_PRINCIPAL"] = 10_000

if os.environ.get("BENCH_REDIS_URL"):
    _REDIS = os.environ["BENCH_REDIS_URL"]
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _REDIS}
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": _REDIS, "socket_timeout": 30}]},
        }
    }
    BEAMMCP["SESSION_CACHE"] = "default"
