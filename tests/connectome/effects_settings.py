"""The HTTP tests' settings and ``tests.connectome.effectsapp``, with mail sent through the
observing wrapper of the in-memory backend (``docs/connectome.md``)."""

from tests.http_settings import *  # noqa: F403
from tests.http_settings import BEAMMCP as _BEAMMCP
from tests.http_settings import INSTALLED_APPS as _APPS

INSTALLED_APPS = [*_APPS, "tests.connectome.effectsapp"]
EMAIL_BACKEND = "beammcp_django.connectome.mail.ObservingEmailBackend"
BEAMMCP = {**_BEAMMCP, "CONNECTOME_EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend"}
