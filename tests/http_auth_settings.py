"""``tests/http_settings.py`` with the authorization tests' switches, read when the server
process starts (kept apart so the figures measured with that module stay its own):

- ``BEAMMCP_TEST_OAUTH`` makes the endpoint a resource server whose tokens are
  ``tests.principals.tokens``' signed claims, serving the principal tools alone;
- ``BEAMMCP_TEST_JWKS_URL`` makes it the same resource server with the JWT validator: the
  tokens are JWTs of ``tests.oauth.issuer``, whose JWKS is served at that URL, and their
  ``sub`` names a Django user (``tests.oauth.principals.user_of``);
- ``BEAMMCP_TEST_RATE_LIMIT`` names ``tests.principals.limits.limit`` as ``RATE_LIMIT``.
"""

import os

from tests import http_settings as _http

globals().update({name: value for name, value in vars(_http).items() if name.isupper()})

BEAMMCP = dict(_http.BEAMMCP)
_RESOURCE_SERVER = {
    "RESOURCE": "http://127.0.0.1:8000/mcp",
    "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"],
    "SCOPES_SUPPORTED": ["notes.read"],
    "SCOPES_IMPLY": {"notes": ["notes.read", "notes.write"]},
}
if os.environ.get("BEAMMCP_TEST_RATE_LIMIT"):
    BEAMMCP["RATE_LIMIT"] = "tests.principals.limits.limit"
if os.environ.get("BEAMMCP_TEST_OAUTH"):
    BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"
    BEAMMCP["OAUTH"] = {**_RESOURCE_SERVER, "TOKENS": "tests.principals.tokens.SignedTokens"}
    BEAMMCP["CATALOG"] = "tests.principals.catalog.site"
if os.environ.get("BEAMMCP_TEST_JWKS_URL"):
    BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"
    BEAMMCP["OAUTH"] = {
        **_RESOURCE_SERVER,
        "TOKENS": "beammcp_django.oauth.jwt.JwtTokens",
        "JWT": {
            "ISSUER": "http://127.0.0.1:8000/o",
            "JWKS_URL": os.environ["BEAMMCP_TEST_JWKS_URL"],
            # Short, so the test sees a refetch (and the issuer's outage) within a second.
            "JWKS_REFETCH_SECONDS": 1,
            "PRINCIPAL": "tests.oauth.principals.user_of",
        },
    }
    BEAMMCP["CATALOG"] = "tests.principals.catalog.site"
