"""The settings of the deployment tests: ``tests.http_settings`` (the sample project and the
test apps) with the production settings block of docs/deployment.md executed as written, on
the test's Redis (``BEAMMCP_DEPLOY_REDIS_URL``). The rest of the documented configuration is
the environment the test gives the server (the page's environment block)."""

import os

from tests import http_settings as _base
from tests.deployment.page import settings_block

globals().update({name: value for name, value in vars(_base).items() if name.isupper()})

# The page's block, run in this module's namespace: CHANNEL_LAYERS, CACHES and LOGGING.
exec(settings_block(os.environ["BEAMMCP_DEPLOY_REDIS_URL"]))
