"""``mcp_serve`` without a proxy: with DEBUG on it serves the admin's static files from the
finders, as ``runserver`` does; with DEBUG off it serves none (nginx does, from STATIC_ROOT)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.mcphttp_support import ServerProcess, exchange, server_env

CSS = "/static/admin/css/base.css"

pytestmark = pytest.mark.slow


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()


def serve(directory: Path, debug: bool) -> Iterator[ServerProcess]:
    env = server_env(directory)
    env["DJANGO_DEBUG"] = "true" if debug else "false"
    server = ServerProcess("mcp_serve", env, directory)
    try:
        yield server.wait_ready()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def debug_on(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from serve(tmp_path_factory.mktemp("debug-on"), debug=True)


@pytest.fixture(scope="module")
def debug_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from serve(tmp_path_factory.mktemp("debug-off"), debug=False)


def test_mcp_serve_with_debug_on_serves_the_admin_css(debug_on):
    login = exchange(debug_on.port, get("/admin/login/"))
    assert login.status == 200
    assert CSS.encode() in login.body
    css = exchange(debug_on.port, get(CSS))
    assert css.status == 200
    assert css.content_type == "text/css"
    import django.contrib.admin

    source = Path(django.contrib.admin.__file__).parent / "static" / "admin" / "css" / "base.css"
    assert css.body == source.read_bytes()
    assert "static files: /static/ served from the finders (DEBUG is on)" in debug_on.log_tail(
        20_000
    )
    # The MCP path is still the endpoint's, behind the static handler.
    assert exchange(debug_on.port, get("/mcp")).status == 405


def test_mcp_serve_with_debug_off_serves_no_static_file(debug_off):
    assert exchange(debug_off.port, get(CSS)).status == 404
    assert "static files" not in debug_off.log_tail(20_000)
