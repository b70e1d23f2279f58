"""``tests/http_settings.py`` with the authorization tests' switches, read when the server
process starts (kept apart so the figures measured with that module stay its own):

- ``BEAMMCP_TEST_OAUTH`` makes the endpoint a resource server whose tokens are
  ``tests.principals.tokens``' signed claims, serving the principal tools alone;
- ``BEAMMCP_TEST_RATE_LIMIT`` names ``tests.principals.limits.limit`` as ``RATE_LIMIT``.
"""

import os

from tests import http_settings as _http

globals().update({name: value for name, value in vars(_http).items() if name.isupper()})

BEAMMCP = dict(_http.BEAMMCP)
if os.environ.get("BEAMMCP_TEST_RATE_LIMIT"):
    BEAMMCP["RATE_LIMIT"] = "tests.principals.limits.limit"
if os.environ.get("BEAMMCP_TEST_OAUTH"):
    BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"
    BEAMMCP["OAUTH"] = {
        "RESOURCE": "http://127.0.0.1:8000/mcp",
        "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"],
        "SCOPES_SUPPORTED": ["notes.read"],
        "SCOPES_IMPLY": {"notes": ["notes.read", "notes.write"]},
        "TOKENS": "tests.principals.tokens.SignedTokens",
    }
    BEAMMCP["CATALOG"] = "tests.principals.catalog.site"
