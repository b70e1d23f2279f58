"""``tests/http_settings.py`` serving the handle tests' catalog (``tests/handles/sites.py``)."""

from tests.http_settings import *  # noqa: F403
from tests.http_settings import BEAMMCP as _BEAMMCP

BEAMMCP = {**_BEAMMCP, "CATALOG": "tests.handles.sites.SITE"}
