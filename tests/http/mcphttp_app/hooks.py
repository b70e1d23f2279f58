"""An authorize hook the tests script through request headers.

``X-Mcphttp-Authorize`` picks the verdict: absent serves; ``deny`` returns False;
``refuse-403`` and ``refuse-401`` return a ``Refusal`` whose reason carries ``SECRET``;
``raise`` raises an exception carrying ``SECRET``; ``principal:NAME`` serves with the principal
``Caller(NAME)`` (``tests.principals``); ``empty`` answers ``""``, which refuses. A browser
page can send no such header without a preflight allowing it, so ``Authorization: Bearer
<verdict>`` picks the same verdicts (the CORS browser test). ``X-Mcphttp-Record: <token>``
makes the hook write what it saw to ``$MCPHTTP_RECORD_DIR/<token>.hook`` as JSON.
"""

from __future__ import annotations

import json

from beammcp_django.authorization import HttpRequestInfo, Refusal
from tests.http.mcphttp_app.markers import write_marker
from tests.principals.tools import Caller

# Must never reach a client; kept in step with tests/http/mcphttp_support.py.
SECRET = "mcphttp-hook-secret-51d0e2-do-not-leak"
RESOURCE_METADATA = (
    'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'
)


def authorize(request: HttpRequestInfo) -> bool | Refusal | Caller:
    token = request.header("x-mcphttp-record")
    if token:
        seen = {
            "method": request.method,
            "path": request.path,
            "client": list(request.client) if request.client else None,
            "headers": {name: list(values) for name, values in request.headers.items()},
        }
        write_marker(token, "hook", json.dumps(seen))
    verdict = request.header("x-mcphttp-authorize")
    bearer = request.header("authorization") or ""
    if verdict is None and bearer.startswith("Bearer "):
        verdict = bearer.removeprefix("Bearer ")
    if verdict == "deny":
        return False
    if verdict == "refuse-403":
        return Refusal(403, reason=f"refused: {SECRET}")
    if verdict == "refuse-401":
        return Refusal(401, reason=f"refused: {SECRET}", www_authenticate=RESOURCE_METADATA)
    if verdict == "raise":
        raise RuntimeError(f"the hook broke: {SECRET}")
    if verdict == "empty":
        return ""  # a false answer: what `return token and lookup(token)` gives for no token
    if verdict is not None and verdict.startswith("principal:"):
        return Caller(verdict.removeprefix("principal:"))
    return True


SIGNING_KEY = b"mcphttp-body-signing-key"


def authorize_body(request: HttpRequestInfo, body: bytes) -> bool | Refusal | Caller:
    """The after-read hook, scripted by ``X-Mcphttp-Body``: ``deny``, ``raise``, ``principal``
    (answers a principal, which this hook cannot name), or
    ``signed`` (``X-Mcphttp-Signature`` must be the HMAC-SHA256 of the exact body bytes).
    With ``X-Mcphttp-Record`` it also writes the bytes it saw to ``<token>.body``."""
    import hashlib
    import hmac

    token = request.header("x-mcphttp-record")
    if token:
        write_marker(token, "body", body.decode("latin-1"))
    mode = request.header("x-mcphttp-body")
    if mode == "deny":
        return False
    if mode == "raise":
        raise RuntimeError(f"the body hook broke: {SECRET}")
    if mode == "principal":
        return Caller("from-the-body-hook")  # names no principal: refused
    if mode == "signed":
        expected = hmac.new(SIGNING_KEY, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, request.header("x-mcphttp-signature") or ""):
            return Refusal(401, reason=f"bad signature {SECRET}", www_authenticate="Signature")
    return True
