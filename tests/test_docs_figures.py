"""Every measured figure in README.md and docs/*.md carries its date and the command that
reproduces it, and a figure said to be current was measured with the script as it is now
(issue 13, "the mechanism", rule 2).

What counts as a figure. A number with a unit of a measured quantity: a time (ns, µs, ms,
s, min), a rate (req/s, calls/s), a size (KiB, MiB, GiB, KB, MB), an instruction count, a
ratio (``3.4x``, or the multiplication sign before or after the number) or a percentage;
in a table whose header names such a unit (``calls/s``, ``µs/call``, ``ms``), every number
in its rows. What does not: anything in code (fenced or inline: commands, configuration,
setting names); a bound, a target or a method's parameter (the number follows ``≤``, ``<``,
``under``, ``at most``, ``within``, ``every``, ``for``, ``target`` and the like, or is
followed by ``cap``, ``limit``, ``deadline``, ``timeout``, ``or more`` ...); a setting's
default (a value in seconds equal to a ``*_SECONDS`` default of ``conf.DEFAULTS``, a size
equal to a ``*_BYTES`` default or the wire's ``MAX_MESSAGE_BYTES``: read from the code, so a
changed default changes what is excused); a number followed by the name, in code, of a
constant the package defines ("50 ms (`WATCH_AFTER_SECONDS`)"); and a hyphenated adjective
(``a 1-s deadline``). The recognizer errs towards calling a number a figure: a false alarm
costs a provenance line, a miss lets a stale figure stand.

What covers a figure. A provenance: one paragraph (or one table row) that holds a date
(``YYYY-MM-DD``, not one of the protocol's revision names, which look like dates) and a
command in code, inline or in the fenced block that follows the paragraph, naming a script
under ``bench/`` or ``tests/`` (a test's node id is its own command). A provenance covers its
own paragraph or row, and the tables and code blocks that follow the paragraph up to the
next paragraph or heading. A later paragraph that discusses the same run states its date
and command again: "the run above" is what issue 13 found attributed to another run, and
the test cannot check a reference, only a statement.

What a provenance must hold, checked against the tree:
- every script path it names exists, and every ``--option`` its bench command passes is one
  the script defines (a renamed option leaves a command nobody can type);
- a provenance naming a ``bench/`` script names the commit it was measured at, and that
  commit exists in this clone (CI clones the repository with its history; a commit that is
  missing, say after a squash, fails here by name rather than being skipped);
- every script or source path it names is in one of the commits it names (a paragraph may
  state two runs, each with its commit) and, unless the paragraph or row is labelled a
  history (its first word is "History"), is as it was at that commit
  (``git diff --quiet <commit> HEAD -- <path>``: a change made and undone since leaves the
  code the figure was measured with). A history is a figure of record for its
  commit: reproduced by checking that commit out, so it must name one, and its script may
  have moved on since. The label is the first word, not any mention, so that a paragraph
  stating a current figure beside a history is still checked: it passes on its current
  commit.

Why the git check watches the named paths and not the whole package: nearly every commit
touches ``beammcp_django/``, so a rule on the package would demand every figure re-measured
on every change; it would be red or waived within a day. A changed bench script is certain
evidence that the printed figure is no longer what the command prints. A figure that
depends on one module (the decoder's on ``protocol/wire.py``) names that module in its
provenance, and then the module is watched too; the rest is the reviewer's, as the opening
of docs/performance.md says.

What it cannot check: that a figure is what its command printed (only a rerun says that),
and that a paragraph's date and test path are there as its provenance rather than for
another reason; a claim attributed to the wrong run reads like a right one.

The last tests run the same audit on altered copies of the pages, so the recognizer is seen
to fail where it must (an unattributed figure, a missing script, a stale or unknown commit)
and to pass settings and limits.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from beammcp_django.conf import DEFAULTS
from beammcp_django.protocol import revisions, wire

pytestmark = pytest.mark.one_leg

ROOT = Path(__file__).resolve().parents[1]


def pages() -> dict[str, str]:
    """README.md and every page of docs/, by path relative to the root."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


# --- the recognizer ---------------------------------------------------------------------

NUMBER = r"(?<![\w.,/-])[+-]?\d[\d,]*(?:\.\d+)?"
UNIT = (
    r"(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|KiB|MiB|GiB|KB|MB|GB"
    r"|req/s|calls/s|requests/s|instructions)(?![\w/])"
)
TIMES = "\u00d7"  # the multiplication sign, as in "7\u00d7 slower"
FIGURE = re.compile(rf"{NUMBER}(?:\s?{UNIT}|x(?!\w)|{TIMES}|\s?%)|{TIMES}\s?\d[\d.]*")
HEADER_UNIT = re.compile(rf"(?:\b|\s){UNIT}|\b(?:req|calls)/s\b|µs|\bms\b|\bMiB\b|/s\b")
BARE_NUMBER = re.compile(rf"{NUMBER}(?![\w%{TIMES}])")
BOUND_BEFORE = re.compile(
    r"(?:[≤≥<>=~]|\bunder|\bat most|\bat least|\bup to|\bwithin|\bover|\bpast|\babove"
    r"|\bbelow|\bmore than|\bless than|\blonger than|\bbeyond|\bno later than|\bevery"
    r"|\bfor|\btarget\b[^.;|]*|\bfloor\b[^.;|]*)"
    r"\s*(?:about\s+|roughly\s+)?$",
    re.IGNORECASE,
)
BOUND_AFTER = re.compile(
    r"^\s*(?:cap|caps|limit|deadline|timeouts?|interval|bound|budget|by default|default"
    r"|apart|later|at a time|of idleness|or more|or less|or over)\b",
    re.IGNORECASE,
)
SCALE = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "second": 1}
SIZES = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


@functools.cache
def declared_quantities() -> frozenset[float]:
    """Seconds and bytes the code declares: settings' defaults and the wire's bounds."""
    values = {
        float(value)
        for key, value in DEFAULTS.items()
        if key.endswith(("_SECONDS", "_BYTES")) and isinstance(value, int | float)
    }
    return frozenset(values | {float(wire.MAX_MESSAGE_BYTES)})


@functools.cache
def package_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "beammcp_django").rglob("*.py"))


def names_a_constant(after: str) -> bool:
    """The figure is followed by the name of a constant the package defines, in code:
    "once a call has run 50 ms (`WATCH_AFTER_SECONDS`)" states the code, not a run."""
    match = re.match(r"\s*\(?`([A-Z][A-Z0-9_]{2,})`", after)
    return (
        bool(match) and re.search(rf"^\s*{match[1]}\b[^=\n]*=", package_source(), re.M) is not None
    )


def in_seconds_or_bytes(token: str) -> float | None:
    match = re.match(r"([\d,]+(?:\.\d+)?)\s?(\w+)", token.lstrip("+-"))
    if not match:
        return None
    number, unit = float(match[1].replace(",", "")), match[2]
    unit = unit.rstrip("s") if unit.endswith(("seconds", "second")) else unit
    if unit in SCALE:
        return number * SCALE[unit]
    if unit in SIZES:
        return number * SIZES[unit]
    return None


def prose(text: str) -> str:
    """The text a reader reads as prose: code spans and link targets blanked, same length."""
    text = re.sub(r"`[^`]*`", lambda m: " " * len(m[0]), text)
    return re.sub(r"\]\([^)]*\)", lambda m: "]" + " " * (len(m[0]) - 1), text)


def figures(text: str, header_has_unit: bool = False) -> list[str]:
    """The measured figures in one paragraph or table row (see the module docstring)."""
    plain = prose(text)
    found = []
    for match in FIGURE.finditer(plain):
        token = match[0]
        before, after = plain[max(0, match.start() - 40) : match.start()], plain[match.end() :]
        if BOUND_BEFORE.search(before) or BOUND_AFTER.match(after):
            continue
        if names_a_constant(text[match.end() :]):
            continue
        value = in_seconds_or_bytes(token)
        if value is not None and any(abs(value - d) < 1e-9 for d in declared_quantities()):
            continue
        found.append(token)
    if header_has_unit:
        cells = plain.split("|")[2:]  # the first cell names the row
        found.extend(m[0] for cell in cells for m in BARE_NUMBER.finditer(cell))
    return found


# --- provenance -------------------------------------------------------------------------

DATE = re.compile(r"\b(20\d\d-[01]\d-[0-3]\d)\b")
SCRIPT = re.compile(r"(?<![\w/])((?:bench|tests)/[\w/.-]+?\.(?:py|sh))\b")
SOURCE = re.compile(r"(?<![\w/])((?:bench|tests|beammcp_django)/[\w/.-]+?\.(?:py|sh))\b")
COMMIT = re.compile(r"\bcommits?\s+`?([0-9a-f]{7,40})\b|`([0-9a-f]{7,12})`")
HISTORY = re.compile(r"^[\W_]*history\b", re.IGNORECASE)  # the first word, "**" allowed
CODE = re.compile(r"`([^`]+)`")


@dataclass
class Unit:
    """A paragraph, a table row, or a fenced block, where it starts, and what covers it."""

    page: str
    line: int
    text: str
    kind: str  # "para", "row", "header", "fence", "heading"
    code: list[str] = field(default_factory=list)  # inline code, and a following fence's lines
    lead: Unit | None = None  # for a row or a fence: the paragraph before its table or block
    header_has_unit: bool = False

    def dates(self) -> list[str]:
        not_dates = {revisions.MODERN, revisions.LEGACY}
        return [d for d in DATE.findall(self.text) if d not in not_dates]

    def scripts(self) -> list[str]:
        return sorted({s for chunk in self.code for s in SCRIPT.findall(chunk)})

    def is_provenance(self) -> bool:
        return bool(self.dates()) and bool(self.scripts())

    def commits(self) -> list[str]:
        return [a or b for a, b in COMMIT.findall(self.text)]

    def watched(self) -> list[str]:
        """The paths whose change makes the figure stale: the bench scripts and package
        modules named; a test only when no bench script is (then the test measured it)."""
        named = {s for chunk in self.code for s in SOURCE.findall(chunk)}
        if any(path.startswith("bench/") for path in named):
            named = {path for path in named if not path.startswith("tests/")}
        return sorted(named)

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def units(page: str, text: str) -> list[Unit]:
    """The page cut into paragraphs, table rows and fenced blocks, each linked to the
    paragraph that leads it (a row's table, a fence, within the same stretch of blocks)."""
    found: list[Unit] = []
    lines = text.splitlines()
    lead: Unit | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.lstrip().startswith("```"):
            start, i = i, i + 1
            while i < len(lines) and not lines[i].lstrip().startswith("```"):
                i += 1
            body = "\n".join(lines[start + 1 : i])
            i += 1
            if lead is not None:
                lead.code.append(body)  # "Measured ...:" then the command's block
            found.append(Unit(page, start + 1, body, "fence", [body], lead))
            continue
        if line.startswith("#"):
            lead = None
            found.append(Unit(page, i + 1, line, "heading"))
            i += 1
            continue
        if line.lstrip().startswith("|"):
            start = i
            header = line
            has_unit = bool(HEADER_UNIT.search(prose(header)))
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                row = lines[i]
                kind = "header" if i == start else "row"
                if not re.fullmatch(r"[|:\-\s]+", row):
                    found.append(Unit(page, i + 1, row, kind, CODE.findall(row), lead, has_unit))
                i += 1
            continue
        start = i
        while (
            i < len(lines)
            and lines[i].strip()
            and not lines[i].lstrip().startswith(("```", "|"))
            and not lines[i].startswith("#")
        ):
            i += 1
        paragraph = "\n".join(lines[start:i])
        spans = [" ".join(span.split()) for span in CODE.findall(paragraph)]
        unit = Unit(page, start + 1, paragraph, "para", spans)
        lead = unit
        found.append(unit)
    return found


def covering(unit: Unit) -> Unit | None:
    """The provenance that covers a unit's figures: its own, else its table's lead's."""
    if unit.is_provenance():
        return unit
    if unit.kind in ("row", "header", "fence") and unit.lead and unit.lead.is_provenance():
        return unit.lead
    return None


def uncovered(all_pages: dict[str, str]) -> list[str]:
    """Every figure no provenance covers, as "page:line: figures | the text"."""
    problems = []
    for page, text in all_pages.items():
        for unit in units(page, text):
            if unit.kind in ("fence", "heading", "header"):
                continue
            found = figures(unit.text, unit.kind == "row" and unit.header_has_unit)
            if found and covering(unit) is None:
                snippet = " ".join(unit.text.split())[:160]
                problems.append(f"{unit.where()}: {', '.join(found[:6])} | {snippet}")
    return problems


# --- provenance held to the tree ------------------------------------------------------


# The package's modules that moved, as CHANGELOG.md's "Moved" table lists them (was, is now).
MOVED_ROW = re.compile(r"^\| `(beammcp_django[\w.]*)` \| `(beammcp_django[\w.]*)` \|$", re.M)


@functools.cache
def moves() -> dict[str, str]:
    return dict(MOVED_ROW.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8")))


def moved(text: str) -> str:
    """``text`` with every module path of CHANGELOG.md's moves (dotted, or as a file path)
    rewritten to where the module is now."""
    table = moves()
    paths = {
        old.replace(".", "/") + ".py": new.replace(".", "/") + ".py" for old, new in table.items()
    }
    names = "|".join(re.escape(name) for name in sorted([*table, *paths], key=len, reverse=True))
    return re.sub(rf"(?<![\w./])({names})(?![\w/])", lambda m: {**table, **paths}[m[1]], text)


class _Imports(ast.NodeTransformer):
    """Drops import statements and docstrings, noting the names the imports bind."""

    def __init__(self) -> None:
        self.bound: set[str] = set()

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> ast.AST:
        self.bound.update(alias.asname or alias.name for alias in node.names)
        return ast.Pass()

    visit_ImportFrom = visit_Import

    def generic_visit(self, node: ast.AST) -> ast.AST:
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            body[0] = ast.Pass()
        return super().generic_visit(node)


def measured_code(text: str) -> tuple[str, frozenset[str]]:
    """What a script runs, less where its imports come from and its docstrings: the AST
    without them, and the names the imports bind."""
    imports = _Imports()
    tree = imports.visit(ast.parse(text))
    return ast.dump(tree), frozenset(imports.bound)


def only_moved(commit: str, path: str, root: Path = ROOT) -> bool:
    """Whether ``path`` differs from what it was at ``commit`` only as the package's moves
    made it: the same names imported from where their modules now live, docstrings naming
    the new paths. That script measures the same code: its figures stand."""
    if not path.endswith(".py"):
        return False
    then = git("show", f"{commit}:{path}", root=root)
    if then.returncode != 0:
        return False
    now = (root / path).read_text(encoding="utf-8")
    return measured_code(moved(then.stdout)) == measured_code(now)


def git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def commit_problems(unit: Unit, root: Path = ROOT) -> list[str]:
    """A provenance's commits against the clone: present; and every path it watches as it
    was at one of them (a paragraph may state two runs, each with its commit), unchanged
    since unless the paragraph is a history."""
    problems = []
    bench = [s for s in unit.scripts() if s.startswith("bench/")]
    commits = unit.commits()
    if bench and not commits:
        problems.append(f"{unit.where()}: names {bench[0]} but no commit it was measured at")
    present = []
    for commit in commits:
        if git("cat-file", "-e", f"{commit}^{{commit}}", root=root).returncode != 0:
            problems.append(
                f"{unit.where()}: commit {commit} is not in this clone (a squash or a shallow "
                "clone loses it: name a commit that is on main)"
            )
        else:
            present.append(commit)
    if not present:
        return problems
    for path in unit.watched():
        had_it = [
            c for c in present if git("cat-file", "-e", f"{c}:{path}", root=root).returncode == 0
        ]
        if not had_it:
            problems.append(
                f"{unit.where()}: {path} is in none of the commits {', '.join(present)}"
            )
            continue
        if HISTORY.match(unit.text.lstrip("| ")):
            continue
        same = [git("diff", "--quiet", c, "HEAD", "--", path, root=root) for c in had_it]
        if all(diff.returncode != 0 for diff in same) and not any(
            only_moved(c, path, root) for c in had_it
        ):
            changes = git("log", "--format=%h", f"{had_it[-1]}..HEAD", "--", path, root=root)
            since = " ".join(changes.stdout.split()[:5])
            problems.append(
                f"{unit.where()}: {path} changed since {had_it[-1]} ({since}): re-measure, "
                "or label it history"
            )
    return problems


def path_problems(unit: Unit, root: Path = ROOT) -> list[str]:
    """A provenance's scripts exist, and its bench commands' options are the script's."""
    problems = []
    for script in unit.scripts():
        if not (root / script).is_file():
            problems.append(f"{unit.where()}: {script} does not exist")
    for chunk in unit.code:
        for line in chunk.splitlines():
            for script in SCRIPT.findall(line):
                if not script.startswith("bench/") or not (root / script).is_file():
                    continue
                source = (root / script).read_text(encoding="utf-8")
                tail = line.split(script, 1)[1]
                for option in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", tail):
                    if f'"{option}"' not in source:
                        problems.append(f"{unit.where()}: {script} has no option {option}")
    return problems


def provenances(all_pages: dict[str, str]) -> list[Unit]:
    return [u for page, text in all_pages.items() for u in units(page, text) if u.is_provenance()]


# --- the pages --------------------------------------------------------------------------


def test_the_pages_hold_figures_and_provenances_at_all():
    """Guards the recognizer against going blind (a regex that matches nothing passes)."""
    all_pages = pages()
    measured = [u for p, t in all_pages.items() for u in units(p, t) if figures(u.text)]
    assert len(measured) >= 30
    assert len(provenances(all_pages)) >= 20


def test_every_figure_in_the_docs_is_covered_by_a_dated_command():
    assert uncovered(pages()) == []


def test_every_provenance_names_scripts_that_exist_with_options_they_take():
    assert [p for u in provenances(pages()) for p in path_problems(u)] == []


def test_every_current_figure_was_measured_with_the_code_it_names_as_it_is_now():
    if git("rev-parse", "--is-inside-work-tree").returncode != 0:
        raise AssertionError(f"{ROOT} is not a git checkout: the provenance commits need it")
    assert [p for u in provenances(pages()) for p in commit_problems(u)] == []


# --- the audit seen to fail ------------------------------------------------------------


def test_an_unattributed_figure_is_reported_and_settings_and_limits_are_not():
    page = (
        "## A section\n\n"
        "Refuses bodies over the 1 MiB cap, nests to 64 levels, and reads for at most 15 s\n"
        "(`BODY_READ_TIMEOUT_SECONDS`, 15 s by default; a 1-s deadline in the tests).\n\n"
        "A call takes 3.2 ms, 2.4x the baseline, and 12% more memory (91.5 MiB).\n\n"
        "Those pauses made the p99 (about 60 ms against a median of 9 ms), in the run above.\n"
    )
    problems = uncovered({"docs/x.md": page})
    assert len(problems) == 2, problems
    assert problems[0].startswith("docs/x.md:6: 3.2 ms, 2.4x, 12%, 91.5 MiB | A call takes")
    assert problems[1].startswith("docs/x.md:8: 60 ms, 9 ms | Those pauses")


def test_a_table_with_a_unit_in_its_header_needs_its_provenance():
    table = "| server | calls/s |\n|---|---:|\n| SQLite | 115 |\n"
    assert uncovered({"docs/x.md": "Some load:\n\n" + table}) == [
        "docs/x.md:5: 115 | | SQLite | 115 |"
    ]
    lead = "Measured 2026-12-01, commit `325f5bb`:\n\n```\n.venv/bin/python bench/orm.py\n```\n\n"
    assert uncovered({"docs/x.md": lead + table}) == []


def test_removing_one_provenance_from_the_performance_page_is_caught():
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    provenance = next(u for u in units("docs/performance.md", text) if u.is_provenance())
    stripped = text.replace(provenance.text, DATE.sub("some day", provenance.text), 1)
    problems = uncovered({"docs/performance.md": stripped})
    assert problems and all(p.startswith("docs/performance.md:") for p in problems)


def test_a_missing_script_a_wrong_option_and_an_unknown_commit_are_reported():
    text = (
        "Measured 2026-12-01, commit `0000000`: `.venv/bin/python bench/nothing.py`, and\n"
        "`.venv/bin/python bench/decode.py --no-such-option`: 3.2 ms.\n"
    )
    (unit,) = units("docs/x.md", text)
    assert path_problems(unit) == [
        "docs/x.md:1: bench/nothing.py does not exist",
        "docs/x.md:1: bench/decode.py has no option --no-such-option",
    ]
    assert commit_problems(unit) == [
        "docs/x.md:1: commit 0000000 is not in this clone (a squash or a shallow clone loses "
        "it: name a commit that is on main)"
    ]


def test_a_current_figure_whose_script_changed_since_its_commit_is_stale_and_a_history_is_not():
    # bench/http.py changed after 9e08bea (the first full HTTP run's commit): the git log says.
    changed = git("log", "--format=%h", "9e08bea..HEAD", "--", "bench/http.py").stdout.split()
    assert changed
    current = "Measured 2026-11-29, commit `9e08bea`: `bench/http.py --rounds 5`: 3,536 req/s."
    (unit,) = units("docs/x.md", current)
    (problem,) = commit_problems(unit)
    assert problem.startswith("docs/x.md:1: bench/http.py changed since 9e08bea (")
    (history,) = units("docs/x.md", "History: " + current)
    assert commit_problems(history) == []
    (no_commit,) = units("docs/x.md", "Measured 2026-11-29: `bench/http.py`: 3,536 req/s.")
    assert commit_problems(no_commit) == [
        "docs/x.md:1: names bench/http.py but no commit it was measured at"
    ]


def test_a_script_changed_only_by_the_moves_measures_the_same_code_and_no_other_change_does():
    then = (
        '"""Times ``beammcp_django.host_calls.run_sync_host``."""\n'
        "from beammcp_django import host_calls\n"
        "from beammcp_django.connectome import canonical, diff\n"
        'LABEL = ("beammcp_django/host_calls.py", "the hook")\n'
        "ROUNDS = 5\n"
    )
    now = (
        '"""Times the thread runner."""\n'
        "from beammcp_django.connectome.core import canonical, diff\n"
        "from beammcp_django.runtime import host_threads as host_calls\n"
        'LABEL = ("beammcp_django/runtime/host_threads.py", "the hook")\n'
        "ROUNDS = 5\n"
    )
    assert moves()["beammcp_django.host_calls"] == "beammcp_django.runtime.host_threads"
    assert measured_code(moved(then)) == measured_code(now)
    assert measured_code(moved(then)) != measured_code(now.replace("ROUNDS = 5", "ROUNDS = 3"))
    assert measured_code(moved(then)) != measured_code(now.replace("as host_calls", ""))
    assert measured_code(then) != measured_code(now)  # the label's path: moved, not ignored
