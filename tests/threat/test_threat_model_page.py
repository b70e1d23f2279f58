"""docs/threat-model.md and docs/will-not-implement.md held to the tree: every test they
cite exists and is collected, holds (not an expected failure nor skipped in every one of its
parametrizations), and every row of their tables cites at least one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.threat.citation_marks import MARKED

pytestmark = pytest.mark.one_leg

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "threat-model.md"
ABSENCES = ROOT / "docs" / "will-not-implement.md"
CITATION = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")
VERDICTS = ("REFUSED", "BOUNDED", "DELEGATED")


def vector_rows() -> list[str]:
    table = PAGE.read_text(encoding="utf-8").split("## The wire, vector by vector", 1)[1]
    table = table.split("\n## ", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]


def test_every_vector_row_has_a_verdict_and_cites_at_least_one_test():
    rows = vector_rows()
    assert len(rows) >= 20
    for row in rows:
        vector, verdict = (cell.strip() for cell in row.split("|")[1:3])
        assert any(word in verdict for word in VERDICTS), vector
        assert CITATION.search(row), f"the row '{vector}' cites no test"


def test_every_absence_cites_at_least_one_test():
    rows = ABSENCES.read_text(encoding="utf-8").split("| held by |", 1)[1].splitlines()[2:]
    rows = [row for row in rows if row.startswith("| ")]
    assert len(rows) >= 5
    assert all(CITATION.search(row) for row in rows)


def test_every_cited_test_exists_is_collected_and_is_not_marked_to_fail_or_skip():
    pages = PAGE.read_text(encoding="utf-8") + ABSENCES.read_text(encoding="utf-8")
    cited = {f"{path}::{name}" for path, name in CITATION.findall(pages)}
    files = sorted({citation.split("::", 1)[0] for citation in cited})
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.threat.citation_marks",
            *files,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    lines = collected.stdout.splitlines()
    marked = {line.split()[1] for line in lines if line.startswith(MARKED)}
    items: dict[str, list[str]] = {}
    for line in lines:
        if "::" in line and not line.startswith(MARKED):
            items.setdefault(line.split("[", 1)[0], []).append(line.strip())
    missing = sorted(citation for citation in cited if citation not in items)
    assert missing == []
    # A parametrized test holds when one of its cases does (daphne's cases are expected
    # failures where daphne reads the body first); one whose every case is marked does not,
    # and may be cited only where the page says so: "not met", "expected failure".
    never_held = {citation for citation in cited if all(item in marked for item in items[citation])}
    claimed = sorted(
        citation
        for unit in claim_units(pages)
        for citation in (f"{path}::{name}" for path, name in CITATION.findall(unit))
        if citation in never_held and not UNMET.search(unit)
    )
    assert claimed == []


UNMET = re.compile(r"not met|expected failure", re.IGNORECASE)


def claim_units(text: str) -> list[str]:
    """What a citation vouches for: its table row, or its paragraph."""
    units = []
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith("|"):
            units.extend(block.splitlines())
        else:
            units.append(block)
    return units
