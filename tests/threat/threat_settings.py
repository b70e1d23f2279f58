"""Settings for the threat-model tests: ``tests.http_settings`` (the sample project,
``tests.faultapp``, the scriptable hooks) with host calls bounded to ``CALL_TIMEOUT``
seconds, so a hanging handler is answered within the test's patience. Used by the uvicorn,
daphne and ``manage.py mcp_stdio`` processes these tests start."""

from tests.http_settings import *  # noqa: F403
from tests.http_settings import BEAMMCP as _HTTP_BEAMMCP

# Kept in step with tests/threat/conftest.py.
CALL_TIMEOUT = 1.0

BEAMMCP = {**_HTTP_BEAMMCP, "CALL_TIMEOUT_SECONDS": CALL_TIMEOUT}

# The threat model is the production posture, DEBUG off: with it on an internal error names
# its cause to the client, as Django's own error pages do (tests/protocol/test_faults.py).
DEBUG = False
