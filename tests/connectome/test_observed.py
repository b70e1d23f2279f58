"""The observed collector fed by the server: counts per catalog entry, merged across threads,
never a byte of the request, and bounded by the catalog, not by what callers send."""

from __future__ import annotations

import asyncio
import threading

from beammcp_django.connectome.core.observed import Collector
from beammcp_django.protocol.catalog import ResourceSpec, ResourceTemplateSpec, ToolSpec
from beammcp_django.protocol.server import Server, ServerOptions

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Catalog:
    tools = (ToolSpec("echo", {"type": "object"}),)
    resources = (ResourceSpec("s://a", "a"), ResourceTemplateSpec("s://t/{id}", "t"))
    prompts = ()

    def dispatch(self, name, arguments, context):
        return "ok"

    def read_resource(self, match, context):
        return "text"

    def get_prompt(self, name, arguments, context):
        raise AssertionError


def send(server: Server, method: str, **params) -> dict:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return asyncio.run(server.handle(message))


def test_calls_that_reach_host_code_are_counted_by_catalog_entry():
    collector = Collector()
    server = Server(Catalog(), ServerOptions("t", "1"), cursor_key=b"k", observe=collector.record)
    for _ in range(3):
        send(server, "tools/call", name="echo", arguments={"secret": "do-not-keep"})
    send(server, "tools/call", name="missing")  # refused before host code: not counted
    send(server, "resources/read", uri="s://a")
    snapshot = collector.snapshot()
    assert snapshot[("tools/call", "echo")].count == 3
    assert snapshot[("resources/read", "s://a")].count == 1
    assert set(snapshot) == {("tools/call", "echo"), ("resources/read", "s://a")}
    assert "do-not-keep" not in repr(snapshot)


def test_templated_reads_count_under_the_template_so_callers_cannot_grow_the_table():
    collector = Collector()
    server = Server(Catalog(), ServerOptions("t", "1"), cursor_key=b"k", observe=collector.record)
    for number in range(500):
        send(server, "resources/read", uri=f"s://t/{number}")
    snapshot = collector.snapshot()
    assert list(snapshot) == [("resources/read", "s://t/{id}")]
    assert snapshot[("resources/read", "s://t/{id}")].count == 500


def test_counts_from_many_threads_merge_without_loss():
    collector = Collector()

    def work() -> None:
        for _ in range(10_000):
            collector.record("tools/call", "echo")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    observation = collector.snapshot()[("tools/call", "echo")]
    assert observation.count == 80_000
    assert observation.first_seen <= observation.last_seen
