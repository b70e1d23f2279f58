"""What the HTTP endpoint is told by the layer that builds it: its settings, read once per
server build, and the memo of Host values already found allowed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.authorization import HttpRequestInfo
from beammcp_django.protocol import wire
from beammcp_django.transports.sessions.store import SessionBounds, SessionStore


class ServedHosts:
    """Host header values already validated as allowed, at most ``LIMIT`` of them: the caller
    chooses the header (a wildcard like ``.example.com`` admits endless names), so the memo
    forgets everything when full rather than grow."""

    LIMIT = 64

    def __init__(self) -> None:
        self._hosts: set[str] = set()

    def __contains__(self, host: str) -> bool:
        return host in self._hosts

    def __len__(self) -> int:
        return len(self._hosts)

    def remember(self, host: str) -> None:
        if len(self._hosts) >= self.LIMIT:
            self._hosts.clear()
        self._hosts.add(host)


@dataclass(frozen=True)
class HttpPolicy:
    """The endpoint's settings, read once per server build."""

    allowed_origins: frozenset[str] | None  # None: any origin, written out as "any"
    # Whether a Host value (as sent, port included) names this server: the Django layer's
    # rule (ALLOWED_HOSTS, as HttpRequest.get_host() applies it).
    serves_host: Callable[[str], bool]
    use_forwarded_host: bool
    authorize: Callable[[HttpRequestInfo], Any]
    body_timeout: float
    authorize_body: Callable[[HttpRequestInfo, bytes], Any] | None = None
    subscription_max_seconds: float = 3600.0
    subscription_queue_limit: int = 64
    subscription_reauthorize_seconds: float = 60.0
    max_body: int = wire.MAX_MESSAGE_BYTES
    # The channel layer and group that carry change announcements to listen streams (the
    # Django layer's Channels layer); None: subscriptions/listen is not carried.
    subscription_channel: Callable[[], tuple[Any, str]] | None = None
    # 2025-11-25 sessions beside stateless 2026-07-28, within these bounds; None: 2026-07-28
    # only (HTTP_LEGACY_SESSIONS off).
    sessions: SessionBounds | None = None
    # Where those sessions live when every worker shares them (Redis, SESSION_CACHE); None:
    # in this process.
    session_store: Callable[[], SessionStore] | None = None
    # The URL of the resource's Protected Resource Metadata (RFC 9728), named in the
    # challenges of requests whose token lacks a scope; None: no OAuth resource configured.
    resource_metadata: str | None = None
    # The host's rate limit (limits.py), asked before each request is served; None: none.
    rate_limit: Callable[[Any, str], Any] | None = None
    # The request headers host code reads (``context.headers``), lower-case: HANDLER_HEADERS.
    handler_headers: tuple[str, ...] = ()
    # Host header values already found allowed: Django's check costs ~20 µs a request here.
    served_hosts: ServedHosts = field(default_factory=ServedHosts, compare=False)
