"""Two tools, one sync and one async, that answer the principal host code was handed: a
caller named by the test hook (``Caller``), a Django user (stdio's ``--user``), or nobody.
Declared here, registered by ``mcp.py`` (where the app is installed) and by ``catalog.py``
(a catalog of their own, for tests that must not add them to the default site)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from beammcp_django import mcp

NO_ARGUMENTS = {"type": "object", "additionalProperties": False}
NOBODY = "nobody"


@dataclass(frozen=True)
class Caller:
    """A principal that is not a Django user: what a hook reading a service token returns."""

    name: str


def describe(principal: Any) -> str:
    if principal is None:
        return NOBODY
    if isinstance(principal, Caller):
        return f"caller:{principal.name}"
    # A Django user: its model and username, so a test sees it is the real row.
    return f"{principal._meta.label}:{principal.get_username()}"


class WhoAmI(mcp.Tool):
    """Who is calling, seen from a worker thread."""

    name = "principal_whoami"
    input_schema = NO_ARGUMENTS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return describe(context.principal)


class WhoAmIAsync(mcp.Tool):
    """Who is calling, seen on the event loop."""

    name = "principal_whoami_async"
    input_schema = NO_ARGUMENTS

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return describe(context.principal)


class WriteNote(mcp.Tool):
    """A tool the token must carry ``notes.write`` for: answers who wrote, with what scopes."""

    name = "principal_write_note"
    input_schema = NO_ARGUMENTS
    scopes = ("notes.write",)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return f"{describe(context.principal)} {' '.join(sorted(context.scopes or ()))}"


class WhatHostCodeSees(mcp.Tool):
    """Everything a request hands host code, written out: a test holds it to contain no
    credential (the package never passes a caller's token on)."""

    name = "principal_what_host_code_sees"
    input_schema = NO_ARGUMENTS

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        seen = {
            name: getattr(context, name, None)
            for name in dir(context)
            if not name.startswith("__") and not callable(getattr(context, name, None))
        }
        return repr(seen)
