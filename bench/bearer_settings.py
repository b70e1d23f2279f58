"""Settings for ``bench/bearer.py``: ``bench/bench_settings.py`` (the sample as served in
production) with django-oauth-toolkit installed, for both servers the bench compares; with
``BENCH_AUTH=bearer`` the endpoint is a resource server (``beammcp_django.oauth.bearer``)
validating the toolkit's tokens, else it keeps the sample's ``allow_all``."""

import os

from bench import bench_settings as _bench

globals().update({name: value for name, value in vars(_bench).items() if name.isupper()})

INSTALLED_APPS = [*_bench.INSTALLED_APPS, "oauth2_provider"]
RESOURCE = "http://127.0.0.1:8000/mcp"

BEAMMCP = dict(_bench.BEAMMCP)
if os.environ.get("BENCH_AUTH") == "bearer":
    BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"
    BEAMMCP["OAUTH"] = {
        "RESOURCE": RESOURCE,
        "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"],
        "TOKENS": "beammcp_django.oauth.toolkit.ToolkitTokens",
    }
