"""The import rule between the package's layers, read from the source (every import statement,
at module level or inside a function, since a function-local import is still a dependency):

- ``protocol/`` (the sans-IO core) imports the standard library, its schema engines, PyYAML
  (a skill's frontmatter, with a safe loader) and itself: no Django, no transport, no server.
- ``transports/`` imports the standard library, the core, itself, the hook contract
  (``beammcp_django.authorization``, plain data) and redis-py (the shared session store's
  client): nothing of the Django glue, which hands a transport everything it needs (the
  server, the policy, the thread runner) as values.
- ``connectome/core/`` imports no Django and, of the package, only the core and itself.
- Everything else is the Django layer.
- No module of the package is part of an import circle, local imports included; nor is a
  folder: each top-level folder (with the folders inside it) and each top-level module is
  one node, and the arrows between them go one way.
- No module passes 650 lines.

A layer is a folder: a module belongs to the layer of the folder it is in, so a new module
is held to its folder's rule without being listed anywhere. ``docs/architecture.md`` states
the same rules and lists every module; a test holds the list.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "beammcp_django"
STANDARD = frozenset(sys.stdlib_module_names)
SCHEMA_ENGINES = frozenset({"jsonschema", "jsonschema_rs", "referencing", "re2"})
# What the core parses with besides JSON: a skill's YAML frontmatter (protocol/skills.py).
FORMATS = frozenset({"yaml"})
CONNECTOME_CORE = "beammcp_django.connectome.core"
DJANGO_FAMILY = frozenset({"django", "channels", "asgiref", "daphne", "uvicorn"})
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(module: str) -> Iterator[tuple[str, int]]:
    """(the absolute name of every module ``module`` imports, its line)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target == "__future__":
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in MODULES else target), node.lineno


def allowed(layer: str, name: str) -> bool:
    top = name.partition(".")[0]
    if layer == "connectome":
        if top in DJANGO_FAMILY:
            return False
        return top != "beammcp_django" or name.startswith(
            ("beammcp_django.protocol", CONNECTOME_CORE)
        )
    if layer == "protocol":
        return top in STANDARD | SCHEMA_ENGINES | FORMATS or name.startswith(
            "beammcp_django.protocol"
        )
    return (
        top in STANDARD
        or top == "redis"
        or name.startswith(("beammcp_django.protocol", "beammcp_django.transports"))
        or name == "beammcp_django.authorization"
    )


LAYERS = {
    "protocol": ("beammcp_django.protocol",),
    "transports": ("beammcp_django.transports",),
    "connectome": (CONNECTOME_CORE,),
}


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_what_the_rule_allows(layer):
    members = [module for module in MODULES if module.startswith(LAYERS[layer])]
    assert members
    wrong = [
        f"{module} line {line}: {name}"
        for module in members
        for name, line in imported(module)
        if not allowed(layer, name)
    ]
    assert wrong == []


def test_the_rule_is_not_vacuous():
    """The reader sees the imports it judges: the HTTP transport imports the core's server."""
    names = {name for name, _ in imported("beammcp_django.transports.http")}
    assert "beammcp_django.protocol.server" in names
    assert not allowed("transports", "django.conf")
    assert not allowed("protocol", "beammcp_django.transports.http")
    assert not allowed("connectome", "beammcp_django.models")
    assert allowed("connectome", "beammcp_django.connectome.core.canonical")


def test_no_module_is_in_an_import_circle():
    graph = {
        module: {name for name, _ in imported(module) if name in MODULES and name != module}
        for module in MODULES
    }
    circles = [component for component in strongly_connected(graph) if len(component) > 1]
    assert circles == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components of ``graph``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


MAX_LINES = 650


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_passes_the_size_bound():
    long = {
        module: lines_of(path) for module, path in MODULES.items() if lines_of(path) > MAX_LINES
    }
    assert long == {}


def folder_of(module: str) -> str:
    """The node a module is in: its top-level folder, or itself at the top level."""
    parts = module.split(".")
    if len(parts) > 2 or MODULES[module].name == "__init__.py":
        return ".".join(parts[:2])
    return module


def folder_graph(modules: dict[str, Path] = MODULES) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in modules:
        if ".migrations" in module:
            continue
        node = graph.setdefault(folder_of(module), set())
        node.update(
            folder_of(name)
            for name, _ in imported(module)
            if name in modules and ".migrations" not in name
        )
    for node, targets in graph.items():
        targets.discard(node)
    return graph


def test_no_folder_is_in_an_import_circle():
    circles = [c for c in strongly_connected(folder_graph()) if len(c) > 1]
    assert circles == []


def test_the_folder_rule_is_not_vacuous():
    """Folders are the nodes: the transports' sessions are the transports', a top-level
    module is its own, and the folders the HTTP endpoint reaches are there."""
    assert folder_of("beammcp_django.transports.sessions.store") == "beammcp_django.transports"
    assert folder_of("beammcp_django.conf") == "beammcp_django.conf"
    assert folder_of("beammcp_django.tasks") == "beammcp_django.tasks"
    graph = folder_graph()
    assert "beammcp_django.protocol" in graph["beammcp_django.transports"]
    assert "beammcp_django.tasks" in graph["beammcp_django.process"]
    assert lines_of(MODULES["beammcp_django.protocol.server"]) <= MAX_LINES


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def documented_modules() -> set[str]:
    """The modules ``docs/architecture.md``'s layout lists: each tree line's name, under the
    folders above it by indentation (two spaces a level)."""
    page = ARCHITECTURE.read_text(encoding="utf-8")
    tree = page.split("## The layout", 1)[1].split("```", 2)[1]
    folders: list[str] = []
    found = set()
    for line in tree.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        name = line.split()[0]
        del folders[depth:]
        if name.endswith("/"):
            folders.append(name.rstrip("/").replace("/", "."))
        elif name.endswith(".py"):
            found.add(".".join([*folders, name.removesuffix(".py")]))
    return found


def test_the_architecture_page_lists_every_module_and_no_other():
    listed = {
        module
        for module in MODULES
        if ".migrations." not in module and MODULES[module].name != "__init__.py"
    }
    assert documented_modules() == listed
