"""Summarise a suite run from its results directory: which scenarios the requirement set
scores, which passed, and every failing or warning check with the suite's message.

    python conformance/summary.py RESULTS_DIR REQUIREMENTS_YAML SUITE_EXIT_STATUS

A scenario passes when none of its checks is FAILURE (the requirement set's rule). Prints the
details, then one ``RESULT:`` line, and writes ``RESULTS_DIR/summary.json``.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


def requirement_sets(path: Path) -> tuple[str, list[str], list[str]]:
    """(revision, scored server scenarios, not-scored server scenarios) of a requirements file.

    The file's shape is fixed (top-level ``server:`` list of names; ``not_scored:`` list of
    mappings with ``scenario`` and ``leg``), so a line reader does without a YAML library.
    """
    scored: list[str] = []
    not_scored: list[str] = []
    section = None
    pending: str | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            section = line.rstrip(":")
            continue
        stripped = line.strip()
        if section == "server" and stripped.startswith("- "):
            scored.append(stripped[2:].strip())
        elif section == "not_scored":
            if stripped.startswith("- scenario:"):
                pending = stripped.split(":", 1)[1].strip()
            elif stripped.startswith("leg:") and pending is not None:
                if stripped.split(":", 1)[1].strip() == "server":
                    not_scored.append(pending)
                pending = None
    return path.stem, scored, not_scored


def load_results(results: Path) -> dict[str, list[dict[str, Any]]]:
    """Checks by scenario, from ``server-<scenario>-<timestamp>/checks.json``."""
    found: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(results.glob("server-*/checks.json")):
        match = RESULT_DIR.match(checks.parent.name)
        if match is not None:
            found[match["scenario"]] = json.loads(checks.read_text(encoding="utf-8"))
    return found


def failed(checks: list[dict[str, Any]]) -> bool:
    return any(check.get("status") == "FAILURE" for check in checks)


def describe(check: dict[str, Any]) -> str:
    message = check.get("errorMessage") or check.get("description") or ""
    return f"{check.get('status')} {check.get('id')}: {message}"


def main(argv: list[str]) -> int:
    results, requirements, suite_status = Path(argv[1]), Path(argv[2]), int(argv[3])
    suite_version = json.loads((requirements.parent.parent / "package.json").read_text())["version"]
    revision, scored, not_scored = requirement_sets(requirements)
    by_scenario = load_results(results)

    def passing(names: list[str]) -> list[str]:
        return [n for n in names if n in by_scenario and not failed(by_scenario[n])]

    scored_pass = passing(scored)
    unscored_pass = passing(not_scored)
    for title, names in (("Scored", scored), ("Not scored", not_scored)):
        print(f"\n{title} ({revision}):")
        for name in names:
            checks = by_scenario.get(name)
            if checks is None:
                print(f"  ✗ {name}: no results (the scenario did not run or wrote nothing)")
                continue
            print(f"  {'✗' if failed(checks) else '✓'} {name}")
            for check in checks:
                if check.get("status") in ("FAILURE", "WARNING"):
                    print(f"      {describe(check)}")

    date = datetime.now(UTC).strftime("%Y-%m-%d")
    line = (
        f"RESULT {date}: {revision} requirements, @modelcontextprotocol/conformance "
        f"{suite_version}: {len(scored_pass)}/{len(scored)} scored scenarios passed; "
        f"not scored: {len(unscored_pass)}/{len(not_scored)} passed; suite exit {suite_status}"
    )
    summary = {
        "date": date,
        "revision": revision,
        "suite_version": suite_version,
        "suite_exit_status": suite_status,
        "scored": {name: name in scored_pass for name in scored},
        "not_scored": {name: name in unscored_pass for name in not_scored},
        "result_line": line,
    }
    (results / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print("\n" + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
