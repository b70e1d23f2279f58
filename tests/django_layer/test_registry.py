"""The class registry: a ``Site`` collects Tool/Resource/ResourceTemplate/Prompt classes and
serves them as a catalog, sync handlers in a worker thread and async ones on the loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from django.test import override_settings

from beammcp_django import process as servers
from beammcp_django.protocol.catalog import PromptArgument, ToolSpec
from beammcp_django.protocol.context import RequestContext
from beammcp_django.protocol.errors import METHOD_NOT_FOUND
from beammcp_django.protocol.server import Server, ServerOptions
from beammcp_django.registry import (
    AlreadyRegistered,
    NotRegistered,
    Prompt,
    Resource,
    ResourceTemplate,
    Site,
    Tool,
)
from beammcp_django.runtime import host_threads

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = META
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}


def make_server(site: Site) -> Server:
    return Server(
        site,
        ServerOptions(name="t", version="1"),
        cursor_key=b"k",
        run_sync=host_threads.run_sync_host,
    )


def handle(server: Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = asyncio.run(server.handle(request(method, params)))
    assert reply is not None
    return reply


def result(server: Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = handle(server, method, params)
    assert "result" in reply, reply
    return reply["result"]


def tool(tool_name: str, answer: str = "ok") -> type[Tool]:
    """A fresh Tool class (every test registers its own, so sites never share classes)."""

    class Made(Tool):
        name = tool_name

        def call(self, arguments, context):
            return answer

    return Made


# -- registering -----------------------------------------------------------------------------


def test_register_used_as_a_decorator_returns_the_class():
    site = Site()

    @site.register
    class Hello(Tool):
        name = "hello"

        def call(self, arguments, context):
            return "hi"

    assert isinstance(Hello, type)
    assert issubclass(Hello, Tool)
    assert site.is_registered(Hello)
    assert site.declarations == (Hello,)


def test_register_with_several_classes_returns_them_all():
    site = Site()
    first, second = tool("first"), tool("second")
    assert site.register(first, second) == (first, second)
    assert [spec.name for spec in site.tools] == ["first", "second"]


def test_registering_the_same_class_twice_raises_already_registered():
    site = Site()
    hello = tool("hello")
    site.register(hello)
    with pytest.raises(AlreadyRegistered):
        site.register(hello)
    assert site.declarations == (hello,)
    assert len(site.tools) == 1


def test_registering_a_class_that_is_no_declaration_raises_type_error():
    site = Site()

    class Plain:
        name = "plain"

    with pytest.raises(TypeError):
        site.register(Plain)
    assert site.declarations == ()


def test_a_register_call_failing_part_way_leaves_the_lists_matching_the_registered_classes():
    site = Site()
    old, new = tool("old"), tool("new")
    site.register(old)
    with pytest.raises(AlreadyRegistered):
        site.register(new, old)
    listed = sorted(spec.name for spec in site.tools)
    registered = sorted(declaration.name for declaration in site.declarations)
    assert listed == registered


def test_an_unregister_call_failing_part_way_leaves_the_lists_matching_the_registered_classes():
    site = Site()
    kept, stranger = tool("kept"), tool("stranger")
    site.register(kept)
    with pytest.raises(NotRegistered):
        site.unregister(kept, stranger)
    listed = sorted(spec.name for spec in site.tools)
    registered = sorted(declaration.name for declaration in site.declarations)
    assert listed == registered


def test_unregister_removes_the_class_from_the_lists():
    site = Site()
    hello, bye = tool("hello"), tool("bye")
    site.register(hello, bye)
    site.unregister(hello)
    assert not site.is_registered(hello)
    assert site.declarations == (bye,)
    assert [spec.name for spec in site.tools] == ["bye"]


def test_unregistering_a_class_never_registered_raises_not_registered():
    site = Site()
    with pytest.raises(NotRegistered):
        site.unregister(tool("ghost"))


def test_a_class_can_be_registered_again_after_unregister():
    site = Site()
    hello = tool("hello")
    site.register(hello)
    site.unregister(hello)
    site.register(hello)
    assert [spec.name for spec in site.tools] == ["hello"]


def test_lists_are_tuples_rebuilt_only_on_change():
    site = Site()
    assert site.tools == () and site.resources == () and site.prompts == ()
    site.register(tool("first"))
    before = site.tools
    assert isinstance(before, tuple)
    assert site.tools is before  # reading does not rebuild
    site.register(tool("second"))
    assert isinstance(site.tools, tuple)
    assert site.tools is not before
    assert all(isinstance(spec, ToolSpec) for spec in site.tools)


def test_the_site_keeps_registration_order_and_the_server_sorts():
    site = Site()
    site.register(tool("zeta"), tool("alpha"), tool("mu"))
    assert [spec.name for spec in site.tools] == ["zeta", "alpha", "mu"]
    listed = result(make_server(site), "tools/list")["tools"]
    assert [entry["name"] for entry in listed] == ["alpha", "mu", "zeta"]


def test_a_class_registered_after_the_server_was_built_is_served():
    site = Site()
    site.register(tool("early"))
    server = make_server(site)
    assert [t["name"] for t in result(server, "tools/list")["tools"]] == ["early"]
    site.register(tool("late", answer="late answer"))
    assert [t["name"] for t in result(server, "tools/list")["tools"]] == ["early", "late"]
    called = result(server, "tools/call", {"name": "late", "arguments": {}})
    assert called["content"] == [{"type": "text", "text": "late answer"}]


def test_an_unregistered_tool_is_no_longer_served():
    site = Site()
    gone = tool("gone")
    site.register(gone, tool("stays"))
    server = make_server(site)
    site.unregister(gone)
    reply = handle(server, "tools/call", {"name": "gone", "arguments": {}})
    assert "error" in reply
    assert "gone" in reply["error"]["message"]


def test_the_tool_docstring_is_the_default_description():
    site = Site()

    @site.register
    class Documented(Tool):
        """Says what it does."""

        name = "documented"

        def call(self, arguments, context):
            return "ok"

    assert site.tools[0].description == "Says what it does."


# -- threads ---------------------------------------------------------------------------------

THREADS: dict[str, threading.Thread] = {}
THREAD_SITE = Site()


@THREAD_SITE.register
class SyncWhere(Tool):
    name = "sync_where"

    def call(self, arguments, context):
        THREADS["sync"] = threading.current_thread()
        return "sync"


@THREAD_SITE.register
class AsyncWhere(Tool):
    name = "async_where"

    async def call(self, arguments, context):
        THREADS["async"] = threading.current_thread()
        return "async"


@THREAD_SITE.register
class SyncReader(Resource):
    uri = "threads://sync"
    name = "sync_reader"

    def read(self, context):
        THREADS["read"] = threading.current_thread()
        return "read"


@THREAD_SITE.register
class SyncPrompt(Prompt):
    name = "sync_prompt"

    def get(self, arguments, context):
        from beammcp_django.protocol import content

        THREADS["prompt"] = threading.current_thread()
        return [content.user("hi")]


@pytest.fixture
def thread_server():
    THREADS.clear()
    with override_settings(BEAMMCP={"CATALOG": f"{__name__}.THREAD_SITE"}):
        server = servers.get_server()
        assert server.catalog is THREAD_SITE
        yield server


def test_a_sync_call_runs_in_a_worker_thread_not_the_loop_thread(thread_server):
    loop_thread = threading.current_thread()  # asyncio.run runs its loop in this thread
    called = result(thread_server, "tools/call", {"name": "sync_where", "arguments": {}})
    assert called["content"] == [{"type": "text", "text": "sync"}]
    assert THREADS["sync"] is not loop_thread


def test_an_async_call_runs_on_the_loop_thread(thread_server):
    loop_thread = threading.current_thread()
    called = result(thread_server, "tools/call", {"name": "async_where", "arguments": {}})
    assert called["content"] == [{"type": "text", "text": "async"}]
    assert THREADS["async"] is loop_thread


def test_sync_readers_and_prompts_also_run_in_a_worker_thread(thread_server):
    loop_thread = threading.current_thread()
    read = result(thread_server, "resources/read", {"uri": "threads://sync"})
    assert read["contents"][0]["text"] == "read"
    got = result(thread_server, "prompts/get", {"name": "sync_prompt"})
    assert got["messages"][0]["content"]["text"] == "hi"
    assert THREADS["read"] is not loop_thread
    assert THREADS["prompt"] is not loop_thread


# -- resource templates and completion ------------------------------------------------------


def test_a_resource_template_read_receives_uri_variables_and_context():
    site = Site()
    seen: list[tuple[Any, ...]] = []

    @site.register
    class Notes(ResourceTemplate):
        uri_template = "notes://{topic}/{+rest}"
        name = "notes"

        def read(self, uri, variables, context):
            seen.append((uri, dict(variables), context))
            return f"{variables['topic']}:{variables['rest']}"

    read = result(make_server(site), "resources/read", {"uri": "notes://birds/owls/barn"})
    assert read["contents"][0] == {"uri": "notes://birds/owls/barn", "text": "birds:owls/barn"}
    (uri, variables, context) = seen[0]
    assert uri == "notes://birds/owls/barn"
    assert variables == {"topic": "birds", "rest": "owls/barn"}
    assert isinstance(context, RequestContext)
    assert context.method == "resources/read"
    assert context.protocol_version == "2026-07-28"


def test_a_resource_read_receives_only_the_context():
    site = Site()
    seen: list[Any] = []

    @site.register
    class Fixed(Resource):
        uri = "fixed://one"
        name = "fixed"

        def read(self, context):
            seen.append(context)
            return b"\x00\x01"

    read = result(make_server(site), "resources/read", {"uri": "fixed://one"})
    assert read["contents"][0]["blob"] == "AAE="
    assert isinstance(seen[0], RequestContext)


def test_without_any_complete_the_site_has_no_completer_and_the_server_none():
    site = Site()
    site.register(tool("plain"))

    @site.register
    class Plain(Prompt):
        name = "plain_prompt"

        def get(self, arguments, context):
            return []

    assert site.complete is None
    server = make_server(site)
    assert "completions" not in result(server, "server/discover")["capabilities"]
    reply = handle(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "plain_prompt"},
            "argument": {"name": "x", "value": ""},
        },
    )
    assert reply["error"]["code"] == METHOD_NOT_FOUND


def test_a_prompt_with_complete_gives_the_site_a_completer_and_the_server_completions():
    site = Site()
    seen: list[tuple[Any, ...]] = []

    @site.register
    class Greeting(Prompt):
        name = "greeting"
        arguments = (PromptArgument("who", required=True), PromptArgument("mood"))

        def get(self, arguments, context):
            return []

        def complete(self, argument, value, context_arguments, context):
            seen.append((argument, value, dict(context_arguments), context))
            return [who for who in ("ada", "alan", "grace") if who.startswith(value)]

    assert callable(site.complete)
    server = make_server(site)
    assert "completions" in result(server, "server/discover")["capabilities"]
    completed = result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greeting"},
            "argument": {"name": "who", "value": "a"},
            "context": {"arguments": {"mood": "calm"}},
        },
    )
    assert completed["completion"]["values"] == ["ada", "alan"]
    argument, value, context_arguments, context = seen[0]
    assert (argument, value, context_arguments) == ("who", "a", {"mood": "calm"})
    assert isinstance(context, RequestContext)


def test_a_resource_template_with_complete_gives_the_site_a_completer():
    site = Site()

    @site.register
    class Cities(ResourceTemplate):
        uri_template = "cities://{city}"
        name = "cities"

        def read(self, uri, variables, context):
            return variables["city"]

        async def complete(self, argument, value, context_arguments, context):
            return ["oslo", "ottawa"]

    assert callable(site.complete)
    completed = result(
        make_server(site),
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "cities://{city}"},
            "argument": {"name": "city", "value": "o"},
        },
    )
    assert completed["completion"]["values"] == ["oslo", "ottawa"]


def test_unregistering_the_last_completer_removes_the_site_completer():
    site = Site()

    class Completing(Prompt):
        name = "completing"

        def get(self, arguments, context):
            return []

        def complete(self, argument, value, context_arguments, context):
            return []

    site.register(Completing)
    assert site.complete is not None
    site.unregister(Completing)
    assert site.complete is None


def test_an_incomplete_class_is_registered_but_not_listed():
    site = Site()

    @site.register
    class Nameless(Tool):
        def call(self, arguments, context):
            return "ok"

    assert site.is_registered(Nameless)
    assert site.tools == ()
    assert [problem.rule for problem in site.problems()] == ["incomplete_declaration"]


def test_a_completer_registered_after_the_server_was_built_is_advertised_and_served():
    site = Site()
    site.register(tool("plain"))
    server = make_server(site)

    @site.register
    class Late(Prompt):
        name = "late"

        def get(self, arguments, context):
            return []

        def complete(self, argument, value, context_arguments, context):
            return ["later"]

    assert "completions" in result(server, "server/discover")["capabilities"]
    completed = result(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "late"}, "argument": {"name": "x", "value": ""}},
    )
    assert completed["completion"]["values"] == ["later"]
