"""What the package tells a user must be actionable where the user is: in a project that
installed it from a wheel, which ships no ``docs/``. No message, hint or error it writes
points at a page of this repository; each says what to do."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.checks import run_checks
from django.test import override_settings

import beammcp_django
from beammcp_django.conf import DEFAULTS

PACKAGE = Path(beammcp_django.__file__).parent
# "docs/settings.md", "(docs: deployment)", "see transports.md": a pointer into docs/.
# A page of docs/ named by its file (SKILL.md is a skill's own file, which checks name).
DOC_POINTER = re.compile(r"\bdocs?\s*[/:]|\b(?!SKILL\.md)[\w-]+\.md\b")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes: written for whoever reads the source, beside docs/."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def package_strings() -> Iterator[tuple[str, int, str]]:
    """Every string literal of the package's code but its docstrings (messages, hints,
    errors, log lines; f-strings' literal parts), and every template's text, with where."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skipped
            ):
                yield str(path.relative_to(PACKAGE)), node.lineno, node.value
    for path in sorted(PACKAGE.rglob("*.html")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield str(path.relative_to(PACKAGE)), number, line


def test_no_string_the_package_shows_a_user_points_at_docs():
    pointers = [
        (where, line, text) for where, line, text in package_strings() if DOC_POINTER.search(text)
    ]
    assert pointers == []


def test_the_scan_reads_the_check_hints_it_guards():
    strings = [text for _, _, text in package_strings()]
    assert any("beammcp_django.authorization.allow_all" in text for text in strings)
    assert DOC_POINTER.search("hint: see docs/settings.md")
    assert DOC_POINTER.search("configure it (docs: deployment)")
    assert DOC_POINTER.search("as host-contract.md says")


def beammcp_checks(**beammcp: object) -> list:
    with override_settings(BEAMMCP=beammcp):
        return run_checks(tags=["beammcp"])


@pytest.mark.with_http_endpoint
def test_the_http_checks_say_what_to_write():
    messages = {message.id: message for message in beammcp_checks(ALLOWED_ORGINS=["x"])}
    assert set(messages) == {"beammcp.W001", "beammcp.E107", "beammcp.E108"}
    typo = messages["beammcp.W001"].hint
    assert typo.startswith("Did you mean 'ALLOWED_ORIGINS'? The keys this version reads: ")
    assert all(f"{key}" in typo for key in DEFAULTS)
    assert '["http://localhost:8000", "http://127.0.0.1:8000"]' in messages["beammcp.E107"].hint
    hook = messages["beammcp.E108"].hint
    assert "returns True to serve the request" in hook
    assert "'beammcp_django.authorization.allow_all'" in hook
    for message in messages.values():
        assert not DOC_POINTER.search(f"{message.msg} {message.hint}")


def test_an_unknown_key_far_from_every_known_one_gets_the_list_alone():
    (message,) = beammcp_checks(NOTHING_LIKE_IT=1)
    assert message.id == "beammcp.W001"
    assert message.hint.startswith("The keys this version reads: ALLOWED_ORIGINS, AUTHORIZE, ")
