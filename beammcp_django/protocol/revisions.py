"""The two revisions this server speaks, and the reserved ``_meta`` keys of 2026-07-28."""

from __future__ import annotations

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
MODERN_VERSIONS: tuple[str, ...] = (MODERN,)
# The handshake-era revisions a session may negotiate, newest first: 2025-06-18 is what many
# clients in the field still send. What this server sends differs between them only in the
# input requests of a call (2025-06-18's elicitation/create has no ``mode``, so no URL mode):
# no icons, tool execution hints or tasks are sent at either.
LEGACY_2025_06_18 = "2025-06-18"
LEGACY_VERSIONS: tuple[str, ...] = (LEGACY, LEGACY_2025_06_18)


def served(legacy: bool) -> list[str]:
    """Every revision an endpoint serves, newest first: what ``server/discover`` lists and
    what a ``-32022`` names as supported (one answer, whichever a client asks)."""
    return [*MODERN_VERSIONS, *(LEGACY_VERSIONS if legacy else ())]


META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# The cacheable results of 2026-07-28 (caching.mdx §Cacheable Results); each carries
# ``ttlMs`` and ``cacheScope``.
CACHEABLE_METHODS: tuple[str, ...] = (
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
    # The skills extension's (ext-skills, §Listing Skills and §Getting a Skill).
    "skills/list",
    "skills/get",
)
