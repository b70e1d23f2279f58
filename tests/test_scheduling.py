"""tests/run.sh runs pytest on workers (pytest-xdist), its scheduler tests/conftest.py's: each
module on one worker, so that a module-scoped server starts once. It once sorted the
collection it was given, while xdist sends a worker its tests as indexes into the worker's
own, unsorted collection: every test still ran once, but the modules were dealt out
scrambled, their servers started on every worker, and nothing failed to say so.

And the suite must still run without the plugin (``-p no:xdist``): a hook pytest has no
spec for is an error at start-up.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

import pytest

from tests.support import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

# Three small modules of sans-IO tests, the one of tests/conftest.py's FIRST_MODULES last.
FIRST = "tests/protocol/test_properties_wire.py"
MODULES = ("tests/protocol/test_cursor.py", "tests/protocol/test_wire.py", FIRST)


def pytest_run(*arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_each_module_runs_on_one_worker_the_first_modules_first():
    """Two workers, three modules: each worker is dealt one and then, xdist's rule, a second
    one at once; a FIRST_MODULES module, collected last, is still the first its worker runs."""
    ran = re.findall(r"^\[(gw\d+)\] .*? (tests/\S+?)::", pytest_run("-n", "2", *MODULES), re.M)
    workers: dict[str, set[str]] = defaultdict(set)
    runs: dict[str, list[str]] = defaultdict(list)
    for worker, module in ran:
        workers[module].add(worker)
        runs[worker] += [module] if module not in runs[worker] else []
    assert {module: len(on) for module, on in workers.items()} == dict.fromkeys(MODULES, 1)
    assert any(modules[0] == FIRST for modules in runs.values()), dict(runs)


def test_the_suite_runs_without_pytest_xdist():
    assert re.search(r"\d+ passed", pytest_run("-p", "no:xdist", MODULES[1]))
