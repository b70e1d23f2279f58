"""The one place settings are read: ``settings.BEAMMCP`` merged over documented defaults.

Read once per process and again only when Django's ``setting_changed`` signal says the dict
changed (tests use ``override_settings``). ``docs/settings.md`` documents every key.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from beammcp_django.protocol.revisions import CACHEABLE_METHODS

DEFAULTS: dict[str, Any] = {
    # Dotted path to the catalog object; the default is the autodiscovered site.
    "CATALOG": "beammcp_django.registry.site",
    # serverInfo: the host names its server; the package only supplies a fallback.
    "SERVER_NAME": "beammcp-django",
    "SERVER_VERSION": None,  # None: the package version
    "SERVER_TITLE": None,
    "INSTRUCTIONS": None,
    # Items per page of tools/list, resources/list, resources/templates/list, prompts/list.
    "PAGE_SIZE": 50,
    # ttlMs / cacheScope per cacheable method, 2026-07-28 only; unlisted methods get 0/private.
    "CACHE_HINTS": {},
    # HTTP: origins allowed to call the endpoint (browsers send Origin); required, no
    # default: a list like ["https://app.example.com"], or "any" written out.
    "ALLOWED_ORIGINS": None,
    # HTTP: dotted path of the pre-body authorization hook; required, no default. Serving
    # everyone is "beammcp_django.authorization.allow_all", written out.
    "AUTHORIZE": None,
    # HTTP: optional dotted path of a hook run after the body is read, on the exact raw
    # bytes, before decoding (signature checks need the bytes as sent).
    "AUTHORIZE_BODY": None,
    # Every call into host code (a tool, a resource read, a prompt, a completion) must answer
    # within this many seconds or the caller gets -32603 naming the limit; None: no limit.
    "CALL_TIMEOUT_SECONDS": 120.0,
    # HTTP: the whole body must arrive within this many seconds (one clock for all reads).
    "BODY_READ_TIMEOUT_SECONDS": 15.0,
    # HTTP under `manage.py mcp_serve`: a request head (request line and header fields) of at
    # most this many bytes and fields (431 beyond), complete within this many seconds of the
    # connection opening or of its first byte (408 after).
    "HEADER_MAX_BYTES": 16_384,
    "HEADER_MAX_COUNT": 100,
    "HEADER_TIMEOUT_SECONDS": 10.0,
    # subscriptions/listen (HTTP): the channel layer alias used when CHANNEL_LAYERS is set
    # (without it, one in-memory layer per process), a stream's longest life, how many
    # notifications may wait for a slow reader before the stream is closed, and how often the
    # authorize hook is asked again while a stream is open.
    "CHANNEL_LAYER": "default",
    "SUBSCRIPTION_MAX_SECONDS": 3600,
    "SUBSCRIPTION_QUEUE_LIMIT": 64,
    "SUBSCRIPTION_REAUTHORIZE_SECONDS": 60,
    # Count, per catalog entry, the calls that reach host code (the connectome's observed
    # graph): edge identity and counts only, about 1 µs a call (docs/performance.md).
    "CONNECTOME_OBSERVE": True,
    # The packages whose source the declared graph reads (and the tracer watches); None: the
    # installed apps that hold the catalog's handlers.
    "CONNECTOME_SCOPE": None,
    # How often each process writes its observed counts to the merged store (ObservedEdge),
    # and so how many seconds of counts a killed process (SIGKILL, a crash) can lose; a
    # process that stops normally writes them at exit. None: only on demand (no flush
    # thread, no flush at exit).
    "CONNECTOME_FLUSH_SECONDS": 5,
    # Optional function-level tracer inside the scope, off by default: a dict with the
    # required positive limits {"MAX_EVENTS": int, "MAX_SECONDS": number}; it removes itself
    # at the first limit reached.
    "CONNECTOME_TRACE": None,
    # Build the servers when the process starts and then hide every object alive from the
    # cyclic garbage collector (gc.freeze), so full collections stop walking Django's startup
    # heap: opt-in, a process-wide choice (docs/performance.md measures it).
    "FREEZE_HEAP_AT_STARTUP": False,
    # How long a requestState (multi-round-trip requests) stays valid, in seconds.
    "REQUEST_STATE_MAX_AGE_SECONDS": 600,
    # stdio: how long in-flight calls may finish after stdin closes before they are cancelled.
    "STDIO_SHUTDOWN_GRACE_SECONDS": 2.0,
    # stdio: most requests served at once; further lines wait (backpressure, not refusal).
    "STDIO_MAX_CONCURRENT_REQUESTS": 32,
}


@lru_cache(maxsize=1)
def get_settings() -> dict[str, Any]:
    """The merged settings dict. Unknown keys are kept so the system check can name them."""
    configured = getattr(settings, "BEAMMCP", {}) or {}
    merged = dict(DEFAULTS)
    merged.update(configured)
    return merged


def unknown_keys() -> list[str]:
    configured = getattr(settings, "BEAMMCP", {}) or {}
    return sorted(key for key in configured if key not in DEFAULTS)


def setting_problems() -> list[str]:
    """Why the merged settings cannot serve, in words naming the key; empty when they can."""
    values = get_settings()
    problems = []
    page_size = values["PAGE_SIZE"]
    if type(page_size) is not int or not 1 <= page_size <= 1000:
        problems.append("BEAMMCP['PAGE_SIZE'] must be an integer from 1 to 1000")
    hints = values["CACHE_HINTS"]
    if not isinstance(hints, dict):
        problems.append("BEAMMCP['CACHE_HINTS'] must be a dict keyed by method")
    else:
        for method, hint in hints.items():
            where = f"BEAMMCP['CACHE_HINTS'][{method!r}]"
            if method not in CACHEABLE_METHODS:
                problems.append(f"{where}: not a cacheable method ({', '.join(CACHEABLE_METHODS)})")
                continue
            if not isinstance(hint, dict) or set(hint) - {"ttl_ms", "scope"}:
                problems.append(f"{where} must be a dict with keys 'ttl_ms' and 'scope'")
                continue
            ttl = hint.get("ttl_ms", 0)
            if type(ttl) is not int or ttl < 0:
                problems.append(f"{where}['ttl_ms'] must be an integer >= 0")
            if hint.get("scope", "private") not in ("public", "private"):
                problems.append(f"{where}['scope'] must be 'public' or 'private'")
    for key in ("SERVER_NAME", "SERVER_VERSION", "SERVER_TITLE", "INSTRUCTIONS"):
        value = values[key]
        if not (value is None and key != "SERVER_NAME") and not (isinstance(value, str) and value):
            problems.append(f"BEAMMCP['{key}'] must be a non-empty string")
    for key in (
        "SUBSCRIPTION_MAX_SECONDS",
        "SUBSCRIPTION_QUEUE_LIMIT",
        "SUBSCRIPTION_REAUTHORIZE_SECONDS",
    ):
        value = values[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            problems.append(f"BEAMMCP['{key}'] must be a number > 0")
    max_age = values["REQUEST_STATE_MAX_AGE_SECONDS"]
    if type(max_age) is not int or max_age < 1:
        problems.append("BEAMMCP['REQUEST_STATE_MAX_AGE_SECONDS'] must be an integer >= 1")
    timeout = values["BODY_READ_TIMEOUT_SECONDS"]
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        problems.append("BEAMMCP['BODY_READ_TIMEOUT_SECONDS'] must be a number > 0")
    for key in ("HEADER_MAX_BYTES", "HEADER_MAX_COUNT"):
        if not _positive(values[key], integer=True):
            problems.append(f"BEAMMCP['{key}'] must be an integer > 0")
    if not _positive(values["HEADER_TIMEOUT_SECONDS"]):
        problems.append("BEAMMCP['HEADER_TIMEOUT_SECONDS'] must be a number > 0")
    problems.extend(_connectome_problems(values))
    call_timeout = values["CALL_TIMEOUT_SECONDS"]
    if call_timeout is not None and (
        not isinstance(call_timeout, (int, float))
        or isinstance(call_timeout, bool)
        or call_timeout <= 0
    ):
        problems.append("BEAMMCP['CALL_TIMEOUT_SECONDS'] must be a number > 0, or None")
    if type(values["FREEZE_HEAP_AT_STARTUP"]) is not bool:
        problems.append("BEAMMCP['FREEZE_HEAP_AT_STARTUP'] must be True or False")
    grace = values["STDIO_SHUTDOWN_GRACE_SECONDS"]
    if not isinstance(grace, (int, float)) or isinstance(grace, bool) or grace < 0:
        problems.append("BEAMMCP['STDIO_SHUTDOWN_GRACE_SECONDS'] must be a number >= 0")
    concurrency = values["STDIO_MAX_CONCURRENT_REQUESTS"]
    if type(concurrency) is not int or concurrency < 1:
        problems.append("BEAMMCP['STDIO_MAX_CONCURRENT_REQUESTS'] must be an integer >= 1")
    return problems


def _positive(value: Any, *, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return value > 0


def _connectome_problems(values: dict[str, Any]) -> list[str]:
    problems = []
    scope = values["CONNECTOME_SCOPE"]
    if scope is not None and (
        isinstance(scope, str)
        or not isinstance(scope, (list, tuple))
        or not all(isinstance(name, str) and name for name in scope)
    ):
        problems.append("BEAMMCP['CONNECTOME_SCOPE'] must be a list of dotted package names")
    interval = values["CONNECTOME_FLUSH_SECONDS"]
    if interval is not None and not _positive(interval):
        problems.append("BEAMMCP['CONNECTOME_FLUSH_SECONDS'] must be a number > 0, or None")
    trace = values["CONNECTOME_TRACE"]
    if trace is not None and (
        not isinstance(trace, dict)
        or set(trace) != {"MAX_EVENTS", "MAX_SECONDS"}
        or not _positive(trace["MAX_EVENTS"], integer=True)
        or not _positive(trace["MAX_SECONDS"])
    ):
        problems.append(
            "BEAMMCP['CONNECTOME_TRACE'] must be None or {'MAX_EVENTS': int > 0, "
            "'MAX_SECONDS': number > 0}: the tracer runs only within both limits"
        )
    return problems


@receiver(setting_changed)
def _forget_settings(*, setting: str, **kwargs: Any) -> None:
    if setting in (
        "BEAMMCP",
        "SECRET_KEY",
        "SECRET_KEY_FALLBACKS",
        "ALLOWED_HOSTS",
        "DEBUG",
        "USE_X_FORWARDED_HOST",
        "CHANNEL_LAYERS",
    ):
        get_settings.cache_clear()
        from beammcp_django.endpoint import forget_servers
        from beammcp_django.notify import channel_layer

        forget_servers()
        channel_layer.cache_clear()
        from beammcp_django.connectome import exports

        exports.flusher_slot.forget()
        exports._declared.cache_clear()
