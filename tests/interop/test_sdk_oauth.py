"""The official MCP Python SDK's OAuth client (``mcp`` 2.3.0, ``OAuthClientProvider`` on its
httpx) against the sample run as its own authorization server (``BEAMMCP_SAMPLE_AUTH=oauth``,
django-oauth-toolkit), one real ``manage.py mcp_serve`` process on a fresh migrated database,
started by the commands docs/authorization.md tells a user to type.

Registration: pre-registered. The documented ``manage.py mcp_register_client`` registers a
public client for the authorization-code grant; the SDK is handed that registration by its
token storage (``get_client_info``), so it never tries dynamic registration (the toolkit's
RFC 7591 endpoint is off, and would admit only an authenticated registrant).

Each SDK session starts with no token: the 401 sends the SDK to the Protected Resource
Metadata, then to the toolkit's RFC 8414 metadata, then (``redirect_handler``) to a
``Person`` who signs in on Django's login form and approves the consent form, real requests
all; the SDK exchanges the code with its PKCE verifier and ``resource``. Every scenario runs
under ``anyio.fail_after``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.http.mcphttp_support import Response, Wire, http_request, message, post, read_events
from tests.interop.toolkit_support import (
    CLIENT_ID,
    REDIRECT_URI,
    AuthorizationServer,
    Person,
    Redirected,
    expire_token,
)
from tests.support import manage

pytestmark = [pytest.mark.interop, pytest.mark.orm, pytest.mark.one_leg]

TIMEOUT_SECONDS = 60
GATED = "delete_observation"


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthorizationServer]:
    started = AuthorizationServer.start(tmp_path_factory.mktemp("sdk-oauth"))
    yield started
    started.server.stop()


class Storage:
    """The SDK's token storage, in memory: the pre-registered client (or none, for a client
    that must register itself), and the tokens the SDK obtains."""

    def __init__(self, registered: bool = True) -> None:
        self.tokens: OAuthToken | None = None
        self.client = (
            OAuthClientInformationFull(
                client_id=CLIENT_ID,
                redirect_uris=[REDIRECT_URI],
                token_endpoint_auth_method="none",
                grant_types=["authorization_code"],
                response_types=["code"],
            )
            if registered
            else None
        )

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Signed:
    """One user's SDK client: its provider, its storage, the person it sends to the
    authorization server, and every authorization URL it sent them to."""

    def __init__(
        self,
        issuer: AuthorizationServer,
        username: str,
        *,
        registered: bool = True,
        client_metadata_url: str | None = None,
        client_name: str = "beammcp-django interop test",
    ) -> None:
        """``registered=False``: the client registers itself, through its metadata document
        at ``client_metadata_url`` when given, else dynamic registration."""
        self.person = Person(username)
        self.storage = Storage(registered)
        self.authorizations: list[str] = []
        self._redirected: Redirected | None = None
        self.provider = OAuthClientProvider(
            server_url=issuer.resource,
            client_metadata=OAuthClientMetadata(
                redirect_uris=[REDIRECT_URI],
                token_endpoint_auth_method="none",
                grant_types=["authorization_code"],
                response_types=["code"],
                client_name=client_name,
            ),
            storage=self.storage,
            redirect_handler=self._redirect,
            callback_handler=self._callback,
            client_metadata_url=client_metadata_url,
        )

    async def _redirect(self, authorization_url: str) -> None:
        self.authorizations.append(authorization_url)
        self._redirected = await self.person.approve(authorization_url)

    async def _callback(self) -> AuthorizationCodeResult:
        redirected = self._redirected
        assert redirected is not None, "the SDK asked for the code before sending the person"
        return AuthorizationCodeResult(
            code=redirected.code, state=redirected.state, iss=redirected.iss
        )

    async def session(self, scenario: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        async with (
            httpx2.AsyncClient(auth=self.provider, timeout=30) as http,
            streamable_http_client(self.provider.context.server_url, http_client=http) as (
                read,
                write,
            ),
            ClientSession(read, write) as session,
        ):
            await session.discover()
            try:
                return await scenario(session)
            finally:
                await self.person.aclose()


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT_SECONDS):
            return await scenario()

    return anyio.run(bounded)


def names(listed: Any) -> set[str]:
    return {tool.name for tool in listed.tools}


def bearer_call(issuer: AuthorizationServer, token: str, tool: str = "echo") -> Response:
    arguments = {"text": "hi"} if tool == "echo" else {"id": 1}
    body = message(f"call-{tool}", "tools/call", {"name": tool, "arguments": arguments})
    return post(issuer.server.port, body, add=[("Authorization", f"Bearer {token}")])


def challenge(issuer: AuthorizationServer, error: str | None = None) -> str:
    """The 401's WWW-Authenticate, as the resource server's settings make it."""
    metadata = f"{issuer.origin}/.well-known/oauth-protected-resource/mcp"
    head = f'error="{error}", ' if error else ""
    return f'Bearer {head}resource_metadata="{metadata}", scope="demo.read"'


def test_two_users_with_different_permissions_see_different_tools(issuer):
    async def listed(username: str) -> set[str]:
        async def scenario(session: ClientSession) -> set[str]:
            seen = names(await session.list_tools())
            echoed = await session.call_tool("echo", {"text": f"hello {username}"})
            assert [block.text for block in echoed.content] == [f"hello {username}"]
            return seen

        return await Signed(issuer, username).session(scenario)

    ada, bob = run(lambda: listed("ada")), run(lambda: listed("bob"))
    assert {"echo", "get_forecast", "record_observation", GATED} <= ada
    assert ada - bob == {GATED}
    # Each session began unauthenticated: the 401 is named in the log, not to the caller.
    assert "MCP request refused by an authorization hook: no bearer token" in issuer.log()


def test_the_sdk_authorizes_with_pkce_and_the_resource_and_its_token_is_bound_to_it(issuer):
    signed = Signed(issuer, "bob")

    async def scenario(session: ClientSession) -> None:
        await session.list_tools()

    run(lambda: signed.session(scenario))
    (authorization,) = signed.authorizations
    assert authorization.startswith(f"{issuer.origin}/o/authorize/?")
    (consent,) = signed.person.consents
    assert consent["code_challenge_method"] == "S256" and consent["code_challenge"]
    assert consent["resource"] == issuer.resource
    assert consent["scope"] == "demo.read"
    assert signed.storage.tokens is not None
    token = signed.storage.tokens.access_token
    recorded = issuer.shell(
        "import hashlib; from oauth2_provider.models import AccessToken; "
        f"t = AccessToken.objects.get(token_checksum=hashlib.sha256({token!r}.encode())"
        ".hexdigest()); print(t.user.username, t.scope, t.resource)"
    )
    assert recorded.split() == ["bob", "demo.read", str([issuer.resource])]


def test_a_missing_scope_is_403_and_the_sdk_steps_up_to_it(issuer):
    signed = Signed(issuer, "ada")

    async def scenario(session: ClientSession) -> tuple[str, str]:
        assert GATED in names(await session.list_tools())
        assert signed.storage.tokens is not None
        read_only = signed.storage.tokens.access_token
        # The same token, as the server answers it: 403, every scope the tool needs named.
        refused = bearer_call(issuer, read_only, GATED)
        assert refused.status == 403
        assert refused.header("www-authenticate") == (
            'Bearer error="insufficient_scope", scope="demo.write", resource_metadata='
            f'"{issuer.origin}/.well-known/oauth-protected-resource/mcp"'
        )
        assert refused.json()["error"]["message"] == "insufficient_scope"
        await session.call_tool("record_observation", {"city": "oslo", "temperature_c": -3})
        deleted = await session.call_tool(GATED, {"id": 1})  # the SDK steps up
        return read_only, deleted.content[0].text

    read_only, deleted = run(lambda: signed.session(scenario))
    assert deleted == "Deleted 1 observation(s)."  # the first row of a fresh database
    first, second = signed.person.consents
    assert (first["scope"], second["scope"]) == ("demo.read", "demo.read demo.write")
    assert signed.storage.tokens is not None
    assert signed.storage.tokens.access_token != read_only
    assert "its token lacks a scope of tools/call (needs demo.write)" in issuer.log()


async def issued_token(issuer: AuthorizationServer, username: str, resource: str) -> str:
    """A token the toolkit issues through the authorization-code flow with PKCE for
    ``resource`` (what a client asks for when it names another server), by hand: the SDK
    only ever asks for the resource it connects to."""
    verifier = secrets.token_urlsafe(64)
    challenge_value = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    query = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "scope": "demo.read",
        "state": secrets.token_urlsafe(16),
        "code_challenge": challenge_value.decode().rstrip("="),
        "code_challenge_method": "S256",
        "resource": resource,
    }
    person = Person(username)
    try:
        redirected = await person.approve(f"{issuer.origin}/o/authorize/?{urlencode(query)}")
        assert redirected.state == query["state"]
        answer = await person.browser.post(
            f"{issuer.origin}/o/token/",
            data={
                "grant_type": "authorization_code",
                "code": redirected.code,
                "redirect_uri": REDIRECT_URI,
                "client_id": CLIENT_ID,
                "code_verifier": verifier,
                "resource": resource,
            },
        )
    finally:
        await person.aclose()
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def assert_opaque_401(response: Response, issuer: AuthorizationServer) -> None:
    assert response.status == 401
    assert response.header("www-authenticate") == challenge(issuer, "invalid_token")
    assert response.body == b""


def test_a_token_issued_for_another_resource_is_401_invalid_token(issuer):
    other = f"{issuer.origin}/other-mcp"
    token = run(lambda: issued_token(issuer, "ada", other))
    assert_opaque_401(bearer_call(issuer, token), issuer)
    assert "issued for another resource" in issuer.log()
    # The same flow for this resource is served: the refusal was the audience alone.
    served = bearer_call(issuer, run(lambda: issued_token(issuer, "ada", issuer.resource)))
    assert served.status == 200 and served.json()["result"]["content"][0]["text"] == "hi"


def test_an_expired_token_is_401_invalid_token_and_the_sdk_authorizes_again(issuer):
    token = run(lambda: issued_token(issuer, "bob", issuer.resource))
    expire_token(issuer, token)  # before it is first presented: nothing has cached it
    assert_opaque_401(bearer_call(issuer, token), issuer)
    assert "expired" in issuer.log()
    # An SDK client holding the expired token meets the same 401 and authorizes again.
    signed = Signed(issuer, "bob")
    signed.storage.tokens = OAuthToken(access_token=token, token_type="Bearer")

    async def scenario(session: ClientSession) -> set[str]:
        return names(await session.list_tools())

    assert "echo" in run(lambda: signed.session(scenario))
    assert len(signed.authorizations) == 1
    assert signed.storage.tokens.access_token != token


def test_no_token_is_401_naming_the_metadata_and_the_scopes(issuer):
    response = post(issuer.server.port, message("anonymous", "tools/list"))
    assert response.status == 401
    assert response.header("www-authenticate") == challenge(issuer)
    assert response.body == b""


CONNECTOME = tuple(f"connectome://{graph}" for graph in ("declared", "diff", "observed"))
SERVER = "beammcp-sample-weather"
HIDDEN_NODES = {
    f"{SERVER}/tool/{GATED}",
    f"{SERVER}/module/sample_project.demo.mcp/DeleteObservation.call/3",
    f"{SERVER}/effect/model.delete/demo.Observation",
}


def bearer_read(issuer: AuthorizationServer, token: str, uri: str) -> Response:
    body = message("read", "resources/read", {"uri": uri})
    return post(issuer.server.port, body, add=[("Authorization", f"Bearer {token}")])


def connectome_as(issuer: AuthorizationServer, username: str, calls: bool = False) -> Any:
    """What ``username`` is listed and reads of the connectome through the SDK (every graph
    listed, observed last), and the token the SDK was issued; with ``calls``, echo three times
    and delete_observation once first (the SDK steps up to demo.write for it)."""
    signed = Signed(issuer, username)

    async def scenario(session: ClientSession) -> tuple[set[str], dict[str, str]]:
        if calls:
            for text in ("one", "two", "three"):
                await session.call_tool("echo", {"text": text})
            await session.call_tool(GATED, {"id": 99})
        uris = {str(resource.uri) for resource in (await session.list_resources()).resources}
        texts = {}
        for uri in CONNECTOME:
            if uri in uris:
                (contents,) = (await session.read_resource(uri)).contents
                assert contents.mime_type == "application/json"
                texts[uri.removeprefix("connectome://")] = contents.text
        return uris, texts

    uris, texts = run(lambda: signed.session(scenario))
    assert signed.storage.tokens is not None
    return uris, texts, signed.storage.tokens.access_token


def exported(issuer: AuthorizationServer, graph: str, output: Path) -> bytes:
    """``manage.py mcp_connectome export`` on the server's database: the bytes it wrote."""
    done = manage(issuer.env, "mcp_connectome", "export", f"--{graph}", "-o", str(output))
    data = output.read_bytes()
    assert done.stdout.decode().strip() == f"sha256 {hashlib.sha256(data).hexdigest()}  {output}"
    return data


def graph_of(text: str) -> tuple[set[str], set[tuple[str, str, str]]]:
    graph = json.loads(text)
    edges = {(edge["from"], edge["to"], edge["kind"]) for edge in graph["edges"]}
    return {node["id"] for node in graph["nodes"]}, edges


def test_the_connectome_resources_show_each_user_only_what_their_gates_leave_them(issuer, tmp_path):
    # ada (a superuser) is hidden nothing: she reads the bytes the export command writes.
    uris, ada, _ = connectome_as(issuer, "ada", calls=True)
    assert set(CONNECTOME) <= uris
    assert ada["declared"].encode() == exported(issuer, "declared", tmp_path / "d.json")
    assert ada["observed"].encode() == exported(issuer, "observed", tmp_path / "o.json")
    nodes, edges = graph_of(ada["observed"])
    echo, handler = f"{SERVER}/tool/echo", f"{SERVER}/module/sample_project.demo.mcp/Echo.call/3"
    assert {(f"{SERVER}/server", echo, "invoke"), (echo, handler, "invoke")} <= edges
    assert nodes >= HIDDEN_NODES  # delete_observation was called, and deleted through the ORM
    classed = json.loads(ada["diff"])["classes"]["declared_and_observed"]
    assert (echo, handler) in {(entry["from"], entry["to"]) for entry in classed}

    # carol (staff, the view permission on observed edges, not delete_observation) reads the
    # graphs without the tool, its handler, its effect or its calls.
    uris, carol, _ = connectome_as(issuer, "carol")
    assert set(CONNECTOME) <= uris
    for graph, text in carol.items():
        for trace in (GATED, "DeleteObservation", "model.delete"):
            assert trace not in text, (graph, trace)
    ada_nodes, ada_edges = graph_of(ada["declared"])
    carol_nodes, carol_edges = graph_of(carol["declared"])
    assert ada_nodes - carol_nodes == HIDDEN_NODES
    assert carol_edges == {e for e in ada_edges if {e[0], e[1]} <= carol_nodes}
    assert (echo, handler, "invoke") in graph_of(carol["observed"])[1]

    # bob (no staff, no permission) is answered as if the resources did not exist.
    uris, bob, token = connectome_as(issuer, "bob")
    assert not uris & set(CONNECTOME) and bob == {}
    unknown = bearer_read(issuer, token, "connectome://nothing")
    for uri in CONNECTOME:
        hidden = bearer_read(issuer, token, uri)
        assert hidden.status == unknown.status
        assert hidden.body.replace(uri.encode(), b"<uri>") == unknown.body.replace(
            b"connectome://nothing", b"<uri>"
        )


def test_a_revoked_token_is_refused_at_once_and_its_listen_stream_ends(issuer):
    # The toolkit's revocation endpoint deletes the token in the serving process: its
    # receiver ends the principal's streams and forgets the grant cached for the token, which
    # was accepted for 28.9 s after its revocation before (the token cache's lifetime).
    token = run(lambda: issued_token(issuer, "bob", issuer.resource))
    assert bearer_call(issuer, token).status == 200  # validated once: cached from here on
    asked = {"notifications": {"toolsListChanged": True}}
    listen = message("listen", "subscriptions/listen", asked)
    with Wire(issuer.server.port, timeout=30) as wire:
        wire.send(http_request(listen, add=[("Authorization", f"Bearer {token}")]))
        (ack,) = read_events(wire, 1, timeout=10)
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        revoked = httpx2.post(
            f"{issuer.origin}/o/revoke_token/",
            data={"token": token, "client_id": CLIENT_ID},
            timeout=10,
        )
        assert revoked.status_code == 200, revoked.text
        closed = read_events(wire, 1, timeout=5)
    assert closed and "result" in closed[0], closed
    assert_opaque_401(bearer_call(issuer, token), issuer)


def test_the_server_logged_no_fault_and_never_a_token(issuer):
    """Run last: every refusal above was named by reason, none by a traceback, and no
    token the toolkit issued reached the log."""
    log = issuer.log()
    assert "Traceback" not in log and "ERROR" not in log
    assert "MCP request refused" in log
    tokens = issuer.shell(
        "from oauth2_provider.models import AccessToken; "
        "print(*AccessToken.objects.values_list('token', flat=True))"
    ).split()
    assert len(tokens) >= 6
    assert not [token for token in tokens if token in log]


def run_documented_client(
    issuer: AuthorizationServer, block: str, person: Person, directory: Path
) -> str:
    """docs/authorization.md's client ``block``, its file as written, run against the
    documented server (its address given as the page says); ``person`` opens each address it
    prints, signs in and approves, and the address the browser lands on is pasted back.
    What it printed past those prompts."""
    import subprocess
    import sys

    from tests.interop.toolkit_support import documented_block

    script = directory / f"{block}.py"
    script.write_text(documented_block(block, "```python"), encoding="utf-8")
    client = subprocess.Popen(
        [sys.executable, str(script), issuer.resource],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert client.stdin is not None and client.stdout is not None
    printed: list[str] = []

    async def at_the_browser() -> None:
        """Each address the client prints opened, approved, and the landing pasted back."""
        assert client.stdin is not None and client.stdout is not None
        try:
            while read := await anyio.to_thread.run_sync(client.stdout.readline):
                line = read.replace("The address you landed on: ", "")  # input()'s prompt
                if not line.startswith("Open, sign in and approve: "):
                    printed.append(line)
                    continue
                url = line.removeprefix("Open, sign in and approve: ").strip()
                redirected = await person.approve(url)
                landing = {
                    "code": redirected.code,
                    "state": redirected.state,
                    "iss": redirected.iss,
                }
                query = urlencode({key: value for key, value in landing.items() if value})
                client.stdin.write(f"{REDIRECT_URI}?{query}\n")
                client.stdin.flush()
        finally:
            await person.aclose()

    try:
        run(at_the_browser)
        client.wait(timeout=TIMEOUT_SECONDS)
    finally:
        client.kill()
    assert client.returncode == 0, client.stderr.read() if client.stderr else ""
    return "".join(printed)


def test_the_documented_sdk_client_signs_in_and_steps_up_as_written(issuer, tmp_path):
    from tests.interop.toolkit_support import documented_block

    person = Person("ada")
    printed = run_documented_client(issuer, "sdk-client", person, tmp_path)
    # What it prints past the prompts: the page's output, as shown.
    assert printed == documented_block("sdk-client-output", "```text")
    first, second = person.consents
    assert (first["scope"], second["scope"]) == ("demo.read", "demo.read demo.write")


def test_the_by_hand_sign_in_runs_as_written(issuer, tmp_path):
    from tests.interop.toolkit_support import documented_block

    printed = run_documented_client(issuer, "by-hand", Person("ada"), tmp_path)
    expected = documented_block("by-hand-output", "```text")
    # The page's addresses are the documented server's port; this one's is its own.
    assert printed == expected.replace("127.0.0.1:8000", f"127.0.0.1:{issuer.server.port}")
