"""The tasks extension end to end against the sample project: ``manage.py mcp_serve`` and
django-tasks-db's ``manage.py db_worker`` as two processes on one fresh database (SQLite, and
PostgreSQL on the run that uses it), and a client of this test's own on plain HTTP: the
official SDK client 2.3.0 has no support for the extension.

``seasonal_report`` (a task when the client declares the extension) is made, asked for input
inside the task and fed with ``tasks/update``, polled to its report, and cancelled while it
runs; its worker is killed (SIGKILL) mid-run, and the task is run again once its lease runs
out, noticed by a poll or by ``manage.py mcp_tasks reap``, or failed once its attempts are
spent. The refusals a task request can meet on the wire are held here too."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.databases import rows
from tests.http.mcphttp_support import REPO_ROOT, message, post, server_env
from tests.support import manage

from .tasks_support import (
    CRON_COMMANDS,
    DOC,
    EXTENSION,
    SETTLE_SECONDS,
    SHORT_LEASE,
    TASKS,
    WORKER_COMMAND,
    Worker,
    client,
    payload,
    report_text,
    serving,
    task_row,
)

pytestmark = [pytest.mark.slow, pytest.mark.orm]


Servers = Callable[..., dict[str, Any]]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """``servers(settings, worker=...)``: the module's server for those task settings
    (``BEAMMCP_TASK_*`` variables the sample reads), each on a fresh database, started when
    first asked for and kept for the module; with one worker the tests that leave it running
    share, or with none (a test that kills its worker starts its own)."""
    started: dict[tuple[Any, ...], dict[str, Any]] = {}
    with contextlib.ExitStack() as stack:

        def serve(settings: Mapping[str, str], *, worker: bool) -> dict[str, Any]:
            key = (tuple(sorted(settings.items())), worker)
            if key not in started:
                directory = tmp_path_factory.mktemp("tasks")
                env = {**server_env(directory), **settings}
                started[key] = stack.enter_context(serving(env, directory, worker=worker))
            return started[key]

        yield serve


def task_settings(request: pytest.FixtureRequest) -> dict[str, str]:
    """The test's ``task_settings`` marker, or none."""
    marker = request.node.get_closest_marker("task_settings")
    return dict(marker.kwargs) if marker else {}


@pytest.fixture
def served(servers: Servers, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The module's server and shared worker for the test's task settings."""
    return servers(task_settings(request), worker=True)


@pytest.fixture
def killable(
    servers: Servers, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[dict[str, Any]]:
    """The module's server for the test's task settings, with a worker of the test's own,
    which the test kills."""
    running = servers(task_settings(request), worker=False)
    worker = Worker(running["env"], tmp_path, "first")
    try:
        yield {**running, "worker": worker, "dir": tmp_path}
    finally:
        worker.stop()


def test_a_task_asks_inside_the_worker_is_fed_by_tasks_update_and_polled_to_its_report(served):
    ada = client(served, elicitation={})
    task_id = ada.start(city="lisbon", weeks=3)

    asked = ada.wait_for(task_id, "input_required")
    assert set(asked["inputRequests"]) == {"detail"}
    assert asked["inputRequests"]["detail"]["method"] == "elicitation/create"
    answer = {"detail": {"action": "accept", "content": {"outlook": True}}}
    assert payload(ada.result("tasks/update", {"taskId": task_id, "inputResponses": answer})) == {}

    done = ada.wait_for(task_id, "completed")
    # The run's last progress message, reported after the heartbeat's last write (it writes
    # at most once a second, each week takes half of one): it was "week 1 of 3" or "week 2".
    assert done["statusMessage"] == "week 3 of 3"
    text = report_text(done)
    assert text.startswith("Seasonal report for Lisbon, 3 week(s):")
    assert "week 3: about" in text and ", mostly " in text  # the answer reached the tool

    # The same answer again (a replay) is acknowledged and changes nothing.
    assert payload(ada.result("tasks/update", {"taskId": task_id, "inputResponses": answer})) == {}
    assert ada.get(task_id) == done


def test_another_principal_meets_ada_s_task_exactly_as_an_id_never_issued(served):
    ada, mallory = client(served), client(served, "mallory")
    task_id = ada.start(city="lisbon", weeks=1)
    never_issued = "x" * 43
    for method, extra in (
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {"detail": {"action": "decline"}}}),
        ("tasks/cancel", {}),
    ):
        foreign = mallory.send(method, {"taskId": task_id, **extra})
        unknown = ada.send(method, {"taskId": never_issued, **extra})
        assert "error" in foreign and foreign["error"] == unknown["error"], (foreign, unknown)
    # Mallory's cancel reached nothing: the task runs to its report.
    assert "week 1: about" in report_text(ada.wait_for(task_id, "completed"))


def test_a_running_task_is_cancelled_and_its_tool_stops_at_the_next_week(served):
    ada = client(served)
    task_id = ada.start(city="oslo", weeks=12)
    ada.wait_for_first_half(task_id)
    assert payload(ada.result("tasks/cancel", {"taskId": task_id})) == {}
    ended = ada.wait_for(task_id, "cancelled", "completed", "failed")
    assert ended["status"] == "cancelled" and "result" not in ended, ended
    # A cancel after the end is acknowledged and changes nothing.
    assert payload(ada.result("tasks/cancel", {"taskId": task_id})) == {}
    assert ada.get(task_id)["status"] == "cancelled"
    # The worker is free: the next task runs.
    assert "week 1" in report_text(ada.wait_for(ada.start(city="oslo", weeks=1), "completed"))


@pytest.mark.task_settings(BEAMMCP_TASK_LEASE_SECONDS=SHORT_LEASE, BEAMMCP_TASK_MAX_ATTEMPTS="2")
@pytest.mark.parametrize("noticed_by", ["a poll", "mcp_tasks reap"])
def test_a_task_whose_worker_is_killed_runs_again_on_another_worker(killable, noticed_by):
    ada = client(killable)
    task_id = ada.start(city="sydney", weeks=8)
    ada.wait_for_first_half(task_id)
    killable["worker"].kill()
    time.sleep(float(SHORT_LEASE) + 0.5)  # the dead attempt's lease runs out
    assert task_row(killable["env"]["DATABASE_URL"], task_id) == ("working", 1)
    if noticed_by == "mcp_tasks reap":
        done = manage(killable["env"], "mcp_tasks", "reap")
        assert done.stdout.decode().strip() == "enqueued 1 stale task(s) again"
    second = Worker(killable["env"], killable["dir"], "second")
    try:
        text = report_text(ada.wait_for(task_id, "completed", "failed"))
    finally:
        second.stop()
    assert "week 8: about" in text
    assert task_row(killable["env"]["DATABASE_URL"], task_id) == ("completed", 2)


@pytest.mark.task_settings(BEAMMCP_TASK_LEASE_SECONDS=SHORT_LEASE, BEAMMCP_TASK_MAX_ATTEMPTS="1")
def test_a_task_whose_last_attempt_dies_fails_by_name_instead_of_working_forever(killable):
    ada = client(killable)
    task_id = ada.start(city="sydney", weeks=8)
    ada.wait_for_first_half(task_id)
    killable["worker"].kill()
    time.sleep(float(SHORT_LEASE) + 0.5)
    second = Worker(killable["env"], killable["dir"], "second")
    try:
        failed = ada.wait_for(task_id, "failed", "completed")
    finally:
        second.stop()
    assert failed["status"] == "failed", failed
    assert failed["error"] == {
        "code": -32603,
        "message": "the task's worker stopped before it finished",
    }
    assert task_row(killable["env"]["DATABASE_URL"], task_id) == ("failed", 1)


def test_task_requests_the_wire_refuses_by_name_and_the_server_keeps_serving(served):
    ada = client(served)
    task_id = ada.start(city="nairobi", weeks=1)
    port = served["server"].port
    principal = [("X-Mcphttp-Authorize", "principal:ada")]
    caps = {"io.modelcontextprotocol/clientCapabilities": TASKS}

    # Mcp-Name names another task than the body: -32020, HTTP 400.
    other = "y" * 43
    mismatch = post(
        port,
        message(1, "tasks/get", {"taskId": task_id}, **caps),
        replace={"Mcp-Name": other},
        add=principal,
    )
    assert mismatch.status == 400 and mismatch.json()["error"]["code"] == -32020
    assert task_id not in mismatch.body.decode() and other not in mismatch.body.decode()

    # A malformed id: refused by name, none of it echoed.
    hostile = "../../etc/passwd<script>" + "A" * 300
    malformed = post(
        port,
        message(2, "tasks/get", {"taskId": hostile}, **caps),
        add=principal,
    )
    error = malformed.json()["error"]
    assert error["code"] == -32602, error
    assert "params.taskId" in error["message"] and "passwd" not in malformed.body.decode()

    # The extension not declared: -32021, naming it.
    bare = post(port, message(3, "tasks/get", {"taskId": task_id}), add=principal)
    undeclared = bare.json()["error"]
    assert undeclared["code"] == -32021 and EXTENSION in undeclared["message"]

    assert "week 1" in report_text(ada.wait_for(task_id, "completed"))


def test_a_client_without_the_extension_gets_the_report_in_its_own_request(servers):
    """seasonal_report is optional: with no tasks declared it runs in the request, no
    worker involved (this server has none, and no task row is made)."""
    served = servers({}, worker=False)
    response = post(
        served["server"].port,
        message(
            1,
            "tools/call",
            {"name": "seasonal_report", "arguments": {"city": "nairobi", "weeks": 1}},
        ),
        add=[("X-Mcphttp-Authorize", "principal:ada")],
    )
    reply = (
        response.events()[-1] if response.content_type == "text/event-stream" else response.json()
    )
    assert reply["result"]["resultType"] == "complete", reply
    assert reply["result"]["content"][0]["text"].startswith("Seasonal report for Nairobi")
    assert rows(served["env"]["DATABASE_URL"], "SELECT count(*) FROM beammcp_django_mcptask") == [
        (0,)
    ]


def test_the_settings_and_commands_docs_tasks_gives_are_the_sample_s_and_run(tmp_path):
    doc = DOC.read_text()
    assert f"\n{WORKER_COMMAND}\n" in doc
    readme = (REPO_ROOT / "README.md").read_text()
    assert f"`.venv/bin/{WORKER_COMMAND}`" in readme.replace("\n", " ")
    assert "\n" + "\n".join(CRON_COMMANDS) + "\n" in doc
    (setting,) = re.findall(r"```python\n(TASKS = .*?)\n```", doc)
    assert setting in (REPO_ROOT / "sample_project" / "settings.py").read_text()
    env = server_env(tmp_path)
    said = [manage(env, *command.split()[2:]).stdout.decode().strip() for command in CRON_COMMANDS]
    assert said == ["enqueued 0 stale task(s) again", "purged 0 expired task(s)"]


# -- docs/tasks.md's curl session, as written ---------------------------------------------

SESSION_BLOCK = re.compile(r"^```(sh|sh poll|json output)\n(.*?)^```$", re.M | re.S)


def session_blocks() -> list[tuple[str, str]]:
    """The blocks of docs/tasks.md's "A task on the wire", in order."""
    section = DOC.read_text(encoding="utf-8").split("## A task on the wire", 1)[1]
    section = section.split("\n## ", 1)[0]
    return [(kind, body) for kind, body in SESSION_BLOCK.findall(section)]


def shown(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer as the page shows it: the task's id, its times and the report's text (made
    up for the city and the week) by what they are."""
    result = answer.get("result", {})
    for key, placeholder in (
        ("taskId", "<task id>"),
        ("createdAt", "<time>"),
        ("lastUpdatedAt", "<time>"),
    ):
        if key in result:
            result[key] = placeholder
    for block in result.get("result", {}).get("content", []):
        assert block["text"].startswith("Seasonal report for Oslo, 2 week(s):\nweek 1: about ")
        assert ", mostly " in block["text"]  # the answer to the question reached the tool
        block["text"] = "<the report>"
    return answer


def test_the_documented_curl_session_runs_as_written(served, tmp_path):
    """Each command of the page runs as written in one directory, the shell's variables
    carried from the blocks that set them; a ``sh poll`` command runs again, as a reader
    polls, until it answers what the page shows (within ``SETTLE_SECONDS``)."""
    port = served["server"].port
    setup = ""
    pending: tuple[str, str] | None = None
    checked = 0
    for kind, body in session_blocks():
        body = body.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        if kind == "json output":
            assert pending is not None, "an output block follows a command"
            expected = json.loads(body)
            deadline = time.monotonic() + SETTLE_SECONDS
            while True:
                answer = shown(json.loads(bash(setup + pending[1], tmp_path)))
                if answer == expected or pending[0] != "sh poll":
                    break
                assert time.monotonic() < deadline, json.dumps(answer)
                time.sleep(0.2)
            assert answer == expected, json.dumps(answer)
            checked += 1
            pending = None
        elif "curl" in body:
            pending = (kind, body)
        else:  # sets the shell's variables for the commands after it
            bash(setup + body, tmp_path)
            setup += body + "\n"
    assert checked == 5


def bash(script: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "set -eo pipefail\n" + script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", (script, done.stderr)
    return done.stdout
