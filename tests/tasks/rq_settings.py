"""The real-server test settings (``tests.http_settings``) with the tasks run by RQ workers
on the redis-server the test starts (``BEAMMCP_TEST_RQ_URL``), through django-tasks-rq,
instead of django-tasks-db's: a queue's backend, as production may name one."""

import os

from tests.http_settings import *  # noqa: F403
from tests.http_settings import INSTALLED_APPS as _APPS

INSTALLED_APPS = [*_APPS, "django_rq"]
TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
RQ_QUEUES = {"default": {"URL": os.environ.get("BEAMMCP_TEST_RQ_URL", "redis://127.0.0.1:1/0")}}
