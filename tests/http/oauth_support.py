"""What the bearer authorizer's real-server tests share (``test_mcphttp_oauth.py``, its
tokens the test's signed claims; ``test_mcphttp_jwt.py``, JWTs from a test issuer): the
server process under ``tests.http_auth_settings`` and its switches, the challenges it
answers, one tool call with a token, and its log."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.http.mcphttp_support import (
    Response,
    ServerProcess,
    message,
    post,
    server_env,
)

AUTH_SETTINGS = "tests.http_auth_settings"
METADATA_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
CHALLENGE = f'Bearer resource_metadata="{METADATA_URL}", scope="notes.read"'
INVALID = f'Bearer error="invalid_token", resource_metadata="{METADATA_URL}", scope="notes.read"'


def resource_server_env(directory: Path, switches: Mapping[str, str]) -> dict[str, str]:
    """The environment of a resource server: a fresh database, the auth settings with
    ``switches`` on, any Host, and the refusals logged (INFO)."""
    return {
        **server_env(directory),
        **switches,
        "DJANGO_SETTINGS_MODULE": AUTH_SETTINGS,
        "DJANGO_ALLOWED_HOSTS": "*",
        "DJANGO_LOG_LEVEL": "INFO",  # where the refusals are named
    }


def call(server: ServerProcess, token: str | None, tool: str, host: str = "127.0.0.1") -> Response:
    headers = [("Authorization", f"Bearer {token}")] if token is not None else []
    body = message(f"call-{tool}", "tools/call", {"name": tool, "arguments": {}})
    return post(server.port, body, add=headers, host=host)


def text(response: Response) -> str:
    assert response.status == 200, (response.status, response.body)
    return response.json()["result"]["content"][0]["text"]


def log(server: ServerProcess) -> str:
    return server.log_path.read_text(errors="replace")
