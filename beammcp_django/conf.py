"""The one place settings are read: ``settings.BEAMMCP`` merged over documented defaults.

Read once per process and again only when Django's ``setting_changed`` signal says the dict
changed (tests use ``override_settings``). ``docs/settings.md`` documents every key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from beammcp_django.oauth.resource import problems as oauth_problems
from beammcp_django.protocol.revisions import CACHEABLE_METHODS

# The email backend that counts the mail host calls send (``connectome/mail.py``).
OBSERVING_EMAIL_BACKEND = "beammcp_django.connectome.mail.ObservingEmailBackend"

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
    # The email backend that sends, when EMAIL_BACKEND is the observing wrapper
    # ("beammcp_django.connectome.mail.ObservingEmailBackend"), which counts the mail host
    # calls send as their effect; None: the wrapper is not in use.
    "CONNECTOME_EMAIL_BACKEND": None,
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
    # stdio: the username of the Django user host code sees as context.principal (what
    # ``mcp_stdio --user`` gives for one run); None: no principal, never an implicit user.
    "STDIO_USER": None,
    # HTTP: serve 2025-11-25 sessions (initialize, Mcp-Session-Id) beside stateless 2026-07-28
    # on the one endpoint; False: 2026-07-28 only.
    "HTTP_LEGACY_SESSIONS": True,
    # HTTP sessions: a session unused this long ends (later requests in it: 404).
    "SESSION_IDLE_SECONDS": 3600,
    # HTTP sessions open at once in a process, and per principal (a principal-less session
    # counts against the total only); initialize past either is refused by name.
    "SESSION_LIMIT": 10_000,
    "SESSIONS_PER_PRINCIPAL": 100,
    # HTTP sessions: server-to-client requests (sampling, elicitation, roots) one session
    # may wait on at once, and how long each waits for the client's answer.
    "SESSION_PENDING_ANSWERS": 16,
    "SESSION_ANSWER_SECONDS": 300,
    # HTTP sessions: the events a call's stream holds for a resume (Last-Event-ID), and how
    # long a call whose client left waits for one before it is stopped.
    "SESSION_HELD_EVENTS": 256,
    "SESSION_RESUME_SECONDS": 60,
    # HTTP sessions: None keeps them in the serving process (one worker); the alias of a
    # CACHES entry on Django's RedisCache keeps them in that Redis, shared by every worker
    # (with a channel layer every worker shares, CHANNEL_LAYER).
    "SESSION_CACHE": None,
    # HTTP sessions in SESSION_CACHE's Redis: the connections one process may open to it,
    # and how long a command waits for one when all are busy (then 503 naming the store).
    "SESSION_CACHE_CONNECTIONS": 64,
    "SESSION_CACHE_WAIT_SECONDS": 5.0,
    # HTTP: this server as an OAuth 2.1 resource server (docs/authorization.md), a dict: its
    # canonical URI, its authorization servers and scopes, the token validator; served by
    # AUTHORIZE = "beammcp_django.oauth.bearer.authorize". None: no OAuth.
    "OAUTH": None,
    # HTTP and stdio: dotted path of the host's rate limit, (principal, method) -> None to
    # serve or the seconds to wait; refused 429 with Retry-After over HTTP. None: no limit.
    "RATE_LIMIT": None,
    # The tasks extension (docs/tasks.md), for tools declaring `task`: the Django Tasks
    # backend that runs them and the bounds; keys left out take TASK_DEFAULTS.
    "TASKS": {},
}

TASK_DEFAULTS: dict[str, Any] = {
    # The alias in settings.TASKS of the backend whose workers run the calls.
    "BACKEND": "default",
    # How long a task is kept after it is made, whatever its status; then tasks/get answers
    # it as unknown and `manage.py mcp_tasks purge` deletes it.
    "TTL_SECONDS": 86_400,
    # The pollIntervalMs a client is told.
    "POLL_INTERVAL_MS": 1000,
    # A running attempt renews its lease this often x3; a worker that dies (kill -9) leaves
    # a lease that runs out, and the task is taken again up to MAX_ATTEMPTS, then failed.
    "LEASE_SECONDS": 30,
    "MAX_ATTEMPTS": 1,
    # Tasks one principal may have working or waiting for input at once.
    "PER_PRINCIPAL": 100,
    # Tasks one worker job runs at once (docs/tasks.md): 1, one, as the backend's worker
    # does; more, a shift that keeps that many running while tasks wait, sync tools each on
    # a thread, async ones on the worker's event loop.
    "WORKER_CONCURRENCY": 1,
    # Input requests one round of a task may ask; bytes of one task's result.
    "MAX_INPUT_REQUESTS": 16,
    "MAX_RESULT_BYTES": 1 << 20,
}


def task_settings() -> dict[str, Any]:
    """``BEAMMCP['TASKS']`` over ``TASK_DEFAULTS``."""
    configured = get_settings()["TASKS"]
    return {**TASK_DEFAULTS, **(configured if isinstance(configured, dict) else {})}


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


class SettingProblem(NamedTuple):
    """Why one key's value cannot serve. The key is the rule: each has its own check id."""

    key: str
    message: str


def setting_problems() -> list[SettingProblem]:
    """Why the merged settings cannot serve, each naming its key; empty when they can. The
    HTTP hooks and origins are checked with the endpoint's routing (``checks/endpoint.py``)."""
    values = get_settings()
    problems = [
        SettingProblem(key, f"BEAMMCP['{key}'] {rule}") for key, rule in _value_rules(values)
    ]
    problems.extend(_cache_hint_problems(values["CACHE_HINTS"]))
    problems.extend(
        SettingProblem("OAUTH", f"BEAMMCP['OAUTH']{'' if p.startswith('[') else ' '}{p}")
        for p in oauth_problems(values["OAUTH"])
    )
    return problems


def _value_rules(values: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, the rule its value breaks) for every key whose value is out of its rule."""
    for key in ("SERVER_VERSION", "SERVER_TITLE", "INSTRUCTIONS"):
        if values[key] is not None and not _text(values[key]):
            yield key, "must be a non-empty string, or None"
    if not _text(values["SERVER_NAME"]):
        yield "SERVER_NAME", "must be a non-empty string"
    page_size = values["PAGE_SIZE"]
    if not _positive(page_size, integer=True) or page_size > 1000:
        yield "PAGE_SIZE", "must be an integer from 1 to 1000"
    channel_layer = values["CHANNEL_LAYER"]
    layers = getattr(settings, "CHANNEL_LAYERS", None)
    if not _text(channel_layer):
        yield "CHANNEL_LAYER", "must be the alias of a channel layer (a non-empty string)"
    elif layers and channel_layer not in layers:
        yield "CHANNEL_LAYER", f"names '{channel_layer}', which CHANNEL_LAYERS does not define"
    for key in (
        "BODY_READ_TIMEOUT_SECONDS",
        "HEADER_TIMEOUT_SECONDS",
        "SUBSCRIPTION_MAX_SECONDS",
        "SUBSCRIPTION_REAUTHORIZE_SECONDS",
        "SESSION_IDLE_SECONDS",
        "SESSION_ANSWER_SECONDS",
        "SESSION_RESUME_SECONDS",
        "SESSION_CACHE_WAIT_SECONDS",
    ):
        if not _positive(values[key]):
            yield key, "must be a number > 0"
    for key in ("HEADER_MAX_BYTES", "HEADER_MAX_COUNT", "SUBSCRIPTION_QUEUE_LIMIT"):
        if not _positive(values[key], integer=True):
            yield key, "must be an integer > 0"
    for key in ("CALL_TIMEOUT_SECONDS", "CONNECTOME_FLUSH_SECONDS"):
        if values[key] is not None and not _positive(values[key]):
            yield key, "must be a number > 0, or None"
    for key in ("CONNECTOME_OBSERVE", "FREEZE_HEAP_AT_STARTUP", "HTTP_LEGACY_SESSIONS"):
        if type(values[key]) is not bool:
            yield key, "must be True or False"
    for key in (
        "REQUEST_STATE_MAX_AGE_SECONDS",
        "STDIO_MAX_CONCURRENT_REQUESTS",
        "SESSION_LIMIT",
        "SESSIONS_PER_PRINCIPAL",
        "SESSION_PENDING_ANSWERS",
        "SESSION_HELD_EVENTS",
        "SESSION_CACHE_CONNECTIONS",
    ):
        if not _positive(values[key], integer=True):
            yield key, "must be an integer >= 1"
    tasks = values["TASKS"]
    if not isinstance(tasks, dict) or set(tasks) - set(TASK_DEFAULTS):
        yield "TASKS", f"must be a dict with keys among {', '.join(TASK_DEFAULTS)}"
    else:
        merged = {**TASK_DEFAULTS, **tasks}
        if not _text(merged["BACKEND"]) or not all(
            _positive(merged[key], integer=True) for key in TASK_DEFAULTS if key != "BACKEND"
        ):
            yield "TASKS", "must name a Tasks backend alias and give each bound as an integer >= 1"
    grace = values["STDIO_SHUTDOWN_GRACE_SECONDS"]
    if not (_positive(grace) or (grace == 0 and not isinstance(grace, bool))):
        yield "STDIO_SHUTDOWN_GRACE_SECONDS", "must be a number >= 0"
    user = values["STDIO_USER"]
    if user is not None and not _text(user):
        yield "STDIO_USER", "must be a username (a non-empty string), or None"
    scope = values["CONNECTOME_SCOPE"]
    if scope is not None and (
        isinstance(scope, str)
        or not isinstance(scope, (list, tuple))
        or not all(_text(name) for name in scope)
    ):
        yield "CONNECTOME_SCOPE", "must be a list of dotted package names, or None"
    mail = values["CONNECTOME_EMAIL_BACKEND"]
    if mail is not None and not _text(mail):
        yield "CONNECTOME_EMAIL_BACKEND", "must be the dotted path of an email backend, or None"
    elif mail is None and getattr(settings, "EMAIL_BACKEND", "") == OBSERVING_EMAIL_BACKEND:
        yield (
            "CONNECTOME_EMAIL_BACKEND",
            f"is None, but EMAIL_BACKEND is {OBSERVING_EMAIL_BACKEND}, which needs it: name "
            "the backend that sends",
        )
    trace = values["CONNECTOME_TRACE"]
    if trace is not None and (
        not isinstance(trace, dict)
        or set(trace) != {"MAX_EVENTS", "MAX_SECONDS"}
        or not _positive(trace["MAX_EVENTS"], integer=True)
        or not _positive(trace["MAX_SECONDS"])
    ):
        yield (
            "CONNECTOME_TRACE",
            "must be None or {'MAX_EVENTS': int > 0, 'MAX_SECONDS': number > 0}: the tracer "
            "runs only within both limits",
        )


def _cache_hint_problems(hints: Any) -> list[SettingProblem]:
    if not isinstance(hints, dict):
        return [
            SettingProblem("CACHE_HINTS", "BEAMMCP['CACHE_HINTS'] must be a dict keyed by method")
        ]
    problems = []
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
    return [SettingProblem("CACHE_HINTS", problem) for problem in problems]


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _positive(value: Any, *, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return value > 0


# The Django settings the package's caches are built from: a change to any of them (tests use
# ``override_settings``) makes every cache below and each one registered with
# ``forget_on_change`` start afresh.
SETTINGS_READ = frozenset(
    {
        "BEAMMCP",
        "SECRET_KEY",
        "SECRET_KEY_FALLBACKS",
        "ALLOWED_HOSTS",
        "DEBUG",
        "USE_X_FORWARDED_HOST",
        "CHANNEL_LAYERS",
        "CACHES",
    }
)


def forget_on_change(forget: Callable[[], None]) -> Callable[[], None]:
    """Run ``forget`` whenever one of ``SETTINGS_READ`` changes. Each module that caches
    something built from settings registers its own forgetting here, so this module needs to
    know none of them (and imports none of them)."""

    def receive(*, setting: str, **kwargs: Any) -> None:
        if setting in SETTINGS_READ:
            forget()

    setting_changed.connect(receive, weak=False)
    return forget


forget_on_change(get_settings.cache_clear)


def load_catalog() -> Any:
    """The object ``BEAMMCP['CATALOG']`` names (by default the autodiscovered site)."""
    return import_string(get_settings()["CATALOG"])
