"""The one table of system check ids: every rule the package checks at startup, one id each.

A host silences a check by its id (``SILENCED_SYSTEM_CHECKS``), so an id names exactly one
rule and keeps it: an id is never given to another rule, and a retired id stays listed in
``RENUMBERED`` with the ids that took over its rules. The code that finds a problem names
its rule (the catalog audit in ``protocol/audit.py`` and the class registry name theirs; a
setting's rule is its key), and the checks (``beammcp_django.checks``) look the id up here.
``docs/host-contract.md`` lists this table row for row; a test holds the two together.

Blocks, as ``django.contrib.admin`` keeps them: ``E0nn`` the catalog, ``E1nn`` the
``BEAMMCP`` settings (one id per key), ``Wnnn`` warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from beammcp_django.handles.kinds import BAD_HANDLE_KIND
from beammcp_django.protocol import apps, audit, skills
from beammcp_django.registry import INCOMPLETE_DECLARATION, NEVER_BLOCKS, UNKNOWN_PERMISSION
from beammcp_django.settings_table import SETTINGS
from beammcp_django.skills.assembly import SKILL_SHADOWED
from beammcp_django.tasks.backend import NO_TASK_BACKEND
from beammcp_django.ui.csp_scan import VIEW_TEMPLATE

PREFIX = "beammcp."


@dataclass(frozen=True)
class Check:
    id: str
    rule: str
    finding: str


CHECKS: tuple[Check, ...] = (
    Check(f"{PREFIX}E001", "catalog_unloadable", "`BEAMMCP['CATALOG']` cannot be imported"),
    Check(
        f"{PREFIX}E002",
        audit.LIST_ABSENT,
        "the catalog has no `tools`, `resources` or `prompts` list (absent is malformed; "
        "empty is fine)",
    ),
    Check(
        f"{PREFIX}E003",
        audit.WRONG_ENTRY_TYPE,
        "an entry of a list is not the spec type that list holds",
    ),
    Check(f"{PREFIX}E004", audit.REPEATED_TOOL, "a tool name declared twice"),
    Check(f"{PREFIX}E005", audit.REPEATED_RESOURCE, "a resource URI declared twice"),
    Check(f"{PREFIX}E006", audit.REPEATED_TEMPLATE, "a resource template declared twice"),
    Check(f"{PREFIX}E007", audit.REPEATED_PROMPT, "a prompt name declared twice"),
    Check(f"{PREFIX}E008", audit.REPEATED_ARGUMENT, "a prompt argument named twice"),
    Check(
        f"{PREFIX}E009",
        audit.NO_HANDLER,
        "entries are listed but nothing serves them (no `dispatch` / `read_resource` / "
        "`get_prompt`, or a class that does not define `call` / `read` / `get`)",
    ),
    Check(
        f"{PREFIX}E010",
        audit.BAD_TOOL_NAME,
        "a tool name outside the spec's rule: 1 to 128 characters of `A-Z a-z 0-9 _ . -`",
    ),
    Check(
        f"{PREFIX}E011",
        audit.BAD_SCHEMA,
        "an input or output schema that is not valid JSON Schema for its dialect (checked "
        "against the metaschema), declares a dialect the validator does not support, or has "
        "a `$ref` that does not resolve inside the schema (remote references are never "
        "fetched)",
    ),
    Check(
        f"{PREFIX}E012",
        audit.NON_OBJECT_ROOT,
        'an input schema whose root is not `"type": "object"`',
    ),
    Check(
        f"{PREFIX}E013",
        audit.UNSUPPORTED_TEMPLATE,
        "a URI template using an expression the matcher does not support (anything but "
        "`{var}` and `{+var}`)",
    ),
    Check(f"{PREFIX}E014", audit.NOT_AN_ABSOLUTE_URI, "a resource URI that is not absolute"),
    Check(f"{PREFIX}E016", audit.BAD_COMPLETER, "`complete` is present but not callable"),
    Check(
        f"{PREFIX}E017",
        INCOMPLETE_DECLARATION,
        "a registered class that does not set a required attribute (`name`, `uri`, `uri_template`)",
    ),
    Check(
        f"{PREFIX}E020",
        audit.BAD_HEADER_ANNOTATION,
        "an `x-mcp-header` annotation the spec does not allow (on a property that is not a "
        "string, number or boolean, not a plain top-level property, a name that is not a "
        "header token, or a name used twice ignoring case)",
    ),
    Check(
        f"{PREFIX}E021",
        audit.UNBOUNDED_SCHEMA,
        "an input schema whose validation cannot be bounded: a pattern the linear-time "
        "engine cannot run (look-around, back-references; write a negative look-ahead as "
        "`not` with a `pattern`), or a schema jsonschema-rs cannot compile",
    ),
    Check(
        f"{PREFIX}E022",
        audit.BAD_ACCESS,
        "who may use an entry, declared off its rules: a gate that is not callable, or a "
        "scope that is not an OAuth scope name (visible ASCII but for space, quote and "
        "backslash)",
    ),
    Check(
        f"{PREFIX}E023",
        UNKNOWN_PERMISSION,
        "a declaration's `permissions` names a permission no installed model declares (one "
        "of `add`, `change`, `delete`, `view`, or its `Meta.permissions`), or one not "
        "written `app_label.codename`",
    ),
    Check(
        f"{PREFIX}E024",
        audit.BAD_TASK_MODE,
        "a tool's `task` that is not `disabled`, `optional` or `required`",
    ),
    Check(
        f"{PREFIX}E025",
        NO_TASK_BACKEND,
        "a tool may run as a task, but `BEAMMCP['TASKS']['BACKEND']` names no Tasks backend "
        "whose work runs in a worker of its own (none configured, Django's Tasks framework "
        "absent, or its `ImmediateBackend` or `DummyBackend`)",
    ),
    Check(
        f"{PREFIX}E026",
        skills.SKILL_FRONTMATTER,
        "a skill whose `SKILL.md` is missing, not UTF-8, or does not open with YAML "
        "frontmatter holding a non-empty `name` and `description` (at most 1,024 "
        "characters), or whose frontmatter JSON cannot carry (a non-string key, a YAML "
        "binary or set, anchors and aliases, nesting past 64 levels) or YAML parsers read "
        "differently (a key written twice, a plain `yes`, `010` or `1:30`, which YAML 1.1 "
        "and 1.2 read as different values)",
    ),
    Check(
        f"{PREFIX}E027",
        skills.SKILL_NAME,
        "a skill's name off the Agent Skills rule (1 to 64 of `a-z 0-9 -`, no leading, "
        "trailing or doubled hyphen), a `SKILL.md` `name` that is not its folder's, or a "
        "prefix that is not URI segments",
    ),
    Check(
        f"{PREFIX}E028",
        skills.SKILL_LIMITS,
        "a skill past the extension's limits: more than 512 files, or more than 16 MiB "
        "(16,777,216 bytes) of them",
    ),
    Check(
        f"{PREFIX}E029",
        skills.SKILL_PATH,
        "a skill whose files are not its own or cannot be read: a symbolic link to a place "
        "outside its folder, to a directory or to a name it does not serve, a skill folder "
        "(or an app's `skills/`) that is itself a link, a path with a `.` or `..` segment "
        "or characters a URI cannot carry as written, something that is not a regular "
        "file, a class naming a folder no installed app holds, or files that could not be "
        "read (an OS error, a class's `files()` that raised)",
    ),
    Check(
        f"{PREFIX}E030",
        skills.REPEATED_SKILL,
        "two skills at one URI, a file or folder URI two skills both serve (a skill "
        "registered inside another's folder), or a skill's file at the URI of a resource "
        "the catalog declares",
    ),
    Check(
        f"{PREFIX}E031",
        apps.BAD_VIEW,
        "a view of MCP Apps off the extension's types: a `ui://` resource whose MIME type is "
        "not `text/html;profile=mcp-app`, a `ui://` template, or a `_meta.ui` with a key the "
        "page does not define, a CSP origin that is not `scheme://host[:port]` (https, "
        "http, wss, ws; `*.` first label), a permission other than `{}`, a `domain` that is "
        "not a string or a `prefersBorder` that is not a boolean",
    ),
    Check(
        f"{PREFIX}E032",
        apps.BAD_TOOL_VIEW,
        "a tool's link to a view off the page: `_meta.ui.resourceUri` (or the deprecated flat "
        "`_meta['ui/resourceUri']`) naming no declared view, the two disagreeing, a "
        "`visibility` that is not a list of `model` and `app`, or another key",
    ),
    Check(
        f"{PREFIX}E033",
        VIEW_TEMPLATE,
        "a view's template that does not exist or cannot be read, inlines a static file the "
        "project does not have or that cannot be inlined (a script holding `<!--`, a style "
        "holding `</style`), loads the project's static files by URL (`{% static %}`) or a "
        "plugin (`object-src 'none'`), or loads (written as a literal: an element's `src`, a "
        "style's `url()`, a `fetch`, a module import, a frame) from an origin its `csp` does "
        "not declare for that kind of load, which every host would block",
    ),
    Check(
        f"{PREFIX}E034",
        BAD_HANDLE_KIND,
        "a handle kind off its rules (a `kind` of 1 to 63 of `a-z 0-9 _`, a `prefix` of 1 to 8 "
        "of `a-z 0-9`, each starting with a letter; `idle` and `lifetime` timedeltas of at "
        "least a second, `idle` no longer than `lifetime`; `per_principal` an integer >= 1), "
        "two kinds with one name or one prefix, or a tool that `mints` a kind no registered "
        "`HandleKind` declares",
    ),
    Check(
        f"{PREFIX}E035",
        NEVER_BLOCKS,
        "a declaration's `never_blocks` that is not `True` or `False`, `True` on a skill (its "
        "files are read once, not per request), or `True` on a class whose methods a request "
        "runs are all coroutines (they run on the event loop already)",
    ),
    # One per BEAMMCP key, its finding the settings table's rule (CATALOG's is E001's).
    *(
        Check(row.check_id, row.key, f"`BEAMMCP['{row.key}']` {row.rule.finding}")
        for row in SETTINGS
        if row.key != "CATALOG"
    ),
    Check(f"{PREFIX}W001", "unknown_setting", "an unknown key in `BEAMMCP`"),
    Check(
        f"{PREFIX}W002",
        "plain_django_route",
        "the HTTP endpoint is routed, but no ASGI module the project declares builds its "
        "application with the package's router, so the pre-body protections are inactive",
    ),
    Check(
        f"{PREFIX}W004",
        "legacy_output_schema",
        "a tool's output schema whose root is not an object schema, which 2025-11-25 cannot carry",
    ),
    Check(
        f"{PREFIX}W006",
        "scopes_without_tokens",
        "entries declare OAuth scopes, but `BEAMMCP['AUTHORIZE']` is `allow_all`, which "
        "names no token's scopes: over HTTP every use of those entries is challenged 403 "
        "(an entry that also needs Django permissions is hidden instead, and not named)",
    ),
    Check(
        f"{PREFIX}W007",
        "resource_path",
        "`BEAMMCP['OAUTH']['RESOURCE']` names a path other than the MCP endpoint's: clients "
        "hold the metadata's `resource` to the URL they connect to, and tokens to it",
    ),
    Check(
        f"{PREFIX}W008",
        "annotation_contradicted",
        "a tool's declared graph reaches an effect its annotations say it does not have: "
        "a write under `readOnlyHint: true`, a delete under `destructiveHint: false`, the "
        "network or mail under `openWorldHint: false`",
    ),
    Check(
        f"{PREFIX}W009",
        "nothing_served",
        "the catalog serves nothing: no tool, resource or prompt is registered (an app left "
        "out of `INSTALLED_APPS`, an `mcp.py` never imported); empty is legal, and a project "
        "that serves nothing on purpose silences this by its id",
    ),
    Check(
        f"{PREFIX}W010",
        "consent_without_document_host",
        "django-oauth-toolkit serves clients' metadata documents (`CIMD_ENABLED`), but its "
        "authorize URL is not the consent view of `beammcp_django.oauth.server_urls`, which "
        "shows the host a client's document came from and where the answer goes",
    ),
    Check(
        f"{PREFIX}W011",
        SKILL_SHADOWED,
        "a skill folder that is not served: an app earlier in `INSTALLED_APPS` holds a "
        "folder of the same name (the first app wins, as with templates), or a `Skill` "
        "class of that name gives its files from code",
    ),
    Check(
        f"{PREFIX}W005",
        "redis_read_timeout",
        "the Redis channel layer's reads time out no later than channels_redis' 5-s "
        "blocking read (redis-py 8's default `socket_timeout` is 5 s): every "
        "`subscriptions/listen` stream quiet that long would end with an internal error",
    ),
)

_BY_RULE = {check.rule: check.id for check in CHECKS}


def check_id(rule: str) -> str:
    """The id of ``rule``; a rule with no id is a bug in this package, so it raises."""
    return _BY_RULE[rule]


# The settings ``E015`` covered, all at once, until each key had its own id.
_ONCE_E015 = (
    "SERVER_NAME",
    "SERVER_VERSION",
    "SERVER_TITLE",
    "INSTRUCTIONS",
    "PAGE_SIZE",
    "CACHE_HINTS",
    "CALL_TIMEOUT_SECONDS",
    "BODY_READ_TIMEOUT_SECONDS",
    "HEADER_MAX_BYTES",
    "HEADER_MAX_COUNT",
    "HEADER_TIMEOUT_SECONDS",
    "SUBSCRIPTION_MAX_SECONDS",
    "SUBSCRIPTION_QUEUE_LIMIT",
    "SUBSCRIPTION_REAUTHORIZE_SECONDS",
    "CONNECTOME_SCOPE",
    "CONNECTOME_FLUSH_SECONDS",
    "CONNECTOME_TRACE",
    "FREEZE_HEAP_AT_STARTUP",
    "REQUEST_STATE_MAX_AGE_SECONDS",
    "STDIO_SHUTDOWN_GRACE_SECONDS",
    "STDIO_MAX_CONCURRENT_REQUESTS",
)

# Retired ids and the ids that now hold their rules. A retired id is never given again.
RENUMBERED: dict[str, tuple[str, ...]] = {
    f"{PREFIX}E015": tuple(check_id(key) for key in _ONCE_E015),
    f"{PREFIX}E018": (check_id("ALLOWED_ORIGINS"),),
    f"{PREFIX}E019": (check_id("AUTHORIZE"), check_id("AUTHORIZE_BODY")),
    f"{PREFIX}W003": (check_id(audit.UNBOUNDED_SCHEMA),),
}
