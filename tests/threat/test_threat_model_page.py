"""docs/threat-model.md and docs/will-not-implement.md held to the tree: every test they
cite exists and is collected, and every row of their tables cites at least one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


def test_every_cited_test_exists_and_is_collected():
    pages = PAGE.read_text(encoding="utf-8") + ABSENCES.read_text(encoding="utf-8")
    cited = set(CITATION.findall(pages))
    files = sorted({path for path, _ in cited})
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    node_ids = {line.split("[", 1)[0] for line in collected.stdout.splitlines() if "::" in line}
    missing = sorted(f"{path}::{name}" for path, name in cited if f"{path}::{name}" not in node_ids)
    assert missing == []
