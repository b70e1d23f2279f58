"""The authorization hooks' contract. The package decides nothing: the host's hook does.

``BEAMMCP["AUTHORIZE"]`` names a callable (sync or async) that receives an ``HttpRequestInfo``
before the body is read and returns True to serve, or False / a ``Refusal`` to refuse. There is
no default: a project that wants every caller served writes
``"AUTHORIZE": "beammcp_django.authorization.allow_all"`` and so says it.

``BEAMMCP["AUTHORIZE_BODY"]`` optionally names a second hook, ``(request, body) -> ...`` with the
same answers, run after the body is read on the exact bytes as sent, before any decoding:
what a request signature covers.

The caller sees only the status (401 or 403) and, for 401, the ``WWW-Authenticate`` the hook
chose; the reason goes to the server log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class HttpRequestInfo:
    """What a pre-body hook may look at. Header names are lower-case; every value is kept."""

    method: str
    path: str
    headers: Mapping[str, Sequence[str]]
    client: tuple[str, int] | None

    def header(self, name: str) -> str | None:
        """The header's value when it appears once (or repeats identically), else None."""
        values = self.headers.get(name.lower(), ())
        return values[0] if values and all(value == values[0] for value in values) else None


@dataclass(frozen=True)
class Refusal:
    """A refusal: 401 (with an optional ``WWW-Authenticate``) or 403. ``reason`` is logged."""

    status: int = 403
    reason: str = "refused by the authorize hook"
    www_authenticate: str | None = None

    def __post_init__(self) -> None:
        if self.status not in (401, 403):
            raise ValueError("a Refusal's status is 401 or 403")


async def allow_all(request: HttpRequestInfo) -> bool:
    """Serve every caller. Name it in settings to say so deliberately. (A coroutine function:
    the endpoint awaits it on the loop; a sync hook costs a worker-thread round trip.)"""
    return True
