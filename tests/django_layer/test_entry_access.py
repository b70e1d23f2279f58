"""Who may use an entry, declared on the classes (``permissions``, ``visible()``, ``scopes``)
and enforced through the real core and HTTP endpoint: the host contract's block as written,
two users with different permissions seeing different lists, a hidden tool answered as an
unknown one, and a token without the scope challenged 403 with the spec's header."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from django.contrib.auth.models import Permission

from beammcp_django.authorization import Grant, HttpRequestInfo, Refusal
from beammcp_django.protocol.access import Access
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.registry import site
from beammcp_django.test import McpClient, McpError
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.django_db, pytest.mark.with_http_endpoint]


def granting_hook(request: HttpRequestInfo) -> Any:
    """``Bearer NAME scope1 scope2``: the user NAME, granted those scopes."""
    words = (request.header("authorization") or "").split()
    if len(words) < 2 or words[0] != "Bearer":
        return Refusal(401, "no token")
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username=words[1])
    return Grant(user, frozenset(words[2:]))


@pytest.fixture
def documented_tool():
    """The host contract's "who may use" block, run as written: it registers its tool on the
    default site, which is put back as it was after the test."""
    page = (REPO_ROOT / "docs" / "host-contract.md").read_text(encoding="utf-8")
    block = page.split("<!-- host-contract: who-may-use -->\n```python\n", 1)[1]
    source = block.split("```", 1)[0]
    module = types.ModuleType("docs_host_contract_who_may_use")
    sys.modules[module.__name__] = module
    exec(compile(source, "docs/host-contract.md", "exec"), module.__dict__)
    try:
        yield module.CorrectObservation
    finally:
        site.unregister(module.CorrectObservation)
        del sys.modules[module.__name__]


@pytest.fixture
def users(django_user_model):
    change = Permission.objects.get(codename="change_observation")
    editor = django_user_model.objects.create(username="editor", is_staff=True)
    editor.user_permissions.add(change)
    reader = django_user_model.objects.create(username="reader", is_staff=True)
    outsider = django_user_model.objects.create(username="outsider", is_staff=False)
    outsider.user_permissions.add(change)
    return editor, reader, outsider


def client(token: str) -> McpClient:
    return McpClient(headers={"Authorization": f"Bearer {token}"})


def tool_names(mcp: McpClient) -> set[str]:
    return {tool["name"] for tool in mcp.list_tools()}


def test_two_users_see_different_lists_and_a_hidden_tool_is_unknown(
    settings, documented_tool, users
):
    settings.BEAMMCP = {**settings.BEAMMCP, "AUTHORIZE": f"{__name__}.granting_hook"}
    assert "correct_observation" in tool_names(client("editor"))
    # Holds the permission but is not staff (visible() refuses); staff without the permission.
    for hidden_from in ("outsider", "reader"):
        assert "correct_observation" not in tool_names(client(hidden_from))
        with pytest.raises(McpError) as unknown:
            client(hidden_from).call_tool("correct_observation", {"celsius": 3})
        with pytest.raises(McpError) as missing:
            client(hidden_from).call_tool("no_such_tool", {})
        assert unknown.value.code == missing.value.code
        assert unknown.value.message == "unknown tool 'correct_observation'"


def test_a_token_without_the_scope_is_challenged_naming_it(settings, documented_tool, users):
    settings.BEAMMCP = {**settings.BEAMMCP, "AUTHORIZE": f"{__name__}.granting_hook"}
    with pytest.raises(McpError) as refused:
        client("editor demo.read").call_tool("correct_observation", {"celsius": 3})
    assert refused.value.status == 403
    assert refused.value.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", scope="demo.write"'
    )
    assert refused.value.message == "insufficient_scope"  # the header names the scope
    assert client("editor demo.write").call_tool("correct_observation", {"celsius": 3}).text == (
        "corrected"
    )


def test_the_list_of_a_gated_catalog_is_private_whatever_the_hints(
    settings, documented_tool, users
):
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "AUTHORIZE": f"{__name__}.granting_hook",
        "CACHE_HINTS": {"tools/list": {"ttl_ms": 60000, "scope": "public"}},
    }
    page = client("editor").list_page("tools/list")
    assert page["cacheScope"] == "private"


def test_the_rate_limit_in_the_authorization_page_runs_as_written(settings, users):
    page = (REPO_ROOT / "docs" / "authorization.md").read_text(encoding="utf-8")
    block = page.split("<!-- authorization: rate-limit -->\n```python\n", 1)[1]
    module = types.ModuleType("docs_authorization_rate_limit")
    sys.modules[module.__name__] = module
    exec(compile(block.split("```", 1)[0], "docs/authorization.md", "exec"), module.__dict__)
    module.CALLS_PER_MINUTE = 2
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "AUTHORIZE": f"{__name__}.granting_hook",
        "RATE_LIMIT": f"{module.__name__}.limit",
    }
    try:
        editor, reader = client("editor"), client("reader")
        for _ in range(2):
            assert editor.call_tool("echo", {"text": "hi"}).text
        with pytest.raises(McpError) as refused:
            editor.call_tool("echo", {"text": "hi"})
        assert refused.value.status == 429
        assert 1 <= int(refused.value.headers["retry-after"]) <= 60
        assert refused.value.message.startswith("rate limited: retry after")
        assert editor.list_tools()  # not a tool call: served
        assert reader.call_tool("echo", {"text": "hi"}).text  # another caller's own window
    finally:
        del sys.modules[module.__name__]


class MirroredCatalog:
    """A tool that mirrors an argument into a header, hidden from all but the editor."""

    tools = (
        ToolSpec(
            "route",
            {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            },
            access=Access(gates=(lambda context: context.principal.username == "editor",)),
        ),
    )
    resources = ()
    prompts = ()

    def dispatch(self, name, arguments, context):
        return "routed"


MIRRORED = MirroredCatalog()


def test_a_hidden_tool_is_unknown_even_when_its_mirrored_header_is_wrong(settings, users):
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "AUTHORIZE": f"{__name__}.granting_hook",
        "CATALOG": f"{__name__}.MIRRORED",
    }
    call = {"name": "route", "arguments": {"region": "eu"}}
    wrong = {"Mcp-Param-Region": "us"}
    with pytest.raises(McpError) as hidden:
        client("reader").request("tools/call", call, headers=wrong)
    assert hidden.value.message == "unknown tool 'route'"  # not a header mismatch naming it
    with pytest.raises(McpError) as mismatch:
        client("editor").request("tools/call", call, headers=wrong)
    assert mismatch.value.code == -32020
    assert client("editor").request("tools/call", call).text == "routed"


@pytest.mark.parametrize(
    "wrong", [{"Mcp-Name": "elsewhere"}, {"Mcp-Method": "tools/list"}], ids=["name", "method"]
)
def test_a_hidden_tool_with_a_wrong_routing_header_is_answered_as_an_unknown_one(
    settings, users, wrong
):
    # A header every request carries, whatever the tool declares: a hidden tool was answered
    # "unknown tool" where an unknown one (and a visible one) got -32020, so the mismatch
    # told which names exist. Only the parameter headers a tool declares depend on it.
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "AUTHORIZE": f"{__name__}.granting_hook",
        "CATALOG": f"{__name__}.MIRRORED",
    }
    answers = {}
    for name in ("route", "no_such_tool"):
        with pytest.raises(McpError) as refused:
            client("reader").request("tools/call", {"name": name, "arguments": {}}, headers=wrong)
        answers[name] = (refused.value.status, refused.value.code, refused.value.message)
    assert answers["route"] == answers["no_such_tool"]
    assert answers["route"][:2] == (400, -32020)


def test_a_permission_gate_refuses_a_caller_that_is_no_user_with_no_thread_hop(users):
    """The sample's permission-gated tool costs an anonymous list nothing off the loop."""
    from django.contrib.auth.models import AnonymousUser

    from beammcp_django.registry import _holds_permissions

    gate = _holds_permissions(("demo.change_observation",))
    editor, reader, _ = users
    for principal, refused_at_once in (
        (None, True),
        ("a token's subject", True),
        (AnonymousUser(), False),  # a Django user: its backends decide, on the thread
        (editor, False),
    ):
        context = types.SimpleNamespace(principal=principal)
        assert gate.quick_refusal(context) is refused_at_once
    assert gate(types.SimpleNamespace(principal=editor)) is True
    assert gate(types.SimpleNamespace(principal=reader)) is False
