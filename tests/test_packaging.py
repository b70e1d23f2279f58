"""What a user installs: the sdist and wheel built from this tree, held to what the package is.

The build is real (``python -m build``, setuptools in an isolated environment, as pip builds
it for a user), and what it produced is read back: the license travels with both archives,
every file of the package is in the wheel, the classifiers claim exactly the Python and Django
versions that ``tests/run.sh`` runs the suite on, and ``Requires-Dist`` is exactly the set of
third-party distributions the package imports, so an import without its requirement, or a
requirement nothing imports any more, fails here rather than on a user's machine.
"""

from __future__ import annotations

import ast
import email.parser
import email.policy
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from importlib.metadata import packages_distributions, version
from pathlib import Path

import django
import pytest
import trove_classifiers
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "beammcp_django"
RUN_SH = ROOT / "tests" / "run.sh"
BASE_REQUIREMENTS = ROOT / "requirements" / "base.txt"

# Run-time dependencies the package needs without importing them by name (a parser that a
# server loads by name, for example), each with the reason. Every other requirement must be
# imported somewhere in beammcp_django/.
NOT_IMPORTED_BY_NAME: dict[str, str] = {}

# Imports tried only where Django lacks what they provide, so that their distribution may be
# absent from a leg: the Tasks framework's backport (behind the `tasks` extra), imported when
# `django.tasks` is not there (Django 5.2), and not installed on Django 6.x.
ABSENT_ON_SOME_LEGS: dict[str, str] = {"django_tasks": "django-tasks"}

# `leg NAME PYTHON DJANGO VENV` lines of tests/run.sh: the versions CI runs the suite on.
LEG = re.compile(r"^\s*leg\s+(\S+)\s+(3\.\d+)\s+(\d+\.\d+)\.\d+\s", re.MULTILINE)


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path
    metadata: email.message.Message

    @property
    def requirements(self) -> list[Requirement]:
        return [Requirement(line) for line in self.metadata.get_all("Requires-Dist", [])]

    def wheel_names(self) -> set[str]:
        with zipfile.ZipFile(self.wheel) as archive:
            return set(archive.namelist())

    def dist_info(self) -> str:
        (name,) = {n.split("/")[0] for n in self.wheel_names() if ".dist-info/" in n}
        return name


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"python -m build failed:\n{run.stdout[-4000:]}\n{run.stderr}"
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata_name).decode("utf-8")
    metadata = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    return Built(sdist, wheel, metadata)


def legs() -> list[tuple[str, str, str]]:
    """(name, Python X.Y, Django X.Y) of every leg tests/run.sh runs."""
    found = LEG.findall(RUN_SH.read_text(encoding="utf-8"))
    assert found, "tests/run.sh declares no `leg NAME PYTHON DJANGO VENV` line"
    return found


def _guards_import_error(node: ast.Try) -> bool:
    """A ``try`` whose handlers catch a failed import: what it imports is optional."""
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(
            isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"}
            for n in names
        ):
            return True
    return False


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@dataclass
class Imports:
    """Top-level names of the absolute, third-party imports in beammcp_django/, each with the
    files that import it, by where the import runs."""

    at_module_level: dict[str, set[str]]  # when the module is imported: must be installed
    in_a_function: dict[str, set[str]]  # when the function is called (a lazy import)
    guarded: dict[str, set[str]]  # inside a ``try`` that catches ImportError: optional

    def everything(self) -> dict[str, set[str]]:
        merged: dict[str, set[str]] = {}
        for found in (self.at_module_level, self.in_a_function, self.guarded):
            for top, sources in found.items():
                merged.setdefault(top, set()).update(sources)
        return merged


# Modules that exist for an extra alone and are imported only where it is installed (the
# host's URLconf includes server_urls): their module-level imports count as lazy, and no
# module of the package imports them at module level (held below).
EXTRA_ONLY_MODULES = {
    "beammcp_django/oauth/server_urls.py": "beammcp_django.oauth.server_urls",
}


def third_party_imports() -> Imports:
    """Walks every module's AST; imports under ``if TYPE_CHECKING`` never run: left out."""
    imports = Imports({}, {}, {})
    local = {PACKAGE.name, "__future__"}

    def visit(node: ast.AST, source: str, where: dict[str, set[str]]) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, source, where)
            return
        if isinstance(node, ast.Try | ast.TryStar) and _guards_import_error(node):
            for child in node.body:
                visit(child, source, imports.guarded)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, source, where)
            return
        function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if function and where is imports.at_module_level:
            where = imports.in_a_function
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in local:
                where.setdefault(top, set()).add(source)
        for child in ast.iter_child_nodes(node):
            visit(child, source, where)

    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        source = path.relative_to(ROOT).as_posix()
        lazy = source in EXTRA_ONLY_MODULES
        visit(tree, source, imports.in_a_function if lazy else imports.at_module_level)
    return imports


def test_no_module_imports_an_extra_only_module_at_module_level():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [(path.name, n) for n in names if n in EXTRA_ONLY_MODULES.values()]
    assert found == []


def distributions_of(imports: dict[str, set[str]], declared: set[str]) -> dict[str, set[str]]:
    """The installed distribution (canonical name) behind each imported top-level name."""
    providers = packages_distributions()
    found: dict[str, set[str]] = {}
    for top, sources in imports.items():
        candidates = {canonicalize_name(d) for d in providers.get(top, [])}
        if not candidates and top in ABSENT_ON_SOME_LEGS:
            candidates = {canonicalize_name(ABSENT_ON_SOME_LEGS[top])}
        assert candidates, (
            f"`{top}` is imported by {sorted(sources)} but no installed distribution provides "
            "it: add its distribution to install_requires (and requirements/base.txt)"
        )
        # A namespace shared by several distributions: the declared one is the provider.
        chosen = (candidates & declared) or candidates
        assert len(chosen) == 1, f"`{top}` is provided by several distributions: {chosen}"
        found.setdefault(chosen.pop(), set()).update(sources)
    return found


def test_the_license_travels_in_the_sdist_and_the_wheel(built: Built):
    license_text = (ROOT / "LICENSE").read_bytes()
    assert license_text.lstrip().startswith(b"Apache License\n")
    assert b"Version 2.0, January 2004" in license_text
    assert built.metadata["License"] == "Apache-2.0"
    assert built.metadata.get_all("License-File") == ["LICENSE"]
    with zipfile.ZipFile(built.wheel) as archive:
        assert archive.read(f"{built.dist_info()}/licenses/LICENSE") == license_text
    with tarfile.open(built.sdist) as archive:
        (member,) = [
            m
            for m in archive.getmembers()
            if m.name.count("/") == 1 and m.name.endswith("/LICENSE")
        ]
        extracted = archive.extractfile(member)
        assert extracted is not None and extracted.read() == license_text


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(built: Built):
    on_disk = {
        path.relative_to(ROOT).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    in_wheel = {name for name in built.wheel_names() if name.startswith(f"{PACKAGE.name}/")}
    assert any(name.startswith(f"{PACKAGE.name}/templates/") for name in in_wheel)
    assert in_wheel == on_disk, {
        "missing from the wheel": sorted(on_disk - in_wheel),
        "in the wheel, not in the tree": sorted(in_wheel - on_disk),
    }


def test_the_classifiers_claim_exactly_the_versions_ci_tests(built: Built):
    classifiers = built.metadata.get_all("Classifier", [])
    assert set(classifiers) <= trove_classifiers.classifiers, "PyPI refuses an unknown one"
    claimed_python = {
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    claimed_django = {
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if re.fullmatch(r"Framework :: Django :: \d+\.\d+", c)
    }
    tested = legs()
    assert claimed_python == {python for _, python, _ in tested}
    assert claimed_django == {django_version for _, _, django_version in tested}
    lowest = min(claimed_python, key=lambda v: tuple(map(int, v.split("."))))
    assert built.metadata["Requires-Python"] == f">={lowest}"
    # This run is one of those legs: the versions it claims are the ones running it.
    running = (
        f"{sys.version_info[0]}.{sys.version_info[1]}",
        f"{django.VERSION[0]}.{django.VERSION[1]}",
    )
    assert running in {(python, django_version) for _, python, django_version in tested}


def test_install_requires_is_exactly_what_the_package_imports(built: Built):
    """Every import has its requirement and every requirement is imported. A distribution
    behind an extra may be imported lazily (in a function, or guarded by ImportError), never
    at module level, where a user without the extra would fail on import."""
    unconditional = {canonicalize_name(r.name) for r in built.requirements if r.marker is None}
    with_extra = {canonicalize_name(r.name) for r in built.requirements if r.marker is not None}
    imports = third_party_imports()
    declared = unconditional | with_extra
    imported = distributions_of(imports.everything(), declared)
    at_module_level = distributions_of(imports.at_module_level, declared)
    not_imported = {canonicalize_name(name) for name in NOT_IMPORTED_BY_NAME}

    assert set(imported) <= declared, {
        "imported without a requirement": {
            d: sorted(s) for d, s in imported.items() if d not in declared
        }
    }
    assert unconditional - not_imported <= set(imported), {
        "required, never imported": sorted(unconditional - not_imported - set(imported))
    }
    assert with_extra <= set(imported), {
        "extra, never imported": sorted(with_extra - set(imported))
    }
    assert set(at_module_level) <= unconditional, {
        "behind an extra, imported at module level": {
            d: sorted(s) for d, s in at_module_level.items() if d not in unconditional
        }
    }
    assert not_imported.isdisjoint(imported), "NOT_IMPORTED_BY_NAME lists an imported one"


def _pins() -> list[Requirement]:
    pins = []
    for raw in BASE_REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            pins.append(Requirement(line))
    return pins


def test_requirements_base_pins_install_requires_for_every_leg(built: Built):
    """requirements/base.txt is install_requires pinned: the same distributions, and on each
    leg's interpreter exactly one pin for each, inside the range the wheel declares."""
    declared = {canonicalize_name(r.name): r for r in built.requirements if r.marker is None}
    pins = _pins()
    assert {canonicalize_name(p.name) for p in pins} == set(declared)
    for name, python, django_version in legs():
        environment = {"python_version": python, "python_full_version": f"{python}.0"}
        applying = [p for p in pins if p.marker is None or p.marker.evaluate(environment)]
        by_name = {canonicalize_name(p.name): p for p in applying}
        assert len(by_name) == len(applying), f"{name}: two pins apply to one distribution"
        assert set(by_name) == set(declared), f"{name}: {set(declared) - set(by_name)} unpinned"
        for dist, pin in by_name.items():
            (exact,) = [s.version for s in pin.specifier if s.operator == "=="]
            assert declared[dist].specifier.contains(exact), (
                f"{name}: {pin} outside {declared[dist]}"
            )
            if dist == "django":
                assert ".".join(exact.split(".")[:2]) == django_version, f"{name}: {pin}"


def test_this_environment_satisfies_what_the_wheel_requires(built: Built):
    for requirement in built.requirements:
        if requirement.marker is None:
            installed = version(requirement.name)
            assert requirement.specifier.contains(installed, prereleases=True), (
                f"{requirement.name} {installed} installed, the wheel requires {requirement}"
            )
