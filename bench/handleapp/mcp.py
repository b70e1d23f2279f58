"""A kind of handle and the tools of ``bench/handles.py``: one mints a watch list, one reads
it (the path whose cost must not depend on whose id it is)."""

from __future__ import annotations

from beammcp_django import mcp


@mcp.site.register
class BenchWatchList(mcp.HandleKind):
    kind = "bench_watch_list"
    prefix = "bwl"
    per_principal = 10


@mcp.site.register
class BenchCreateWatchList(mcp.Tool):
    """Start a watch list."""

    name = "bench_create_watch_list"
    mints = (BenchWatchList,)

    def call(self, arguments, context):
        return context.handles.mint(BenchWatchList, {"cities": ["oslo"]}).id


@mcp.site.register
class BenchReadWatchList(mcp.Tool):
    """Read a watch list."""

    name = "bench_read_watch_list"
    input_schema = {
        "type": "object",
        "properties": {"watch_list_id": BenchWatchList.argument()},
        "required": ["watch_list_id"],
        "additionalProperties": False,
    }

    def call(self, arguments, context):
        return ", ".join(
            context.handles.get(BenchWatchList, arguments["watch_list_id"]).data["cities"]
        )
