"""The authorization hooks' contract. The package decides nothing: the host's hook does.

``BEAMMCP["AUTHORIZE"]`` names a callable (sync or async) that receives an ``HttpRequestInfo``
before the body is read and answers:

- ``True``: serve, with no principal (``context.principal`` is None);
- a ``Refusal``, or anything false (``False``, ``None``, ``""``, ``0``, an empty container):
  refuse, so ``return token and lookup(token)`` refuses an empty token;
- a ``Grant``: serve, naming the principal and the OAuth scopes its token carries (host
  code sees ``context.principal`` and ``context.scopes``; an entry that declares scopes is
  used only with all of them, else the request is challenged 403 ``insufficient_scope``);
- any other object: serve, and that object is the request's principal, who is calling as the
  host knows it (a Django user, a service account, a token's claims): host code sees it as
  ``context.principal``. It carries no scopes: over HTTP, an entry that declares scopes is
  challenged for every such request.

There is no default: a project that wants every caller served writes
``"AUTHORIZE": "beammcp_django.authorization.allow_all"`` and so says it.

``BEAMMCP["AUTHORIZE_BODY"]`` optionally names a second hook, ``(request, body) -> ...``, run
after the body is read on the exact bytes as sent, before any decoding: what a request
signature covers. It answers ``True`` to serve; anything else refuses (it names no
principal: the principal is ``AUTHORIZE``'s, one hook's answer).

The caller sees only the status (401 or 403) and, for 401, the ``WWW-Authenticate`` the hook
chose; the reason goes to the server log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from beammcp_django.protocol.context import EMPTY, NO_FACTS, CallerFacts


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


@dataclass(frozen=True)
class Grant:
    """A yes naming what the caller's credential carries: the principal, and the OAuth scopes
    its token was granted (as the authorization server wrote them, a broader scope already
    widened to the narrower ones it implies: the core compares names only); when it ends;
    and what host code may read beside (``claims``, ``values``), kept as read-only views
    (shallow: a nested dict inside stays the caller's), since one grant may serve many
    requests at once from the bearer cache."""

    principal: Any
    scopes: frozenset[str] = frozenset()
    # When the credential ends (seconds since the epoch, as ``time.time()``), if it does: a
    # stream it opened is closed then, whatever its next re-check would say.
    expires_at: float | None = None
    # What the credential says, for host code (``context.claims``): a JWT's claims, the
    # OAuth client's id. Read-only to handlers; the package decides nothing on it.
    claims: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    # What the hook chose to pass on to host code (``context.values``): a tenant it
    # resolved, a plan, a request's budget.
    values: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    # What host code reads of this grant when no header is named, made once: a grant the
    # bearer cache serves to many requests costs none of them an allocation.
    facts: CallerFacts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.claims) is not MappingProxyType:
            object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))
        if type(self.values) is not MappingProxyType:
            object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        bare = not self.claims and not self.values
        object.__setattr__(
            self, "facts", NO_FACTS if bare else CallerFacts(self.claims, self.values)
        )


def expiry_of(verdict: Any) -> float | None:
    """When the credential a yes of ``AUTHORIZE`` names ends: a ``Grant``'s ``expires_at``."""
    return verdict.expires_at if type(verdict) is Grant else None


def facts_of(verdict: Any, info: HttpRequestInfo, named: Sequence[str]) -> CallerFacts:
    """What host code reads beside the principal: a ``Grant``'s claims and values, and the
    request headers ``named`` (``HANDLER_HEADERS``) that were sent once. The one shared
    ``NO_FACTS`` when there is nothing: no allocation on a request that carries none."""
    facts = verdict.facts if type(verdict) is Grant else NO_FACTS
    if not named:
        return facts
    found = {name: value for name in named if (value := info.header(name)) is not None}
    if not found:
        return facts
    return CallerFacts(facts.claims, facts.values, MappingProxyType(found))


def granted(verdict: Any) -> tuple[Any, frozenset[str]]:
    """The principal and the scopes a yes of ``AUTHORIZE`` names (``None`` or ``True``:
    neither)."""
    if verdict is None or verdict is True:
        return None, frozenset()
    if type(verdict) is Grant:
        return verdict.principal, verdict.scopes
    return verdict, frozenset()


def scope_challenge(scopes: Sequence[str], resource_metadata: str | None) -> str:
    """The ``WWW-Authenticate`` value of a 403 for a token that lacks ``scopes`` (the
    authorization spec's Scope Challenge Handling, RFC 6750 §3.1): every scope the request
    needs, and where the resource's metadata is. Scope names are checked at startup to hold
    no quote or backslash (RFC 6749 §3.3), so they are written as they are."""
    challenge = f'Bearer error="insufficient_scope", scope="{" ".join(scopes)}"'
    if resource_metadata:
        challenge += f', resource_metadata="{resource_metadata}"'
    return challenge


def refuses(verdict: Any) -> bool:
    """Whether an ``AUTHORIZE`` answer other than ``True`` refuses (rather than naming the
    principal): a ``Refusal`` and anything false do."""
    return isinstance(verdict, Refusal) or not verdict


async def allow_all(request: HttpRequestInfo) -> bool:
    """Serve every caller. Name it in settings to say so deliberately. (A coroutine function:
    the endpoint awaits it on the loop; a sync hook costs a worker-thread round trip.)"""
    return True
