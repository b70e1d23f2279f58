"""``never_blocks = True``: a declaration's plain methods run on the event loop, and the
promise is held where it can be (Django's refusal of the ORM there, a call that held the loop
too long logged once), with ``beammcp.E035`` checking the declaration at startup
(``test_system_checks.py``)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from typing import Any

import pytest

from beammcp_django.protocol.catalog import PromptArgument
from beammcp_django.protocol.errors import INTERNAL_ERROR
from beammcp_django.registry import Prompt, Resource, ResourceTemplate, Site, Tool
from beammcp_django.runtime import on_loop
from sample_project.demo.models import Observation
from tests.django_layer.test_registry import handle, make_server, result

WHERE: dict[str, threading.Thread] = {}
SITE = Site()
SET_BY_HOST: contextvars.ContextVar[str] = contextvars.ContextVar("set_by_host", default="unset")


@SITE.register
class EchoOnLoop(Tool):
    name = "echo_on_loop"
    never_blocks = True

    def call(self, arguments: dict[str, Any], context: Any) -> str:
        WHERE["call"] = threading.current_thread()
        return "on the loop"


@SITE.register
class ReadsOnLoop(Resource):
    uri = "loop://fixed"
    name = "reads_on_loop"
    never_blocks = True

    def read(self, context: Any) -> str:
        WHERE["read"] = threading.current_thread()
        return "read"


@SITE.register
class ReadsTemplateOnLoop(ResourceTemplate):
    uri_template = "loop://items/{item}"
    name = "reads_template_on_loop"
    never_blocks = True

    def read(self, uri: str, variables: dict[str, str], context: Any) -> str:
        WHERE["template"] = threading.current_thread()
        return variables["item"]


@SITE.register
class PromptOnLoop(Prompt):
    name = "prompt_on_loop"
    never_blocks = True
    arguments = (PromptArgument("city"),)

    def get(self, arguments: dict[str, Any], context: Any) -> list[Any]:
        from beammcp_django.protocol import content

        WHERE["get"] = threading.current_thread()
        return [content.user("hi")]

    def complete(self, argument: str, value: str, context_arguments: Any, context: Any) -> list:
        WHERE["complete"] = threading.current_thread()
        return ["oslo"]


@SITE.register
class QueriesAnyway(Tool):
    """Breaks its promise: Django refuses the query on the loop."""

    name = "queries_anyway"
    never_blocks = True

    def call(self, arguments: dict[str, Any], context: Any) -> str:
        return str(Observation.objects.count())


@SITE.register
class WaitsAnyway(Tool):
    """Breaks its promise by waiting, longer than the loop should be held."""

    name = "waits_anyway"
    never_blocks = True

    def call(self, arguments: dict[str, Any], context: Any) -> str:
        time.sleep(on_loop.HELD_TOO_LONG * 2)
        return "late"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    WHERE.clear()
    monkeypatch.setattr(on_loop, "_LOGGED", set())  # each test sees its own first time
    return make_server(SITE)


def test_every_plain_method_of_a_class_that_never_blocks_runs_on_the_loop_thread(server):
    loop_thread = threading.current_thread()  # asyncio.run runs its loop in this thread
    called = result(server, "tools/call", {"name": "echo_on_loop", "arguments": {}})
    assert called["content"] == [{"type": "text", "text": "on the loop"}]
    assert result(server, "resources/read", {"uri": "loop://fixed"})["contents"][0]["text"]
    read = result(server, "resources/read", {"uri": "loop://items/spoon"})
    assert read["contents"][0]["text"] == "spoon"
    assert result(server, "prompts/get", {"name": "prompt_on_loop"})["messages"]
    completed = result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "prompt_on_loop"},
            "argument": {"name": "city", "value": "o"},
        },
    )
    assert completed["completion"]["values"] == ["oslo"]
    assert set(WHERE) == {"call", "read", "template", "get", "complete"}
    assert all(thread is loop_thread for thread in WHERE.values())


def test_what_a_method_sets_in_its_context_stays_with_the_call():
    """As on a worker thread (a copy of the request's context): a method that activates a
    translation or a time zone does not change the rest of the request's handling."""

    def activates() -> str:
        SET_BY_HOST.set("by the tool")
        return SET_BY_HOST.get()

    async def request() -> tuple[str, str]:
        seen_by_the_call = on_loop.OnLoop(activates, "tests.activates")()
        return seen_by_the_call, SET_BY_HOST.get()

    assert asyncio.run(request()) == ("by the tool", "unset")


def test_a_query_on_the_loop_is_refused_by_django_and_the_log_names_the_declaration(server, caplog):
    with caplog.at_level(logging.ERROR, logger="beammcp_django"):
        reply = handle(server, "tools/call", {"name": "queries_anyway", "arguments": {}})
    assert reply["error"]["code"] == INTERNAL_ERROR
    named = [record.getMessage() for record in caplog.records if "never_blocks" in record.msg]
    assert len(named) == 1, caplog.records
    assert "test_never_blocks.QueriesAnyway.call runs on the event loop" in named[0]
    assert "used the database" in named[0]


def test_a_call_that_held_the_loop_too_long_is_logged_once(server, caplog):
    with caplog.at_level(logging.WARNING, logger="beammcp_django"):
        for _ in range(2):
            called = result(server, "tools/call", {"name": "waits_anyway", "arguments": {}})
            assert called["content"] == [{"type": "text", "text": "late"}]
    held = [record.getMessage() for record in caplog.records if "held it" in record.msg]
    assert len(held) == 1, held
    assert "WaitsAnyway.call runs on the event loop" in held[0]


def test_without_the_declaration_a_plain_method_still_runs_on_a_worker_thread():
    site = Site()
    where: list[threading.Thread] = []

    @site.register
    class Plain(Tool):
        name = "plain"

        def call(self, arguments: dict[str, Any], context: Any) -> str:
            where.append(threading.current_thread())
            return "ok"

    result(make_server(site), "tools/call", {"name": "plain", "arguments": {}})
    assert where and where[0] is not threading.current_thread()
