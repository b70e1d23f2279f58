"""The declared graph of the sample project's catalog, read from its source, with the
completeness bound listing what static reading could not resolve."""

from __future__ import annotations

import sys
import textwrap

import pytest

from beammcp_django.connectome.core.canonical import encode_graph
from beammcp_django.connectome.core.declared import build_declared
from beammcp_django.registry import site

SERVER = "weather"


@pytest.fixture(scope="module")
def declared():
    return build_declared(site, SERVER, ["sample_project.demo"])


def edges(declared):
    return {(e.source, e.target, e.kind) for e in declared.graph.edges}


def test_the_server_reaches_every_catalog_entry(declared):
    found = edges(declared)
    for tool in ("echo", "get_forecast", "record_observation"):
        assert ("weather/server", f"weather/tool/{tool}", "invoke") in found
    assert ("weather/server", "weather/resource/weather:%2F%2Fstations", "read") in found
    assert ("weather/server", "weather/prompt/forecast_briefing", "invoke") in found


def test_each_entry_reaches_its_handler_function_with_its_python_id(declared):
    found = edges(declared)
    handler = "weather/module/sample_project.demo.mcp/Echo.call/3"
    assert ("weather/tool/echo", handler, "invoke") in found
    node = {n.id: n for n in declared.graph.nodes}[handler]
    assert (node.kind, node.level) == ("module", "mfa")


def test_a_call_to_a_module_function_is_an_edge(declared):
    assert (
        "weather/module/sample_project.demo.mcp/GetForecast.call/3",
        "weather/module/sample_project.demo.mcp/made_up_day/2",
        "invoke",
    ) in edges(declared)


def test_what_static_reading_cannot_resolve_is_listed_never_guessed(declared):
    reasons = {(u.reason, u.detail) for u in declared.bound}
    assert ("callee outside the scope", "beammcp_django.mcp.ToolResult") in reasons
    assert any(
        reason == "unresolved name in scope" and "objects.create" in detail
        for reason, detail in reasons
    )
    targets = {e.target for e in declared.graph.edges}
    assert not any("objects" in target for target in targets)


def test_the_declared_graph_has_canonical_bytes(declared):
    data = encode_graph(declared.graph)
    assert data.startswith(b'{"schema_version":3,"algorithm":"sha256","nodes":[')


def test_getattr_dynamic_imports_and_variable_calls_go_to_the_bound(tmp_path, monkeypatch):
    package = tmp_path / "boundpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(
        textwrap.dedent(
            """
            import importlib

            def helper():
                return 1

            def entry(arguments, context):
                handler = helper
                handler()
                getattr(arguments, "x")()
                importlib.import_module("os")
                __import__("sys")
                return helper()
            """
        )
    )
    (package / "broken.py").write_text("def nope(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("boundpkg", None)
    from boundpkg.mod import entry

    class Catalog:
        from beammcp_django.protocol.catalog import ToolSpec

        tools = (ToolSpec("t", {"type": "object"}),)
        resources = ()
        prompts = ()
        dispatch = staticmethod(entry)

    result = build_declared(Catalog(), "s", ["boundpkg.mod", "boundpkg.broken"])
    reasons = sorted({u.reason for u in result.bound})
    assert reasons == [
        "call through a variable",
        "call through an expression",
        "did not parse",
        "dynamic import",
        "getattr",
    ]
    assert ("s/module/boundpkg.mod/entry/2", "s/module/boundpkg.mod/helper/0", "invoke") in edges(
        result
    )
