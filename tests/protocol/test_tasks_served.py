"""The tasks extension served by the core (``Server(tasks=...)``): when it is advertised,
which calls become tasks, how ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` answer
(one owner's tasks invisible to every other, answered exactly as an unknown id), the
2025-11-25 decision (a required tool is refused by name, an optional one runs inline), and
what ``Server.run_task`` makes of each way a tool can end.

The runner here keeps tasks in a dict: it is the ``TaskRunner`` contract's smallest honest
implementation, so these tests hold the core alone. The Django runner (the database, the
Tasks framework, real workers) is held by tests/tasks/."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from beammcp_django.protocol.catalog import InputRequired, ToolSpec
from beammcp_django.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    ProtocolError,
    ToolError,
)
from beammcp_django.protocol.listen_filter import SUBSCRIPTION_ID, subscription_notification
from beammcp_django.protocol.principal import principal_key
from beammcp_django.protocol.request import LegacySession
from beammcp_django.protocol.revisions import LEGACY
from beammcp_django.protocol.server import Server, ServerOptions
from beammcp_django.protocol.task_wire import (
    COMPLETED,
    EXTENSION,
    INPUT_REQUIRED,
    WORKING,
    TaskCall,
    TaskView,
)

from .conftest import CURSOR_KEY, call, legacy_request, listen, request

WITH_TASKS = {EXTENSION: {}}
ELICIT = {"method": "elicitation/create", "params": {"message": "Sure?"}}


class Ada:
    """A principal the core knows by its repr (``principal_key``)."""

    def __repr__(self) -> str:
        return "Ada()"


class Mallory:
    def __repr__(self) -> str:
        return "Mallory()"


class DictRunner:
    """The contract in a dict: each task found only with its owner's key."""

    def __init__(self) -> None:
        self.calls: dict[str, TaskCall] = {}
        self.views: dict[str, TaskView] = {}
        self.updates: list[Mapping[str, Any]] = []
        self.cancelled: list[str] = []

    async def start(self, call: TaskCall) -> TaskView:
        task_id = secrets.token_urlsafe(32)
        now = datetime.now(UTC)
        self.calls[task_id] = call
        self.views[task_id] = TaskView(task_id, WORKING, now, now, 60_000, 500)
        return self.views[task_id]

    def _mine(self, task_id: str, owner: str) -> bool:
        return task_id in self.calls and self.calls[task_id].owner == owner

    async def get(self, task_id: str, owner: str) -> TaskView | None:
        return self.views[task_id] if self._mine(task_id, owner) else None

    async def update(self, task_id: str, owner: str, responses: Mapping[str, Any]) -> bool:
        if not self._mine(task_id, owner):
            return False
        self.updates.append(responses)
        return True

    async def cancel(self, task_id: str, owner: str) -> bool:
        if not self._mine(task_id, owner):
            return False
        self.cancelled.append(task_id)
        return True


class TaskCatalog:
    """A required, an optional and a plain tool, plus the tool ends ``run_task`` records."""

    tools = (
        ToolSpec("report", {"type": "object"}, task="required"),
        ToolSpec("maybe", {"type": "object"}, task="optional"),
        ToolSpec("plain", {"type": "object"}),
        ToolSpec("confirm", {"type": "object"}, task="required"),
        ToolSpec("refused", {"type": "object"}, task="required"),
        ToolSpec("broken", {"type": "object"}, task="required"),
        ToolSpec("faulty", {"type": "object"}, task="required"),
    )
    resources = ()
    prompts = ()

    def __init__(self) -> None:
        self.ran: list[str] = []

    def dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        self.ran.append(name)
        if name == "confirm":
            if "sure" in context.input_responses:
                return f"confirmed with state {context.request_state}"
            return InputRequired(requests={"sure": ELICIT}, state="asked once")
        if name == "refused":
            raise ToolError("the report's city is unknown")
        if name == "broken":
            raise ProtocolError(INVALID_PARAMS, "the report needs a city")
        if name == "faulty":
            raise RuntimeError("the warehouse password is hunter2")
        return f"{name} ran inline"


class DecidingCatalog(TaskCatalog):
    """A catalog whose ``admit_task`` decides per call: ``{"now": true}`` runs inline,
    ``{"ask": true}`` asks first."""

    def admit_task(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        if arguments.get("ask") and "go" not in context.input_responses:
            return InputRequired(requests={"go": ELICIT})
        return not arguments.get("now", False)


def served(catalog: Any = None, runner: DictRunner | None = None, **options: Any) -> Server:
    return Server(
        catalog if catalog is not None else TaskCatalog(),
        ServerOptions(name="tasks-test", version="1", **options),
        cursor_key=CURSOR_KEY,
        tasks=runner,
    )


def capabilities(**extra: Any) -> dict[str, Any]:
    return {"extensions": dict(WITH_TASKS), **extra}


def tools_call(name: str, caps: Mapping[str, Any], **arguments: Any) -> dict[str, Any]:
    return request(
        "tools/call",
        {"name": name, "arguments": arguments},
        **{"io.modelcontextprotocol/clientCapabilities": dict(caps)},
    )


def task_request(method: str, task_id: str, caps: Mapping[str, Any] | None = None, **params):
    return request(
        method,
        {"taskId": task_id, **params},
        **{
            "io.modelcontextprotocol/clientCapabilities": dict(
                capabilities() if caps is None else caps
            )
        },
    )


def result_of(reply: Any) -> dict[str, Any]:
    assert reply is not None and "error" not in reply, reply
    return reply["result"]


def payload(reply: Any) -> dict[str, Any]:
    """A result without the envelope every 2026-07-28 result carries."""
    return {
        key: value for key, value in result_of(reply).items() if key not in ("_meta", "resultType")
    }


def error_of(reply: Any, code: int) -> dict[str, Any]:
    assert reply is not None and "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]


# -- advertised ----------------------------------------------------------------------------


def test_the_extension_is_advertised_only_with_a_runner_and_a_tool_that_runs_as_a_task():
    def advertised(server: Server) -> bool:
        extensions = result_of(call(server, request("server/discover")))["capabilities"]
        return EXTENSION in extensions.get("extensions", {})

    class PlainCatalog(TaskCatalog):
        tools = (ToolSpec("plain", {"type": "object"}),)

    assert advertised(served(runner=DictRunner()))
    assert not advertised(served(runner=None))
    assert not advertised(served(PlainCatalog(), runner=DictRunner()))


def test_tasks_methods_are_not_found_where_the_extension_is_not_served():
    reply = call(served(runner=None), task_request("tasks/get", "a" * 43))
    assert "tasks/get" in error_of(reply, METHOD_NOT_FOUND)["message"]


# -- made ----------------------------------------------------------------------------------


def test_a_required_tool_called_with_the_extension_declared_answers_a_task_its_owner_polls():
    runner, catalog = DictRunner(), TaskCatalog()
    server = served(catalog, runner)
    created = result_of(
        call(server, tools_call("report", capabilities(), city="Lyon"), principal=Ada())
    )
    assert created["resultType"] == "task" and created["status"] == WORKING
    assert catalog.ran == []  # the worker runs it, never the request
    made = runner.calls[created["taskId"]]
    assert made.tool == "report" and made.arguments == {"city": "Lyon"}
    assert made.owner == principal_key(Ada())

    polled = result_of(call(server, task_request("tasks/get", created["taskId"]), principal=Ada()))
    assert polled["taskId"] == created["taskId"] and polled["status"] == WORKING


def test_another_callers_task_is_answered_exactly_as_an_unknown_one():
    runner = DictRunner()
    server = served(runner=runner)
    task_id = result_of(call(server, tools_call("report", capabilities()), principal=Ada()))[
        "taskId"
    ]
    unknown = "b" * 43
    for method, extra in (
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {}}),
        ("tasks/cancel", {}),
    ):
        foreign = error_of(
            call(server, task_request(method, task_id, **extra), principal=Mallory()),
            INVALID_PARAMS,
        )
        missing = error_of(
            call(server, task_request(method, unknown, **extra), principal=Ada()), INVALID_PARAMS
        )
        assert foreign == missing
        assert task_id not in str(foreign)
    assert runner.updates == [] and runner.cancelled == []


def test_update_and_cancel_are_acknowledged_with_an_empty_result():
    runner = DictRunner()
    server = served(runner=runner)
    task_id = result_of(call(server, tools_call("report", capabilities()), principal=Ada()))[
        "taskId"
    ]
    answer = {"sure": {"action": "accept", "content": {}}}
    update = task_request("tasks/update", task_id, inputResponses=answer)
    assert payload(call(server, update, principal=Ada())) == {}
    assert payload(call(server, task_request("tasks/cancel", task_id), principal=Ada())) == {}
    assert runner.updates == [answer] and runner.cancelled == [task_id]


def test_a_required_tool_without_the_extension_declared_is_refused_naming_it():
    server = served(runner=DictRunner())
    error = error_of(call(server, tools_call("report", {})), MISSING_CLIENT_CAPABILITY)
    assert EXTENSION in str(error)


def test_tasks_requests_must_declare_the_extension_too():
    server = served(runner=DictRunner())
    error_of(call(server, task_request("tasks/get", "a" * 43, caps={})), MISSING_CLIENT_CAPABILITY)


def test_an_optional_tool_runs_inline_for_a_client_that_cannot_take_a_task():
    catalog = TaskCatalog()
    reply = result_of(call(served(catalog, DictRunner()), tools_call("maybe", {})))
    assert reply["resultType"] == "complete" and catalog.ran == ["maybe"]


def test_an_optional_tool_runs_inline_on_a_server_with_no_runner_and_a_required_one_is_refused():
    catalog = TaskCatalog()
    server = served(catalog, runner=None)
    assert result_of(call(server, tools_call("maybe", capabilities())))["resultType"] == "complete"
    error = error_of(call(server, tools_call("report", capabilities())), INVALID_PARAMS)
    assert "runs only as a task" in error["message"] and catalog.ran == ["maybe"]


def test_the_hosts_admit_task_decides_for_each_call_and_may_ask_first():
    runner, catalog = DictRunner(), DecidingCatalog()
    server = served(catalog, runner)
    inline = result_of(call(server, tools_call("maybe", capabilities(), now=True)))
    assert inline["resultType"] == "complete" and catalog.ran == ["maybe"]
    asked = result_of(call(server, tools_call("maybe", capabilities(elicitation={}), ask=True)))
    assert asked["resultType"] == "input_required" and "go" in asked["inputRequests"]
    assert runner.calls == {}
    tasked = result_of(call(server, tools_call("maybe", capabilities())))
    assert tasked["resultType"] == "task" and tasked["taskId"] in runner.calls


def test_a_required_tool_the_host_declines_to_run_as_a_task_is_an_internal_error():
    catalog = DecidingCatalog()
    error = error_of(
        call(served(catalog, DictRunner()), tools_call("report", capabilities(), now=True)),
        INTERNAL_ERROR,
    )
    assert "admit_task" not in error["message"] and catalog.ran == []


# -- 2025-11-25: the extension does not exist --------------------------------------------


def legacy_session(server: Server) -> LegacySession:
    session = LegacySession()
    opened = call(
        server,
        legacy_request(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "OldClient", "version": "0.9"},
            },
            id=0,
        ),
        session=session,
    )
    assert "result" in opened, opened
    call(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session)
    return session


def test_in_a_2025_11_25_session_a_required_tool_is_refused_by_name_and_an_optional_runs():
    runner, catalog = DictRunner(), TaskCatalog()
    server = served(catalog, runner, legacy=True)
    session = legacy_session(server)
    refused = call(
        server,
        legacy_request("tools/call", {"name": "report", "arguments": {}}, id=1),
        session=session,
    )
    error = error_of(refused, INVALID_PARAMS)
    assert "2025-11-25" in error["message"] and EXTENSION in error["message"]
    ran = call(
        server,
        legacy_request("tools/call", {"name": "maybe", "arguments": {}}, id=2),
        session=session,
    )
    assert result_of(ran)["content"][0]["text"] == "maybe ran inline"
    assert runner.calls == {} and catalog.ran == ["maybe"]


# -- run in the worker ---------------------------------------------------------------------


def run(server: Server, tool: str, **fields: Any) -> Any:
    values: dict[str, Any] = {
        "tool": tool,
        "arguments": {},
        "owner": principal_key(Ada()),
        "principal": Ada(),
        "scopes": None,
        "client_capabilities": capabilities(elicitation={}),
    }
    values.update(fields)
    return asyncio.run(server.run_task(TaskCall(**values)))


def test_a_run_that_returns_is_a_completed_result_and_a_tool_error_is_one_too():
    server = served(runner=DictRunner())
    done = run(server, "report")
    assert done.error is None and done.result["resultType"] == "complete"
    assert done.result["content"][0]["text"] == "report ran inline"
    refused = run(server, "refused")
    assert refused.error is None and refused.result["isError"] is True
    assert "city is unknown" in refused.result["content"][0]["text"]


def test_a_protocol_error_fails_the_task_with_its_code_and_a_fault_hides_its_message():
    server = served(runner=DictRunner())
    broken = run(server, "broken")
    assert broken.result is None and broken.error["code"] == INVALID_PARAMS
    faulty = run(server, "faulty")
    assert faulty.error["code"] == INTERNAL_ERROR and "hunter2" not in str(faulty.error)


def test_a_run_that_needs_input_returns_its_requests_and_state_and_the_next_run_reads_them():
    server = served(runner=DictRunner())
    asked = run(server, "confirm")
    assert asked.input_requests == {"sure": ELICIT} and asked.state == "asked once"
    answered = run(
        server,
        "confirm",
        input_responses={"sure": {"action": "accept", "content": {}}},
        state=asked.state,
    )
    assert answered.result["content"][0]["text"] == "confirmed with state asked once"


def test_a_run_asking_what_the_tasks_client_cannot_answer_fails_naming_the_capability():
    outcome = run(served(runner=DictRunner()), "confirm", client_capabilities=capabilities())
    assert outcome.error["code"] == MISSING_CLIENT_CAPABILITY
    assert "elicitation" in str(outcome.error["data"]["requiredCapabilities"])


def test_a_task_whose_tool_is_no_longer_served_fails_naming_it():
    outcome = run(served(runner=DictRunner()), "gone")
    assert outcome.error["code"] == INVALID_PARAMS and "'gone'" in outcome.error["message"]


@pytest.mark.parametrize("status", [COMPLETED, INPUT_REQUIRED])
def test_the_status_a_poll_sees_is_the_runners(status):
    runner = DictRunner()
    server = served(runner=runner)
    task_id = result_of(call(server, tools_call("report", capabilities())))["taskId"]
    view = runner.views[task_id]
    runner.views[task_id] = TaskView(
        task_id, status, view.created_at, view.updated_at, view.ttl_ms, view.poll_interval_ms
    )
    assert result_of(call(server, task_request("tasks/get", task_id)))["status"] == status


# -- status notifications on subscriptions/listen --------------------------------------------


def listen_for(server: Server, task_ids: Any, principal: Any, caps: Any = None) -> Any:
    """A subscriptions/listen asking for ``task_ids`` (``conftest.listen``), declaring the
    extension unless ``caps`` says otherwise."""
    declared = capabilities() if caps is None else caps
    return listen(
        server,
        {"taskIds": task_ids},
        principal,
        **{"io.modelcontextprotocol/clientCapabilities": declared},
    )


def test_a_listen_stream_is_told_of_its_callers_tasks_only_and_foreign_ones_look_unknown():
    runner = DictRunner()
    server = served(runner=runner, subscriptions=True, task_notifications=True)
    mine = result_of(call(server, tools_call("report", capabilities()), principal=Ada()))
    theirs = result_of(call(server, tools_call("report", capabilities()), principal=Mallory()))
    never = "c" * 43
    asked = [mine["taskId"], theirs["taskId"], never]
    _, acknowledged, delivered = listen_for(server, asked, Ada())
    assert acknowledged == {"taskIds": [mine["taskId"]]} and delivered == acknowledged

    detailed = {"taskId": mine["taskId"], "status": COMPLETED, "result": {"content": []}}
    event = {"kind": "task", "taskId": mine["taskId"], "task": detailed}
    told = subscription_notification(event, delivered, 7)
    assert told["method"] == "notifications/tasks"
    assert told["params"] == {**detailed, "_meta": {SUBSCRIPTION_ID: 7}}
    other = {"kind": "task", "taskId": theirs["taskId"], "task": {**detailed}}
    assert subscription_notification(other, delivered, 7) is None


def test_a_stream_never_tells_a_task_state_older_than_one_it_told():
    """Two processes publish a task's moves and their publications arrive in no set order:
    the stream tells a state only if it is not older than the last it told of that task."""
    honoured = {"taskIds": ["a" * 43, "b" * 43]}

    def state(task_id: str, status: str, at: str) -> dict:
        task = {"taskId": task_id, "status": status, "lastUpdatedAt": f"2026-12-06T10:40:{at}Z"}
        return {"kind": "task", "taskId": task_id, "task": task}

    told: dict[str, str] = {}

    def statuses(*events: dict) -> list:
        notes = [subscription_notification(event, honoured, 7, told) for event in events]
        return [note and note["params"]["status"] for note in notes]

    working = state("a" * 43, "working", "10.423")
    waiting = state("a" * 43, "input_required", "08.900")
    assert statuses(working, waiting) == ["working", None]  # the older one came second
    assert statuses(state("b" * 43, "working", "01.000")) == ["working"]  # its own record
    assert statuses(working, state("a" * 43, "completed", "11.002")) == ["working", "completed"]
    assert statuses(state("a" * 43, "working", "10.423")) == [None]


def test_without_a_shared_layer_a_stream_agrees_to_watch_no_task():
    runner = DictRunner()
    server = served(runner=runner, subscriptions=True)  # task_notifications off
    mine = result_of(call(server, tools_call("report", capabilities()), principal=Ada()))
    _, acknowledged, _ = listen_for(server, [mine["taskId"]], Ada())
    assert acknowledged == {"taskIds": []}


def test_watching_tasks_needs_the_extension_declared_and_ids_of_this_servers_shape():
    server = served(runner=DictRunner(), subscriptions=True, task_notifications=True)
    reply, _, _ = listen_for(server, ["a" * 43], Ada(), caps={})
    assert EXTENSION in str(error_of(reply, MISSING_CLIENT_CAPABILITY))
    for bad, says in (
        ("a" * 43, "must be a list"),
        (["a" * 43] * 65, "at most 64"),
        (["../etc/passwd"], "not a task id this server issued"),
    ):
        reply, _, _ = listen_for(server, bad, Ada())
        error = error_of(reply, INVALID_PARAMS)
        assert says in error["message"] and "passwd" not in str(error)
