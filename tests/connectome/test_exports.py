"""Exports, the connectome resources and ``manage.py mcp_connectome``: one set of bytes."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from contextlib import redirect_stdout
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import override_settings

from beammcp_django import mcp
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.canonical import verify
from beammcp_django.protocol.server import Server, ServerOptions
from beammcp_django.registry import Site, site
from beammcp_django.runtime.host_threads import run_sync_host

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTS = (
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
)

pytestmark = pytest.mark.django_db(transaction=True)


# Who the connectome resources are shown to by default: the admin's rule, which an active
# superuser passes (it holds every permission), with nothing of the catalog hidden from it.
SUPERUSER = User(username="root", is_active=True, is_staff=True, is_superuser=True)


def handle(
    server: Server, method: str, params: dict[str, Any] | None = None, principal: Any = SUPERUSER
) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**(params or {}), "_meta": META},
    }
    reply = asyncio.run(server.handle(message, principal=principal))
    assert reply is not None
    return reply


def sample_server(*, with_connectome: bool) -> Server:
    """The sample catalog on a site of its own, with or without the three resources."""
    own = Site()
    declarations = [d for d in site.declarations if d not in mcp.CONNECTOME_RESOURCES]
    own.register(*declarations)
    if with_connectome:
        own.register(*mcp.CONNECTOME_RESOURCES)
    return Server(
        own,
        ServerOptions(name="s", version="1", page_size=1000),
        cursor_key=b"k",
        run_sync=run_sync_host,
    )


def test_each_export_verifies_and_names_its_algorithm():
    for name in exports.GRAPHS:
        for algorithm in ("sha256", "sha384", "sha512"):
            exported = exports.export(name, algorithm)
            assert exported.filename == f"connectome.{name}.json"
            assert exported.hexdigest == hashlib.new(algorithm, exported.data).hexdigest()
            assert verify(exported.data).hexdigest == exported.hexdigest


def test_an_unknown_graph_name_is_refused_naming_the_three():
    with pytest.raises(ValueError, match="declared, observed, diff"):
        exports.export("everything")


def test_the_default_scope_is_the_installed_apps_holding_the_handlers():
    assert "sample_project.demo" in exports.scope()
    assert "beammcp_django" not in exports.scope()
    with override_settings(BEAMMCP={"CONNECTOME_SCOPE": ["tests.faultapp"]}):
        assert exports.scope() == ("tests.faultapp",)


def test_the_connectome_resources_change_nothing_in_discovery_and_lists_but_their_entries():
    bare = sample_server(with_connectome=False)
    full = sample_server(with_connectome=True)
    added = {f"connectome://{name}" for name in exports.GRAPHS}
    for method in LISTS:
        without, with_ = handle(bare, method)["result"], handle(full, method)["result"]
        if method == "resources/list":
            assert {r["uri"] for r in with_["resources"]} - {
                r["uri"] for r in without["resources"]
            } == added
            with_["resources"] = [r for r in with_["resources"] if r["uri"] not in added]
        assert with_ == without, method


def test_reading_a_connectome_resource_answers_the_export_bytes_as_json_text():
    server = sample_server(with_connectome=True)
    for name in ("declared", "diff"):
        (contents,) = handle(server, "resources/read", {"uri": f"connectome://{name}"})["result"][
            "contents"
        ]
        assert contents["mimeType"] == "application/json"
        assert contents["text"].encode("utf-8") == exports.export(name).data


def test_the_export_command_writes_the_file_and_prints_its_hash(tmp_path):
    output = tmp_path / "declared.json"
    printed = io.StringIO()
    call_command("mcp_connectome", "export", "--declared", "-o", str(output), stdout=printed)
    data = output.read_bytes()
    assert data == exports.export("declared").data
    assert printed.getvalue().strip() == f"sha256 {hashlib.sha256(data).hexdigest()}  {output}"


def test_the_export_command_writes_bytes_to_stdout_and_the_hash_to_stderr(capsysbinary):
    errors = io.StringIO()
    call_command("mcp_connectome", "export", "--diff", "--algorithm", "sha384", stderr=errors)
    data = capsysbinary.readouterr().out
    assert json.loads(data)["algorithm"] == "sha384"
    assert errors.getvalue().strip() == f"sha384 {hashlib.sha384(data).hexdigest()}"


def test_the_export_command_needs_exactly_one_graph():
    with pytest.raises(CommandError), redirect_stdout(io.StringIO()):
        call_command("mcp_connectome", "export", "--declared", "--diff")


def test_the_observed_export_writes_the_counts_sidecar_beside_it_on_request(tmp_path):
    weights = tmp_path / "weights.json"
    with redirect_stdout(io.StringIO()):
        call_command(
            "mcp_connectome",
            "export",
            "--observed",
            "-o",
            str(tmp_path / "o.json"),
            "--weights",
            str(weights),
        )
    sidecar = json.loads(weights.read_bytes())
    assert list(sidecar) == ["schema_version", "weights"]
    with pytest.raises(CommandError, match="--weights goes with --observed"):
        call_command("mcp_connectome", "export", "--declared", "--weights", str(weights))


def test_every_edge_of_every_export_carries_the_sign_unset():
    """A sign is a consumer's verdict (docs/will-not-implement.md): whatever the graph, the
    package writes ``unset`` on every edge, and nowhere in its source gives an edge another."""
    import ast
    import json
    from pathlib import Path

    from beammcp_django.connectome.core.canonical import _signs

    signs = []
    for name in exports.GRAPHS:
        signs += list(_signs(json.loads(exports.export(name).data)))
    assert signs, "the sample's graphs have edges"
    assert set(signs) == {"unset"}
    package = Path(exports.__file__).resolve().parents[1]
    given = [
        (path.name, ast.unparse(keyword))
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "sign"
    ]
    assert given == []


def export_in_a_terminal(*arguments: str) -> tuple[bytes, bytes]:
    """``manage.py mcp_connectome export`` of the sample project, its standard output a real
    terminal (a pseudo-terminal), as a reader runs it: (what the terminal showed, stderr)."""
    import os
    import pty
    import subprocess
    import sys

    from tests.support import REPO_ROOT

    main, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp_connectome", "export", *arguments],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "sample_project.settings"},
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 0, errors
    return shown.replace(b"\r\n", b"\n"), errors


def test_the_export_command_indents_the_json_for_a_terminal_and_keeps_the_bytes_for_a_pipe():
    shown, errors = export_in_a_terminal("--declared")
    canonical = subprocess_output("--declared")
    assert shown.count(b"\n") > 10 and json.loads(shown) == json.loads(canonical)
    digest = hashlib.sha256(canonical).hexdigest()
    assert errors.decode().strip() == (
        f"sha256 {digest}  (of the canonical bytes: --canonical, a file or a pipe)"
    )
    shown, errors = export_in_a_terminal("--declared", "--canonical")
    assert shown == canonical and errors.decode().strip() == f"sha256 {digest}"


def subprocess_output(*arguments: str) -> bytes:
    """The same command with its standard output a pipe."""
    import os
    import subprocess
    import sys

    from tests.support import REPO_ROOT

    return subprocess.run(
        [sys.executable, "manage.py", "mcp_connectome", "export", *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "sample_project.settings"},
    ).stdout
