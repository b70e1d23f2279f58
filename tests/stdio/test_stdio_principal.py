"""Who is calling, over stdio: the Django user ``mcp_stdio --user NAME`` (or
``BEAMMCP["STDIO_USER"]``) names, looked up once at startup, is ``context.principal`` for every
request of both revisions; with neither there is no principal (never an implicit user); an
unknown or inactive user stops the command before it serves a line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import REPO_ROOT, manage
from tests.support import message as modern_request

from .conftest import LEGACY, REPLY_TIMEOUT, legacy_request

WHOAMI = ("principal_whoami", "principal_whoami_async")
USERS = """
from django.contrib.auth import get_user_model
User = get_user_model()
User.objects.get_or_create(username="ada")
User.objects.get_or_create(username="grace")
User.objects.update_or_create(username="retired", defaults={"is_active": False})
User.objects.get_or_create(username="mallory")
User.objects.get_or_create(username="breaker")
"""


@pytest.fixture(scope="module")
def users(server_env):
    manage(server_env, "shell", "-c", USERS)
    return server_env


def answers(server, tool: str) -> tuple[str, str]:
    """What ``tool`` answers at 2026-07-28, then in a 2025-11-25 session."""
    call = {"name": tool, "arguments": {}}
    modern = server.request(modern_request(f"m-{tool}", "tools/call", call))
    server.request(legacy_request(f"i-{tool}", "initialize", {"protocolVersion": LEGACY}))
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    legacy = server.request(legacy_request(f"l-{tool}", "tools/call", call))
    return tuple(reply["result"]["content"][0]["text"] for reply in (modern, legacy))


@pytest.mark.parametrize("tool", WHOAMI)
def test_the_user_named_by_the_option_is_the_principal_at_both_revisions(users, spawn, tool):
    server = spawn("--user", "ada")
    assert answers(server, tool) == ("auth.User:ada", "auth.User:ada")


def test_the_setting_names_the_user_and_the_option_overrides_it(users, spawn):
    by_setting = spawn(BEAMMCP_TEST_STDIO_USER="grace")
    assert answers(by_setting, "principal_whoami") == ("auth.User:grace",) * 2
    overridden = spawn("--user", "ada", BEAMMCP_TEST_STDIO_USER="grace")
    assert answers(overridden, "principal_whoami") == ("auth.User:ada",) * 2


def test_with_no_user_named_there_is_no_principal(users, spawn):
    assert answers(spawn(), "principal_whoami_async") == ("nobody", "nobody")


@pytest.mark.parametrize(
    ("name", "says"), [("nobody-by-that-name", b"no user named"), ("retired", b"is not active")]
)
def test_an_unknown_or_inactive_user_stops_the_command_before_it_serves(users, name, says):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--user", name],
        cwd=REPO_ROOT,
        env=users,
        input=b"",
        capture_output=True,
        timeout=REPLY_TIMEOUT * 6,
        check=False,
    )
    assert done.returncode != 0
    assert says in done.stderr, done.stderr
    assert done.stdout == b""  # stdout carries protocol lines only, and none was written


# -- the host's rate limit -------------------------------------------------------------------


def test_the_rate_limit_refuses_by_name_and_the_connection_serves_on(users, spawn):
    server = spawn("--user", "mallory", BEAMMCP_TEST_RATE_LIMIT="1")
    call = {"name": "principal_whoami", "arguments": {}}
    refused = server.request(modern_request("m-call", "tools/call", call))
    assert refused["id"] == "m-call"
    assert refused["error"] == {
        "code": -32000,
        "message": "rate limited: retry after 3 s",
        "data": {"retryAfterSeconds": 3},
    }
    listed = server.request(modern_request("m-list", "tools/list", {}))
    assert "tools" in listed["result"]
    served = spawn("--user", "ada", BEAMMCP_TEST_RATE_LIMIT="1")
    assert served.request(modern_request("a-call", "tools/call", call))["result"]


def test_a_rate_limit_that_raises_refuses_and_leaks_nothing(users, spawn):
    server = spawn("--user", "breaker", BEAMMCP_TEST_RATE_LIMIT="1")
    refused = server.request(modern_request("b-list", "tools/list", {}))
    assert refused["error"]["code"] == -32000
    assert "rate-limit-hook-secret" not in str(refused)
    assert server.request(modern_request("b-list-2", "tools/list", {}))["error"]["code"] == -32000
