"""Every key of ``settings.BEAMMCP``, one row each: its default, the rule its value keeps, the
system check that holds it there (``beammcp.E1nn``, one id a key) and what it sets.

The rest is derived from here: the defaults ``conf.get_settings`` merges over, the problems
``conf.table_problems`` names (``BEAMMCP['KEY'] must be ...``), and the check table's
findings (``checks/ids.py``: ``BEAMMCP['KEY'] is not ...``), so a rule is worded once.
``docs/settings.md`` holds the same keys, defaults and check ids, row for row (a test holds
the two together). The HTTP hooks, the origins and the session cache are checked with the
endpoint and the store they concern, and ``OAUTH`` by the OAuth folder's own rules
(``oauth/resource.py``), both from ``checks/``: their rows say what those checks hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from beammcp_django.protocol.revisions import CACHEABLE_METHODS

# The email backend that counts the mail host calls send (``connectome/mail.py``).
OBSERVING_EMAIL_BACKEND = "beammcp_django.connectome.mail.ObservingEmailBackend"


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _positive(value: Any, *, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return value > 0


@dataclass(frozen=True)
class Kind:
    """A rule that is a kind of value, worded once (``says``): the problem reads ``must be
    {says}``, the check's finding ``is not {says}`` (``or None`` when None is allowed)."""

    test: Callable[[Any], bool]
    says: str
    or_none: bool = False

    def problems(self, value: Any) -> Iterator[str]:
        if not (value is None and self.or_none) and not self.test(value):
            yield f"must be {self.says}" + (", or None" if self.or_none else "")

    @property
    def finding(self) -> str:
        return f"is neither None nor {self.says}" if self.or_none else f"is not {self.says}"


@dataclass(frozen=True)
class Ruled:
    """A rule of its own: ``check`` yields each problem (``must ...``, or ``[...]...`` for a
    key inside the value); ``finding`` says what the check's id covers."""

    check: Callable[[Any], Iterator[str]]
    finding: str

    def problems(self, value: Any) -> Iterator[str]:
        return self.check(value)


Rule = Kind | Ruled


def _elsewhere(finding: str) -> Ruled:
    """A key held by a check of its own (the endpoint's, the store's): no rule here."""
    return Ruled(lambda value: iter(()), finding)


def _or_none(rule: Kind) -> Kind:
    return Kind(rule.test, rule.says, or_none=True)


TEXT = Kind(_text, "a non-empty string")
NUMBER = Kind(_positive, "a number > 0")
COUNT = Kind(lambda value: _positive(value, integer=True), "an integer > 0")
AT_LEAST_ONE = Kind(lambda value: _positive(value, integer=True), "an integer >= 1")
SWITCH = Kind(lambda value: type(value) is bool, "True or False")


def _channel_layer(value: Any) -> Iterator[str]:
    layers = getattr(settings, "CHANNEL_LAYERS", None)
    if not _text(value):
        yield "must be the alias of a channel layer (a non-empty string)"
    elif layers and value not in layers:
        yield f"names '{value}', which CHANNEL_LAYERS does not define"


def _cache_hints(hints: Any) -> Iterator[str]:
    if not isinstance(hints, dict):
        yield "must be a dict keyed by method"
        return
    for method, hint in hints.items():
        where = f"[{method!r}]"
        if method not in CACHEABLE_METHODS:
            yield f"{where}: not a cacheable method ({', '.join(CACHEABLE_METHODS)})"
            continue
        if not isinstance(hint, dict) or set(hint) - {"ttl_ms", "scope"}:
            yield f"{where} must be a dict with keys 'ttl_ms' and 'scope'"
            continue
        ttl = hint.get("ttl_ms", 0)
        if type(ttl) is not int or ttl < 0:
            yield f"{where}['ttl_ms'] must be an integer >= 0"
        if hint.get("scope", "private") not in ("public", "private"):
            yield f"{where}['scope'] must be 'public' or 'private'"


def _tasks(value: Any) -> Iterator[str]:
    if not isinstance(value, dict) or set(value) - set(TASK_DEFAULTS):
        yield f"must be a dict with keys among {', '.join(TASK_DEFAULTS)}"
        return
    merged = {**TASK_DEFAULTS, **value}
    if not _text(merged["BACKEND"]) or not all(
        _positive(merged[key], integer=True) for key in TASK_DEFAULTS if key != "BACKEND"
    ):
        yield "must name a Tasks backend alias and give each bound as an integer >= 1"


def _registration(value: Any) -> Iterator[str]:
    if not isinstance(value, dict) or set(value) - set(REGISTRATION_DEFAULTS):
        yield f"must be a dict with keys among {', '.join(REGISTRATION_DEFAULTS)}"
        return
    merged = {**REGISTRATION_DEFAULTS, **value}
    if not all(_positive(merged[key], integer=True) for key in REGISTRATION_DEFAULTS):
        yield "must give each bound as an integer >= 1"


# RFC 9110's token: what a header's name may hold.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")
# Headers that carry a caller's credentials by standard or by wide custom: never handed to
# host code (a token passed on is the spec's token passthrough; the AUTHORIZE hook reads
# them, and passes on what it chose). A project's own credential header is its to keep out.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "cookie", "proxy-authorization", "x-api-key", "x-auth-token"}
)


def _handler_headers(value: Any) -> Iterator[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        yield "must be a list of lower-case header names"
        return
    for name in value:
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            yield f"must be a list of lower-case header names: not {str(name)[:64]!r}"
            return
        if name in CREDENTIAL_HEADERS:
            yield (
                f"must not name {name!r}, which carries the caller's credentials: the "
                "AUTHORIZE hook reads it, and passes on what host code needs in Grant.values"
            )
            return


def _scope(value: Any) -> Iterator[str]:
    if value is not None and (
        isinstance(value, str)
        or not isinstance(value, (list, tuple))
        or not all(_text(name) for name in value)
    ):
        yield "must be a list of dotted package names, or None"


def _email_backend(value: Any) -> Iterator[str]:
    if value is not None and not _text(value):
        yield "must be the dotted path of an email backend, or None"
    elif value is None and getattr(settings, "EMAIL_BACKEND", "") == OBSERVING_EMAIL_BACKEND:
        yield (
            f"is None, but EMAIL_BACKEND is {OBSERVING_EMAIL_BACKEND}, which needs it: name "
            "the backend that sends"
        )


def _trace(value: Any) -> Iterator[str]:
    if value is not None and (
        not isinstance(value, dict)
        or set(value) != {"MAX_EVENTS", "MAX_SECONDS"}
        or not _positive(value["MAX_EVENTS"], integer=True)
        or not _positive(value["MAX_SECONDS"])
    ):
        yield (
            "must be None or {'MAX_EVENTS': int > 0, 'MAX_SECONDS': number > 0}: the tracer "
            "runs only within both limits"
        )


def _grace(value: Any) -> Iterator[str]:
    if not (_positive(value) or (value == 0 and not isinstance(value, bool))):
        yield "must be a number >= 0"


def _sandbox_origin(value: Any) -> Iterator[str]:
    if value is None:
        return
    parts = urlsplit(value) if isinstance(value, str) else None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or value.rstrip("/") != f"{parts.scheme}://{parts.netloc}"
    ):
        yield "must be an origin, 'https://host[:port]' (http too), or None"


@dataclass(frozen=True)
class Setting:
    key: str
    default: Any
    check: int  # its system check id: beammcp.E<check>
    rule: Rule
    doc: str  # what it sets, in one line (docs/settings.md says more)
    required: bool = False  # no default: the host must set it where it applies

    @property
    def check_id(self) -> str:
        return f"beammcp.E{self.check:03d}"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "CATALOG",
        "beammcp_django.registry.site",
        1,
        _elsewhere("cannot be imported"),
        "dotted path to the catalog object; the default is the autodiscovered site",
    ),
    Setting("SERVER_NAME", "beammcp-django", 101, TEXT, "serverInfo.name: name your server"),
    Setting("SERVER_VERSION", None, 102, _or_none(TEXT), "serverInfo.version; None: the package's"),
    Setting("SERVER_TITLE", None, 103, _or_none(TEXT), "serverInfo.title, for display"),
    Setting("INSTRUCTIONS", None, 104, _or_none(TEXT), "instructions, told at discovery"),
    Setting(
        "PAGE_SIZE",
        50,
        105,
        Kind(lambda v: _positive(v, integer=True) and v <= 1000, "an integer from 1 to 1000"),
        "items per page of every list method",
    ),
    Setting(
        "CACHE_HINTS",
        {},
        106,
        Ruled(
            _cache_hints,
            "is not a dict from cacheable methods to `{'ttl_ms': int >= 0, 'scope': "
            "'public' | 'private'}`",
        ),
        "ttlMs and cacheScope per cacheable method (2026-07-28); unlisted: 0, private",
    ),
    Setting(
        "ALLOWED_ORIGINS",
        None,
        107,
        _elsewhere(
            'is not set to a list of origins, or `"any"` written out (checked when the HTTP '
            "endpoint is routed)"
        ),
        'HTTP: the browser origins allowed to call the endpoint, or "any" written out',
        required=True,
    ),
    Setting(
        "AUTHORIZE",
        None,
        108,
        _elsewhere(
            "is not set to the dotted path of a callable (checked when the HTTP endpoint is routed)"
        ),
        "HTTP: dotted path of the pre-body authorization hook; allow_all written out",
        required=True,
    ),
    Setting(
        "AUTHORIZE_BODY",
        None,
        109,
        _elsewhere(
            "is neither None nor the dotted path of a callable (checked when the HTTP "
            "endpoint is routed)"
        ),
        "HTTP: a hook run on the body's exact bytes before decoding",
    ),
    Setting(
        "CALL_TIMEOUT_SECONDS",
        120.0,
        110,
        _or_none(NUMBER),
        "every call into host code answers within this, or -32603 naming it; None: no limit",
    ),
    Setting(
        "BODY_READ_TIMEOUT_SECONDS", 15.0, 111, NUMBER, "HTTP: the whole body arrives within this"
    ),
    Setting("HEADER_MAX_BYTES", 16_384, 112, COUNT, "mcp_serve: the most bytes of a request head"),
    Setting("HEADER_MAX_COUNT", 100, 113, COUNT, "mcp_serve: the most header fields a request"),
    Setting(
        "HEADER_TIMEOUT_SECONDS", 10.0, 114, NUMBER, "mcp_serve: a request head arrives within this"
    ),
    Setting(
        "CHANNEL_LAYER",
        "default",
        115,
        Ruled(
            _channel_layer,
            "is not a string, or names no alias of `CHANNEL_LAYERS` when that is set",
        ),
        "the Channels layer alias of the change feed, when CHANNEL_LAYERS is set",
    ),
    Setting("SUBSCRIPTION_MAX_SECONDS", 3600, 116, NUMBER, "the longest life of a listen stream"),
    Setting(
        "SUBSCRIPTION_QUEUE_LIMIT",
        64,
        117,
        COUNT,
        "notifications that may wait for a slow stream reader before the stream is cut off",
    ),
    Setting(
        "SUBSCRIPTION_REAUTHORIZE_SECONDS",
        60,
        118,
        NUMBER,
        "how often an open stream asks the AUTHORIZE hook again",
    ),
    Setting(
        "CONNECTOME_OBSERVE", True, 119, SWITCH, "count the calls that reach host code, per entry"
    ),
    Setting(
        "CONNECTOME_SCOPE",
        None,
        120,
        Ruled(_scope, "is neither None nor a list of dotted package names"),
        "the packages the declared graph reads; None: the apps holding the handlers",
    ),
    Setting(
        "CONNECTOME_FLUSH_SECONDS",
        5,
        121,
        _or_none(NUMBER),
        "how often a process writes its observed counts to the store; None: on demand",
    ),
    Setting(
        "CONNECTOME_TRACE",
        None,
        122,
        Ruled(_trace, "is neither None nor `{'MAX_EVENTS': int > 0, 'MAX_SECONDS': number > 0}`"),
        "the optional function-level tracer and its two limits",
    ),
    Setting(
        "FREEZE_HEAP_AT_STARTUP",
        False,
        123,
        SWITCH,
        "build the servers at startup, then gc.freeze() the heap",
    ),
    Setting(
        "REQUEST_STATE_MAX_AGE_SECONDS",
        600,
        124,
        AT_LEAST_ONE,
        "how long a requestState (multi-round-trip requests) stays valid",
    ),
    Setting(
        "STDIO_SHUTDOWN_GRACE_SECONDS",
        2.0,
        125,
        Ruled(_grace, "is not a number >= 0"),
        "stdio: how long running calls may finish after stdin closes",
    ),
    Setting(
        "STDIO_MAX_CONCURRENT_REQUESTS",
        32,
        126,
        AT_LEAST_ONE,
        "stdio: requests served at once; further lines wait",
    ),
    Setting(
        "STDIO_USER",
        None,
        127,
        _or_none(Kind(_text, "a username (a non-empty string)")),
        "stdio: the username of the user host code sees; None: no principal",
    ),
    Setting(
        "HTTP_LEGACY_SESSIONS",
        True,
        128,
        SWITCH,
        "HTTP: serve 2025-11-25 sessions beside 2026-07-28 on the one endpoint",
    ),
    Setting("SESSION_IDLE_SECONDS", 3600, 129, NUMBER, "HTTP: a session unused this long ends"),
    Setting("SESSION_LIMIT", 10_000, 130, AT_LEAST_ONE, "HTTP: sessions open at once"),
    Setting(
        "SESSIONS_PER_PRINCIPAL",
        100,
        131,
        AT_LEAST_ONE,
        "HTTP: sessions one principal (or client address) may hold open",
    ),
    Setting(
        "SESSION_CACHE",
        None,
        132,
        _elsewhere(
            "is neither None nor the alias of a `CACHES` entry on Django's `RedisCache`, with "
            "a channel layer every worker shares"
        ),
        "HTTP: where sessions live: None, the process; a RedisCache alias, shared",
    ),
    Setting(
        "SESSION_PENDING_ANSWERS",
        16,
        133,
        AT_LEAST_ONE,
        "HTTP: server-to-client requests one session may wait on at once",
    ),
    Setting("SESSION_ANSWER_SECONDS", 300, 134, NUMBER, "HTTP: how long one waits for its answer"),
    Setting(
        "SESSION_HELD_EVENTS", 256, 135, AT_LEAST_ONE, "HTTP: a call stream's events held to resume"
    ),
    Setting(
        "SESSION_RESUME_SECONDS",
        60,
        136,
        NUMBER,
        "HTTP: how long a call whose client left waits to be resumed",
    ),
    Setting(
        "OAUTH",
        None,
        137,
        _elsewhere(
            "is neither None nor a resource server's settings (an absolute https `RESOURCE`, "
            "http only on loopback; its `AUTHORIZATION_SERVERS`; scope names; a token "
            "validator; for the JWT validator, a `JWT` dict naming an issuer among the "
            "`AUTHORIZATION_SERVERS`, its JWKS URL and asymmetric algorithms only), or its "
            "metadata document is served by neither the ASGI factory nor `metadata_view` at "
            "`/.well-known/oauth-protected-resource` plus the resource's path",
        ),
        "HTTP: this server as an OAuth 2.1 resource server; None: no OAuth",
    ),
    Setting(
        "RATE_LIMIT",
        None,
        138,
        _elsewhere("is neither None nor the dotted path of a callable (the host's rate limit)"),
        "dotted path of the host's rate limit, (principal, method) -> None or seconds",
    ),
    Setting(
        "TASKS",
        {},
        139,
        Ruled(
            _tasks,
            "is not a dict of the tasks extension's settings (`BACKEND`, a Tasks backend "
            "alias; each bound an integer >= 1)",
        ),
        "the tasks extension: its Tasks backend and bounds (TASK_DEFAULTS)",
    ),
    Setting(
        "CONNECTOME_EMAIL_BACKEND",
        None,
        140,
        Ruled(
            _email_backend,
            "is not the dotted path of an email backend, or is None while `EMAIL_BACKEND` is "
            "the observing wrapper, which needs it",
        ),
        "the email backend that sends behind the observing wrapper",
    ),
    Setting(
        "SESSION_CACHE_CONNECTIONS",
        64,
        141,
        AT_LEAST_ONE,
        "HTTP: connections one process may open to SESSION_CACHE's Redis",
    ),
    Setting(
        "SESSION_CACHE_WAIT_SECONDS",
        5.0,
        142,
        NUMBER,
        "HTTP: how long a command waits for one of them (then 503)",
    ),
    Setting(
        "CLIENT_REGISTRATION",
        {},
        143,
        Ruled(
            _registration,
            "is not a dict of dynamic client registration's bounds (each an integer >= 1)",
        ),
        "dynamic client registration's bounds (REGISTRATION_DEFAULTS)",
    ),
    Setting(
        "HANDLER_HEADERS",
        (),
        144,
        Ruled(_handler_headers, "is not a list of lower-case header names, none a credential's"),
        "HTTP: request headers host code reads as context.headers (a request id, a tenant)",
    ),
    Setting(
        "VIEW_SANDBOX_ORIGIN",
        None,
        145,
        Ruled(_sandbox_origin, "is neither None nor an origin, 'https://host[:port]'"),
        "the admin's view preview: the second origin its sandbox proxy is served from",
    ),
)

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

REGISTRATION_DEFAULTS: dict[str, Any] = {
    # Registrations one client address may make in a window of WINDOW_SECONDS.
    "PER_ADDRESS": 10,
    "WINDOW_SECONDS": 3600,
    # Dynamically registered clients in all: then registration is refused until some are
    # deleted (the toolkit's RFC 7592 endpoint, or the admin).
    "CLIENTS": 1000,
    # Bytes of one registration's metadata.
    "METADATA_BYTES": 8192,
}

BY_KEY: dict[str, Setting] = {row.key: row for row in SETTINGS}
DEFAULTS: dict[str, Any] = {row.key: row.default for row in SETTINGS}
