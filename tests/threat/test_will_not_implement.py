"""The absences docs/will-not-implement.md promises, each held by a test."""

from __future__ import annotations

import ast
from pathlib import Path

from django.test import override_settings

from beammcp_django.servers.signing import cursor_key

PACKAGE = Path(__file__).resolve().parents[2] / "beammcp_django"
KEY_LIBRARIES = {"cryptography", "nacl", "jwt", "jose", "Crypto", "OpenSSL"}


def _trees() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_key_the_package_uses_is_derived_from_the_hosts_secret_key():
    with override_settings(SECRET_KEY="one-host-key-" + "x" * 40):
        first = cursor_key()
    with override_settings(SECRET_KEY="another-host-key-" + "y" * 40):
        second = cursor_key()
    assert first != second


def test_the_package_imports_no_key_or_signature_library():
    """One exception, named: the optional JWT validator imports PyJWT to verify an issuer's
    signatures with the public keys the issuer publishes, and never signs (no ``encode``)."""
    imported: dict[str, set[str]] = {}
    signs = []
    for name, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = {node.module.split(".")[0]}
            else:
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "encode"
                    and (isinstance(node.value, ast.Name) and node.value.id in ("jwt", "pyjwt"))
                ):
                    signs.append(name)
                continue
            for module in modules & KEY_LIBRARIES:
                imported.setdefault(module, set()).add(name)
    assert imported == {"jwt": {"oauth/jwt.py"}}
    assert signs == []


def test_the_package_registers_no_tool_resource_or_prompt_of_its_own():
    registrations = [
        (name, ast.unparse(node))
        for name, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "register"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "site"
    ]
    decorated = [
        (name, node.name)
        for name, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any("site.register" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert registrations == [] and decorated == []
