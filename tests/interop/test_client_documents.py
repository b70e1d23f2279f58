"""Clients that register themselves: Client ID Metadata Documents on the project's own
authorization server (django-oauth-toolkit's ``CIMD_ENABLED``, the consent view of
``beammcp_django.oauth.server_urls``), end to end over real HTTP.

The client's metadata document is served by the test over https on loopback (a test
authority made by ``trustme``, named to the server through ``SSL_CERT_FILE``). The server
fetching it is the sample started as docs/authorization.md says, with one setting more
(``tests/oauth/loopback_documents_settings.py``: the tests' loopback fetcher,
``tests/oauth/loopback_fetcher.py``). The official SDK's client registers with nothing but
its document's URL (``client_metadata_url``): it finds the metadata from the 401, sees
``client_id_metadata_document_supported``, and sends a person (real GETs and POSTs of the
login and consent forms) to authorize with that URL as its ``client_id``; then it calls a
tool. A document that lies about its URL or its redirect URIs is refused; the sample's own
settings (the toolkit's public-address fetcher) never fetch a document from this computer.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
import trustme
from mcp import ClientSession

from tests.interop.test_sdk_oauth import Signed, run
from tests.interop.toolkit_support import REDIRECT_URI, AuthorizationServer, Person

pytestmark = [pytest.mark.interop, pytest.mark.one_leg]

CLIENT_NAME = "Interop Assistant"
LOOPBACK_SETTINGS = "tests.oauth.loopback_documents_settings"


class DocumentServer:
    """An https server on loopback answering each path with the document set for it, and
    counting the requests each path received."""

    def __init__(self, directory: Path) -> None:
        authority = trustme.CA()
        self.ca_file = directory / "test-authority.pem"
        authority.cert_pem.write_to_path(str(self.ca_file))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert("127.0.0.1").configure_cert(context)
        self.documents: dict[str, dict[str, Any]] = {}
        self.requests: dict[str, int] = {}
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                served.requests[self.path] = served.requests.get(self.path, 0) + 1
                document = served.documents.get(self.path)
                body = json.dumps(document).encode() if document is not None else b"{}"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "max-age=600")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.socket = context.wrap_socket(self.http.socket, server_side=True)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.http.server_address[1]}{path}"

    def publish(self, path: str, **changes: Any) -> str:
        """A client's document at ``path``: its own URL as ``client_id``, unless changed."""
        url = self.url(path)
        self.documents[path] = {
            "client_id": url,
            "client_name": CLIENT_NAME,
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **changes,
        }
        return url

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    server = DocumentServer(tmp_path_factory.mktemp("documents"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def issuer(
    documents: DocumentServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthorizationServer]:
    started = AuthorizationServer.start(
        tmp_path_factory.mktemp("cimd-issuer"),
        settings=LOOPBACK_SETTINGS,
        extra_env={"SSL_CERT_FILE": str(documents.ca_file)},
    )
    yield started
    started.server.stop()


def test_the_sdk_registers_with_its_document_url_and_the_person_sees_where_it_came_from(
    issuer, documents
):
    document_url = documents.publish("/assistant/client.json")
    signed = Signed(
        issuer, "bob", registered=False, client_metadata_url=document_url, client_name=CLIENT_NAME
    )
    person, storage = signed.person, signed.storage

    async def scenario(session: ClientSession) -> list[str]:
        called = await session.call_tool("echo", {"text": "registered by document"})
        return [block.text for block in called.content]

    assert run(lambda: signed.session(scenario)) == ["registered by document"]
    assert storage.client is not None and storage.client.client_id == document_url
    (consent,) = person.consents
    assert consent["client_id"] == document_url and consent["resource"] == issuer.resource
    (page,) = person.consent_pages
    host = document_url.split("/")[2]
    assert f"Authorize “<bdi>{CLIENT_NAME}</bdi>”?" in page
    assert f"what <strong><bdi>{host}</bdi></strong> says the client is called" in page
    assert "your browser goes to <strong><bdi>127.0.0.1:33418</bdi></strong>" in page
    assert "<strong>That is this computer.</strong>" in page
    assert documents.requests["/assistant/client.json"] == 1  # fetched once, then kept
    token = storage.tokens.access_token if storage.tokens else ""
    recorded = issuer.shell(
        "import hashlib; from oauth2_provider.models import AccessToken; "
        f"t = AccessToken.objects.get(token_checksum=hashlib.sha256({token!r}.encode())"
        ".hexdigest()); print(t.application.registration_source, t.application.client_type, "
        "t.resource, t.application.name, sep='|')"
    )
    assert recorded.strip().split("|") == ["cimd", "public", str([issuer.resource]), CLIENT_NAME]


def authorize_page(issuer: AuthorizationServer, client_id: str, **more: str) -> httpx2.Response:
    """A signed-in person's GET of the authorize URL for ``client_id``, by hand."""
    query = {
        **more,
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "demo.read",
        "state": "s",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "resource": issuer.resource,
    }
    person = Person("bob")

    async def visit() -> httpx2.Response:
        try:
            url = f"{issuer.origin}/o/authorize/?{urlencode(query)}"
            page = await person.browser.get(url)
            if page.status_code == 302 and "/accounts/login/" in page.headers["location"]:
                page = await person._sign_in(f"{issuer.origin}{page.headers['location']}")
            return page
        finally:
            await person.aclose()

    return run(visit)


def test_a_person_who_approved_a_self_registered_client_is_asked_again_every_time(
    issuer, documents
):
    """``approval_prompt=auto`` lets the toolkit skip the page for a client approved before:
    never for one that named itself, which any program could imitate."""
    url = documents.url("/assistant/client.json")
    approved = issuer.shell(
        "from oauth2_provider.models import AccessToken; "
        f"print(AccessToken.objects.filter(application__client_id={url!r}, "
        "user__username='bob').count())"
    )
    assert int(approved) >= 1, "the test above left bob's approval of the client"
    page = authorize_page(issuer, url, approval_prompt="auto")
    assert page.status_code == 200 and 'id="authorizationForm"' in page.text


UNKNOWN = "Invalid client_id parameter value"
MISMATCH = "Mismatching redirect URI."


@pytest.mark.parametrize(
    "path, lie, refusal",
    [
        ("/liar/client.json", {"client_id": "https://127.0.0.1:1/elsewhere.json"}, UNKNOWN),
        ("/no-list/client.json", {"redirect_uris": "not a list"}, UNKNOWN),
        # Another path on this computer (a loopback URI's port may differ: RFC 8252 §7.3).
        ("/other-path/client.json", {"redirect_uris": ["http://127.0.0.1:33418/other"]}, MISMATCH),
        ("/other-host/client.json", {"redirect_uris": ["https://client.example/cb"]}, MISMATCH),
    ],
)
def test_a_document_that_does_not_hold_is_refused_and_no_consent_is_asked(
    issuer, documents, path, lie, refusal
):
    page = authorize_page(issuer, documents.publish(path, **lie))
    assert page.status_code == 400, page.status_code
    assert 'id="authorizationForm"' not in page.text
    assert refusal in page.text, page.text[-600:]
    assert documents.requests[path] == 1


def test_the_sample_s_own_fetcher_never_reaches_this_computer(documents, tmp_path):
    """The sample's settings as they ship (the toolkit's SafeMetadataFetcher): a document on
    a loopback address is never fetched; the client is unknown."""
    plain = AuthorizationServer.start(tmp_path, extra_env={"SSL_CERT_FILE": str(documents.ca_file)})
    try:
        url = documents.publish("/ssrf/client.json")
        page = authorize_page(plain, url)
        assert 'id="authorizationForm"' not in page.text
        assert "/ssrf/client.json" not in documents.requests
        assert "non-public address" in plain.log()
    finally:
        plain.server.stop()
