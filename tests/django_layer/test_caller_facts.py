"""What the hook knows reaches the handlers (``context.claims``, ``values``, ``headers``):
the host contract's block run as written through the real HTTP endpoint, in both eras; the
bearer authorizer's claims; and nothing of it where nothing carries it (stdio, a header
not named, a header sent twice)."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Iterator
from dataclasses import replace

import pytest
from asgiref.sync import async_to_sync
from django.core.checks import run_checks

from beammcp_django.authorization import Grant, HttpRequestInfo, facts_of
from beammcp_django.mcp import Tool
from beammcp_django.oauth.bearer import BearerAuthorizer
from beammcp_django.oauth.resource import resource_server_from
from beammcp_django.oauth.tokens import AccessToken
from beammcp_django.process import get_server
from beammcp_django.protocol.context import NO_FACTS
from beammcp_django.registry import site
from beammcp_django.runtime.host_threads import run_sync_host
from beammcp_django.servers.http_settings import get_http_policy
from beammcp_django.test import HttpRefusal, McpClient
from beammcp_django.transports.http import McpEndpoint
from beammcp_django.transports.sessions.store import SessionBounds
from tests.asgi.test_legacy_sessions import INITIALIZE, answer, scope
from tests.principals.tokens import RESOURCE
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.django_db, pytest.mark.with_http_endpoint]


@pytest.fixture
def documented(settings) -> Iterator[types.ModuleType]:
    """The host contract's block, as written, as a module whose tool is on the default site
    (put back as it was after the test) and whose hook the settings name."""
    page = (REPO_ROOT / "docs" / "host-contract.md").read_text(encoding="utf-8")
    block = page.split("<!-- host-contract: what-the-hook-knows -->\n```python\n", 1)[1]
    module = types.ModuleType("docs_host_contract_what_the_hook_knows")
    sys.modules[module.__name__] = module
    registered = set(site.declarations)
    exec(compile(block.split("```", 1)[0], "docs/host-contract.md", "exec"), module.__dict__)
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "AUTHORIZE": f"{module.__name__}.authorize",
        "HANDLER_HEADERS": ["x-request-id"],
    }
    try:
        yield module
    finally:
        site.unregister(*(set(site.declarations) - registered))
        del sys.modules[module.__name__]


def test_the_tool_reads_the_tenant_the_hook_passed_on_and_the_named_header(documented):
    acme = McpClient(headers={"X-Api-Key": "key-acme", "X-Request-Id": "r-17"})
    assert acme.call_tool("where_am_i", {}).text == "tenant acme, request r-17"
    globex = McpClient(headers={"X-Api-Key": "key-globex"})
    assert globex.call_tool("where_am_i", {}).text == "tenant globex, request none"


def test_in_a_2025_11_25_session_each_request_carries_what_its_own_hook_said(documented):
    """Over HTTP a session's every request is authorized anew: what the tool reads is its
    own request's, never the initialize's."""
    policy = get_http_policy()
    app = McpEndpoint(
        server=get_server,
        policy=lambda: replace(policy, sessions=policy.sessions or SessionBounds()),
        run_sync=run_sync_host,
    )
    status, opened, headers = answer(app, scope(x_api_key="key-acme"), INITIALIZE)
    assert status == 200 and "result" in opened, opened
    session = {"mcp_session_id": headers["mcp-session-id"], "mcp_protocol_version": LEGACY}
    status, _, _ = answer(app, scope(x_api_key="key-acme", **session), INITIALIZED)
    assert status == 202
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "where_am_i"}}
    asked = scope(x_api_key="key-acme", x_request_id="r-9", **session)
    status, answered, _ = answer(app, asked, call)
    assert answered["result"]["content"][0]["text"] == "tenant acme, request r-9"


LEGACY = "2025-11-25"
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_a_key_the_hook_refuses_reaches_no_tool(documented):
    with pytest.raises(HttpRefusal) as refused:
        McpClient(headers={"X-Api-Key": "forged"}).call_tool("where_am_i", {})
    assert refused.value.status == 401


def info(**headers: str | list[str]) -> HttpRequestInfo:
    named = {k.replace("_", "-"): v if isinstance(v, list) else [v] for k, v in headers.items()}
    return HttpRequestInfo("POST", "/mcp", named, None)


def test_a_header_not_named_or_sent_twice_differently_is_not_passed_on():
    facts = facts_of(True, info(x_request_id=["a", "b"], x_tenant="t"), ("x-request-id",))
    assert facts is NO_FACTS


def test_a_request_with_nothing_to_pass_on_shares_the_one_empty_facts():
    assert facts_of(Grant("someone"), info(), ()) is NO_FACTS
    assert facts_of("a principal", info(x_request_id="r"), ()) is NO_FACTS


def test_a_grant_s_claims_and_values_are_passed_on_as_given():
    grant = Grant("someone", claims={"client_id": "c"}, values={"tenant": "t"})
    facts = facts_of(grant, info(x_request_id="r"), ("x-request-id",))
    assert (dict(facts.claims), dict(facts.values), dict(facts.headers)) == (
        {"client_id": "c"},
        {"tenant": "t"},
        {"x-request-id": "r"},
    )


def test_stdio_passes_on_nothing(documented):
    """No hook runs on stdio, and no header comes with a line: the mappings are empty."""

    @site.register
    class WhatIKnow(Tool):
        name = "what_i_know"
        input_schema = {"type": "object"}

        def call(self, arguments, context):
            return repr((dict(context.claims), dict(context.values), dict(context.headers)))

    assert McpClient(LEGACY).call_tool("what_i_know", {}).text == "({}, {}, {})"


def test_what_the_grant_carries_is_read_only_to_host_code():
    grant = Grant("someone", values={"tenant": "acme"})
    with pytest.raises(TypeError):
        grant.values["tenant"] = "globex"  # type: ignore[index]


def test_the_bearer_authorizer_passes_the_token_s_claims_on():
    server = resource_server_from(
        {"RESOURCE": RESOURCE, "AUTHORIZATION_SERVERS": ["http://127.0.0.1:8000/o"]}, "test"
    )

    class Said:
        def validate(self, token: str) -> AccessToken:
            return AccessToken(
                "ada",
                frozenset(),
                frozenset([RESOURCE]),
                time.time() + 60,
                claims={"client_id": "https://app.example/client.json"},
            )

    bearer = BearerAuthorizer(server, Said())
    headers = {"authorization": ["Bearer anything"]}
    grant = async_to_sync(bearer)(HttpRequestInfo("POST", "/mcp", headers, None))
    assert isinstance(grant, Grant)
    assert dict(grant.claims) == {"client_id": "https://app.example/client.json"}


@pytest.mark.parametrize("name", ["authorization", "cookie", "proxy-authorization"])
def test_a_credential_s_header_cannot_be_handed_to_host_code(settings, name):
    settings.BEAMMCP = {**settings.BEAMMCP, "HANDLER_HEADERS": [name]}
    (found,) = [m for m in run_checks(tags=["beammcp"]) if m.id == "beammcp.E144"]
    assert f"must not name {name!r}, which carries the caller's credentials" in found.msg
