"""The HTTP endpoint's policy, read from ``BEAMMCP`` and Django's own settings once per
process (again after a setting changes): the transport reads no setting itself, it is handed
this ``HttpPolicy`` (``asgi.build_endpoint``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.module_loading import import_string

from beammcp_django import notify
from beammcp_django.conf import forget_on_change, get_settings
from beammcp_django.servers.session_cache import shared_session_store
from beammcp_django.transports.policy import HttpPolicy
from beammcp_django.transports.sessions.store import SessionBounds

# Set by ``manage.py mcp_serve`` for its workers: how many serve the one socket.
SERVE_WORKERS = "BEAMMCP_SERVE_WORKERS"


def legacy_sessions_served(values: Mapping[str, Any]) -> bool:
    """Whether this process serves 2025-11-25 sessions: ``HTTP_LEGACY_SESSIONS``, unless it is
    one of several ``mcp_serve`` workers with sessions kept in the process. Such a session
    lives in the process that opened it, and a later request of it may reach another worker,
    which would answer 404; so then ``initialize`` is refused by every one of them (as a
    2026-07-28-only endpoint answers it), which the command's banner says, rather than
    failing now and then. With ``SESSION_CACHE`` every worker shares them."""
    if not values["HTTP_LEGACY_SESSIONS"]:
        return False
    return values["SESSION_CACHE"] is not None or os.environ.get(SERVE_WORKERS, "1") == "1"


@lru_cache(maxsize=1)
def get_http_policy() -> HttpPolicy:
    return policy_from_settings(get_settings())


forget_on_change(get_http_policy.cache_clear)


def host_check(allowed_hosts: Sequence[str]) -> Callable[[str], bool]:
    """Django's rule for a Host value (``HttpRequest.get_host()``): its domain, port aside,
    matched against ``allowed_hosts`` (a leading dot a subdomain wildcard, ``*`` any)."""
    hosts = list(allowed_hosts)

    def serves(host: str) -> bool:
        domain, _ = split_domain_port(host)
        return bool(domain) and validate_host(domain, hosts)

    return serves


def policy_from_settings(values: Mapping[str, Any]) -> HttpPolicy:
    """The HTTP endpoint's policy from ``BEAMMCP`` and Django's own settings: the transport
    reads no setting itself."""
    origins = values["ALLOWED_ORIGINS"]
    allowed_hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]  # as Django's get_host() does
    hook = values["AUTHORIZE"]
    body_hook = values["AUTHORIZE_BODY"]
    return HttpPolicy(
        allowed_origins=None if origins == "any" else frozenset(origins or ()),
        serves_host=host_check(allowed_hosts),
        use_forwarded_host=bool(getattr(settings, "USE_X_FORWARDED_HOST", False)),
        authorize=import_string(hook) if isinstance(hook, str) else hook,
        body_timeout=float(values["BODY_READ_TIMEOUT_SECONDS"]),
        authorize_body=import_string(body_hook) if isinstance(body_hook, str) else body_hook,
        subscription_max_seconds=float(values["SUBSCRIPTION_MAX_SECONDS"]),
        subscription_queue_limit=int(values["SUBSCRIPTION_QUEUE_LIMIT"]),
        subscription_reauthorize_seconds=float(values["SUBSCRIPTION_REAUTHORIZE_SECONDS"]),
        subscription_channel=subscription_channel,
        sessions=SessionBounds(
            idle_seconds=float(values["SESSION_IDLE_SECONDS"]),
            limit=int(values["SESSION_LIMIT"]),
            per_principal=int(values["SESSIONS_PER_PRINCIPAL"]),
            pending_answers=int(values["SESSION_PENDING_ANSWERS"]),
            answer_seconds=float(values["SESSION_ANSWER_SECONDS"]),
            held_events=int(values["SESSION_HELD_EVENTS"]),
            resume_seconds=float(values["SESSION_RESUME_SECONDS"]),
        )
        if legacy_sessions_served(values)
        else None,
        session_store=shared_session_store if values["SESSION_CACHE"] is not None else None,
        resource_metadata=_resource_metadata_url(),
        rate_limit=import_string(values["RATE_LIMIT"]) if values["RATE_LIMIT"] else None,
        handler_headers=tuple(values["HANDLER_HEADERS"]),
    )


def _resource_metadata_url() -> str | None:
    from beammcp_django.oauth.bearer import configured_resource_server

    server = configured_resource_server()
    return server.metadata_url if server is not None else None


def subscription_channel() -> tuple[Any, str]:
    """The Channels layer (``BEAMMCP["CHANNEL_LAYER"]``, else this process's in-memory one)
    and the group listen streams join."""
    return notify.channel_layer(), notify.GROUP
