"""The process's MCP servers, built from settings on first use and shared by every request.

Built lazily, on the first request: Django's ASGI handler runs no lifespan protocol, so
nothing may wait for a startup event. The exception is ``FREEZE_HEAP_AT_STARTUP``, which
builds the server while the process is set up (``prepare_process``), synchronously, before
freezing the heap. One server serves HTTP (2026-07-28 only); one serves stdio (dual-era).
Both read the same catalog object.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import close_old_connections, connections
from django.http.request import split_domain_port, validate_host
from django.utils.crypto import salted_hmac
from django.utils.module_loading import import_string

import beammcp_django
from beammcp_django import notify, observability
from beammcp_django.conf import forget_on_change, get_settings, load_catalog
from beammcp_django.connectome.exports import start_observing
from beammcp_django.connectome.observed import process_collector
from beammcp_django.protocol.errors import INTERNAL_ERROR, ProtocolError
from beammcp_django.protocol.round_trips import InvalidState
from beammcp_django.protocol.server import BoundHost, CacheHint, Server, ServerOptions
from beammcp_django.threads import ThreadsPerLoop
from beammcp_django.transports import Deadline
from beammcp_django.transports.http import HttpPolicy


def _with_connection_hygiene(function: Callable[..., Any], *args: Any) -> Any:
    # Sync host code runs in a pool thread whose connection outlives one call: drop it if
    # it is broken or past CONN_MAX_AGE, before and after, as Django does around a request.
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


# Idle worker threads end after a minute, closing their database connections first.
host_threads = ThreadsPerLoop(on_exit=connections.close_all)
# The core's own CPU work for large messages (their validation), two threads a loop: the
# work holds the GIL for most of its time, so more threads would add no throughput.
core_threads = ThreadsPerLoop(limit=2)


def run_sync_host(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run sync host code in a worker thread (never on the event loop), with the caller's
    context variables and Django's connection hygiene around it; await the future for its
    outcome. A function returning the future, not a coroutine: one fewer to create and to
    resume on every sync call."""
    return host_threads.run(_with_connection_hygiene, function, *args)


logger = logging.getLogger("beammcp_django")


def call_deadline(seconds: float) -> BoundHost:
    """Bound every host call to ``seconds``: past it the caller gets -32603 naming the limit.

    An async handler is cancelled at the deadline. A sync handler cannot be: Python has no
    way to stop a thread, so its worker thread stays busy until the handler returns, and only
    the caller is released (docs/threat-model.md).
    """

    async def bounded(pending: Awaitable[Any]) -> Any:
        deadline = Deadline(seconds)
        try:
            with deadline:
                return await pending
        except TimeoutError:
            if not deadline.expired:
                raise  # the host's own TimeoutError, not our deadline
            logger.warning("MCP host call passed BEAMMCP['CALL_TIMEOUT_SECONDS'] (%g s)", seconds)
            raise ProtocolError(
                INTERNAL_ERROR, f"the host did not answer within {seconds:g} s"
            ) from None

    return bounded


def server_options(*, legacy: bool) -> ServerOptions:
    """Options from settings; HTTP (not legacy) holds subscriptions/listen streams."""
    values = get_settings()
    hints = {
        method: CacheHint(ttl_ms=hint.get("ttl_ms", 0), scope=hint.get("scope", "private"))
        for method, hint in values["CACHE_HINTS"].items()
    }
    return ServerOptions(
        name=values["SERVER_NAME"],
        version=values["SERVER_VERSION"] or beammcp_django.__version__,
        title=values["SERVER_TITLE"],
        instructions=values["INSTRUCTIONS"],
        page_size=values["PAGE_SIZE"],
        cache_hints=hints,
        legacy=legacy,
        subscriptions=not legacy,
    )


class SignedRequestState:
    """``requestState`` sealed with Django's signing: signed with SECRET_KEY, accepted under
    SECRET_KEY_FALLBACKS too (a retry may land on any worker, across a key rotation), expiring
    after ``max_age`` seconds, and bound to the request that issued it."""

    salt = "beammcp_django.request_state"

    def __init__(self, max_age: float) -> None:
        self.max_age = max_age

    def seal(self, state: Any, binding: str) -> str:
        return signing.dumps({"b": binding, "s": state}, salt=self.salt, compress=True)

    def open(self, token: str, binding: str) -> Any:
        try:
            # The signature is checked before anything is decompressed or decoded.
            payload = signing.loads(token, salt=self.salt, max_age=self.max_age)
        except signing.SignatureExpired:
            raise InvalidState("has expired") from None
        except signing.BadSignature:
            raise InvalidState("failed its integrity check") from None
        if type(payload) is not dict or payload.get("b") != binding:
            raise InvalidState("was issued for another request")
        return payload.get("s")


def cursor_key(secret: str | None = None) -> bytes:
    """A key for pagination cursors derived from SECRET_KEY (or ``secret``), so any worker
    accepts them.

    The algorithm is named: ``salted_hmac``'s default is SHA-1 and Django announces it will
    become SHA-256, so workers on two Django versions would derive different keys and refuse
    each other's cursors. Naming SHA-256 keeps the key the same on every Django version."""
    return salted_hmac(
        "beammcp_django.cursor", "pagination", secret=secret, algorithm="sha256"
    ).digest()


def cursor_fallback_keys() -> tuple[bytes, ...]:
    """The cursor keys of SECRET_KEY_FALLBACKS: cursors minted before a key rotation are
    still accepted, as signed values are (``requestState`` among them)."""
    return tuple(cursor_key(secret) for secret in settings.SECRET_KEY_FALLBACKS)


def get_server(*, legacy: bool = False) -> Server:
    """The shared server: HTTP's (2026-07-28 only) or, with ``legacy``, stdio's (dual-era)."""
    return _build_server(legacy)


@lru_cache(maxsize=2)
def _build_server(legacy: bool) -> Server:
    return build_server(legacy=legacy)


def build_server(
    *,
    legacy: bool,
    run_sync: Callable[..., Awaitable[Any]] = run_sync_host,
    observed: bool = True,
) -> Server:
    """A server built from settings. Requests go to the shared one (``get_server``);
    ``beammcp_django.test`` builds its own with another ``run_sync``, which keeps sync host
    code on the test's thread (its database connection holds the test's transaction), and
    not ``observed``: its calls are not counted in the connectome, and it starts no flusher
    (which would write a test's counts to the store, at exit into the real database)."""
    observe = observed and get_settings()["CONNECTOME_OBSERVE"]
    if observe:
        start_observing()
    return Server(
        load_catalog(),
        server_options(legacy=legacy),
        cursor_key=cursor_key(),
        cursor_fallback_keys=cursor_fallback_keys(),
        run_sync=run_sync,
        state_codec=SignedRequestState(get_settings()["REQUEST_STATE_MAX_AGE_SECONDS"]),
        observe=process_collector.record if observe else None,
        bound_host=call_deadline(timeout)
        if (timeout := get_settings()["CALL_TIMEOUT_SECONDS"])
        else None,
        offload=core_threads.run,
        # A span per host call, when the OpenTelemetry API is there to make one.
        trace_host=observability.host_span if observability.TRACING_INSTALLED else None,
    )


def prepare_process(*, legacy: bool) -> None:
    """With ``BEAMMCP['FREEZE_HEAP_AT_STARTUP']``: build now what the first request would
    build (the server, and HTTP's policy), then move every object alive into the collector's
    permanent generation (``gc.freeze``).

    Why: a full collection walks every tracked object, and a Django process starts with
    about 90,000 of them; on the benchmark machine each full collection paused the loop for
    about 70 ms (21 ms with the freeze), which made the tail latency of a loaded endpoint
    (bench/gc_pauses.py, docs/performance.md).
    Frozen objects are never collected, so this is for the objects a process keeps for its
    life: call it once, when the process is set up. Off by default: it is a choice for the
    whole process, which the host owns.
    """
    if not get_settings()["FREEZE_HEAP_AT_STARTUP"]:
        return
    get_server(legacy=legacy)
    if not legacy:
        get_http_policy()
    gc.collect()
    gc.freeze()


@forget_on_change
def forget_servers() -> None:
    _build_server.cache_clear()
    get_http_policy.cache_clear()


@lru_cache(maxsize=1)
def get_http_policy() -> HttpPolicy:
    return policy_from_settings(get_settings())


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
    )


def subscription_channel() -> tuple[Any, str]:
    """The Channels layer (``BEAMMCP["CHANNEL_LAYER"]``, else this process's in-memory one)
    and the group listen streams join."""
    return notify.channel_layer(), notify.GROUP
