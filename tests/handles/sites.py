"""A catalog with one handle kind (watch lists) and the tools that mint, use and end them, for
the handle tests."""

from __future__ import annotations

from datetime import timedelta

from beammcp_django import mcp

SITE = mcp.Site()


@SITE.register
class WatchList(mcp.HandleKind):
    kind = "watch_list"
    prefix = "wl"
    idle = timedelta(hours=1)
    lifetime = timedelta(days=1)
    per_principal = 3


@SITE.register
class CreateWatchList(mcp.Tool):
    """Start a list of cities to watch."""

    name = "create_watch_list"
    mints = (WatchList,)

    def call(self, arguments, context):
        handle = context.handles.mint(WatchList, {"cities": []})
        return mcp.ToolResult(
            content=[mcp.content.text(f"Created watch list {handle.id}")],
            structured={"watch_list_id": handle.id},
        )


@SITE.register
class WatchCity(mcp.Tool):
    """Add a city to a watch list."""

    name = "watch_city"
    input_schema = {
        "type": "object",
        "properties": {"watch_list_id": WatchList.argument(), "city": {"type": "string"}},
        "required": ["watch_list_id", "city"],
        "additionalProperties": False,
    }

    def call(self, arguments, context):
        handle = context.handles.get(WatchList, arguments["watch_list_id"])
        handle.data["cities"].append(arguments["city"])
        context.handles.save(handle)
        return ", ".join(handle.data["cities"])


@SITE.register
class ReadWatchList(mcp.Tool):
    """The cities of a watch list (async: through the a-methods)."""

    name = "read_watch_list"
    input_schema = {
        "type": "object",
        "properties": {"watch_list_id": {"type": "string"}},
        "required": ["watch_list_id"],
        "additionalProperties": False,
    }

    async def call(self, arguments, context):
        handle = await context.handles.aget("watch_list", arguments["watch_list_id"])
        return ", ".join(handle.data["cities"]) or "(none)"


@SITE.register
class EndWatchList(mcp.Tool):
    """End a watch list."""

    name = "end_watch_list"
    input_schema = {
        "type": "object",
        "properties": {"watch_list_id": WatchList.argument()},
        "required": ["watch_list_id"],
        "additionalProperties": False,
    }

    def call(self, arguments, context):
        context.handles.end(WatchList, arguments["watch_list_id"])
        return "ended"


# Two kinds with one prefix (beammcp.E034): an id would name either.
TWO_KINDS_ONE_PREFIX = mcp.Site()


@TWO_KINDS_ONE_PREFIX.register
class Basket(mcp.HandleKind):
    kind = "basket"
    prefix = "wl"


@TWO_KINDS_ONE_PREFIX.register
class Wishlist(mcp.HandleKind):
    kind = "wishlist"
    prefix = "wl"


@TWO_KINDS_ONE_PREFIX.register
class CreateBasket(mcp.Tool):
    """Start a basket (served, so that the site is no empty one)."""

    name = "create_basket"
    mints = (Basket,)

    def call(self, arguments, context):
        return context.handles.mint(Basket).id
