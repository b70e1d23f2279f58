"""The sample as its own authorization server (``BEAMMCP_SAMPLE_AUTH=oauth``), started the
way docs/authorization.md tells a user to, and a person at a browser for the SDK's OAuth
client.

``documented_commands()`` are the shell lines of the page's ``toolkit-commands`` block;
``AuthorizationServer.start`` runs them as written (``python`` is this interpreter, and the
last, ``mcp_serve``, gets ``--port``, as the README test does) on a fresh database, with one
more user who holds no permission and a staff user who may read the connectome. ``Person`` is
what the SDK's ``redirect_handler`` hands the authorization URL to: real GETs and POSTs of
Django's login form (with its CSRF token) and django-oauth-toolkit's consent form, answering
the code and state the redirect carries.

Imported by ``tests/interop/test_sdk_oauth.py`` and ``tests/interop/test_toolkit_docs.py``.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2

from tests.databases import fresh_database_url
from tests.http.mcphttp_support import ServerProcess, free_port, start_server
from tests.support import REPO_ROOT, manage

PAGE = REPO_ROOT / "docs" / "authorization.md"
# The redirect URI the documented mcp_register_client registers: the client's own callback,
# never listened on here (the person reads the code off the authorization server's redirect).
REDIRECT_URI = "http://127.0.0.1:33418/callback"
CLIENT_ID = "mcp-client"
PASSWORDS = {"ada": "change-me", "bob": "bob-password-8c1e", "carol": "carol-password-3f7a"}
# bob is no superuser and holds no permission: he is not shown delete_observation, nor the
# connectome. carol is staff with the view permission on observed edges alone: she reads the
# connectome, without delete_observation in it.
MAKE_USERS = (
    "from django.contrib.auth.models import Permission, User; "
    f"User.objects.create_user('bob', password='{PASSWORDS['bob']}'); "
    f"carol = User.objects.create_user('carol', password='{PASSWORDS['carol']}', is_staff=True); "
    "carol.user_permissions.add(Permission.objects.get(codename='view_observededge'))"
)


def documented_block(name: str, fence: str) -> str:
    """The block after ``<!-- authorization: NAME -->`` on the authorization page."""
    text = PAGE.read_text(encoding="utf-8")
    _, marked, after = text.partition(f"<!-- authorization: {name} -->\n{fence}\n")
    assert marked, f"{PAGE.name} lost the {fence} block marked {name}"
    return after.partition("\n```")[0] + "\n"


def documented_commands() -> list[str]:
    return documented_block("toolkit-commands", "```sh").splitlines()


def run_line(line: str, env: dict[str, str]) -> list[str] | None:
    """One documented line, as a shell would run it: ``export NAME=VALUE`` sets ``env``;
    ``NAME=VALUE python manage.py ...`` runs manage.py with that variable. The last line
    (the server) is answered as its argv, not run."""
    words = shlex.split(line)
    if words[0] == "export":
        name, _, value = words[1].partition("=")
        env[name] = value
        return None
    local = dict(env)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        local[name] = value
    assert words[:2] == ["python", "manage.py"], line
    if words[2] == "mcp_serve":
        return [sys.executable, *words[1:]]
    manage(local, *words[2:])
    return None


@dataclass
class AuthorizationServer:
    server: ServerProcess
    env: dict[str, str]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def resource(self) -> str:
        return f"{self.origin}/mcp"

    def log(self) -> str:
        return self.server.log_path.read_text(errors="replace")

    def shell(self, code: str) -> str:
        """Python run by ``manage.py shell`` in the server's settings and database."""
        return manage(self.env, "shell", "-v", "0", "-c", code).stdout.decode()

    @classmethod
    def start(
        cls,
        directory: Path,
        settings: str = "sample_project.settings",
        extra_env: dict[str, str] | None = None,
    ) -> AuthorizationServer:
        """The documented commands on a fresh database; the resource (and so the issuer) is
        the port's, named through ``BEAMMCP_SAMPLE_RESOURCE``; refusals logged at INFO.
        ``settings`` and ``extra_env``: a test's own additions to the sample's."""
        port = free_port()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": settings,
            "DATABASE_URL": fresh_database_url(directory),
            "BEAMMCP_SAMPLE_RESOURCE": f"http://127.0.0.1:{port}/mcp",
            "DJANGO_LOG_LEVEL": "INFO",
            "MCPHTTP_RECORD_DIR": str(directory),
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("BEAMMCP_SAMPLE_AUTH", "BEAMMCP_ALLOWED_ORIGINS", "DJANGO_ALLOWED_HOSTS"):
            env.pop(name, None)
        env.update(extra_env or {})
        *setup, serve = documented_commands()
        for line in setup:
            assert run_line(line, env) is None, line
        argv = run_line(serve, env)
        assert argv is not None, serve
        manage(env, "shell", "-c", MAKE_USERS)
        command = [*argv, "--port", str(port)]
        server = start_server("mcp_serve", env, directory, command=lambda _: command, port=port)
        return cls(server, env)


class _Forms(HTMLParser):
    """Each form of a page: its action and its named inputs' values (submit buttons as
    ``buttons``, chosen by the caller)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []
        self.buttons: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append({"": values.get("action", "")})
        elif tag in ("input", "button") and self.forms and "name" in values:
            if values.get("type") == "submit":
                self.buttons.append(values)
            else:
                self.forms[-1][values["name"]] = values.get("value", "")


def form_of(page: httpx2.Response) -> tuple[str, dict[str, str]]:
    """The page's one form: where it posts (absolute) and its fields."""
    parsed = _Forms()
    parsed.feed(page.text)
    assert len(parsed.forms) == 1, page.text
    fields = parsed.forms[0]
    action = fields.pop("") or str(page.url)
    return urljoin(str(page.url), action), fields


@dataclass(frozen=True)
class Redirected:
    code: str
    state: str | None
    iss: str | None


class Person:
    """A user at a browser: signs in when the authorization server asks, and approves the
    consent form. Keeps its cookies (its session) between authorizations, as a browser does;
    every hop is a real request to the server, redirects followed by hand."""

    def __init__(self, username: str) -> None:
        self.username = username
        self.browser = httpx2.AsyncClient(timeout=10)
        self.consents: list[dict[str, str]] = []
        self.consent_pages: list[str] = []

    async def aclose(self) -> None:
        await self.browser.aclose()

    async def approve(self, authorization_url: str) -> Redirected:
        """Follow ``authorization_url`` to the consent form (signing in on the way), approve
        it, and answer what the redirect to the client's callback carries."""
        page = await self.browser.get(authorization_url)
        if page.status_code == 302 and "/accounts/login/" in page.headers["location"]:
            page = await self._sign_in(urljoin(authorization_url, page.headers["location"]))
        assert page.status_code == 200, (page.status_code, page.headers, page.text[:500])
        action, fields = form_of(page)
        self.consents.append(dict(fields))
        self.consent_pages.append(page.text)
        answer = await self.browser.post(action, data={**fields, "allow": "Authorize"})
        assert answer.status_code == 302, (answer.status_code, answer.text[:500])
        location = answer.headers["location"]
        assert location.startswith(REDIRECT_URI + "?"), location
        query = parse_qs(urlsplit(location).query)
        assert "code" in query, location
        return Redirected(
            query["code"][0], query.get("state", [None])[0], query.get("iss", [None])[0]
        )

    async def _sign_in(self, login_url: str) -> httpx2.Response:
        """Django's login form, its CSRF token included; then back where it was sent."""
        form = await self.browser.get(login_url)
        assert form.status_code == 200, form.text[:500]
        action, fields = form_of(form)
        assert fields.get("csrfmiddlewaretoken"), fields
        fields.update(username=self.username, password=PASSWORDS[self.username])
        signed_in = await self.browser.post(action, data=fields)
        assert signed_in.status_code == 302, signed_in.text[:500]
        return await self.browser.get(urljoin(login_url, signed_in.headers["location"]))


def expire_token(server: AuthorizationServer, token: str) -> None:
    """Set the toolkit's record of ``token`` to have expired a minute ago."""
    server.shell(
        "import hashlib, datetime; from django.utils import timezone; "
        "from oauth2_provider.models import AccessToken; "
        f"digest = hashlib.sha256({token!r}.encode()).hexdigest(); "
        "count = AccessToken.objects.filter(token_checksum=digest).update("
        "expires=timezone.now() - datetime.timedelta(minutes=1)); "
        "assert count == 1, count"
    )
