"""The declared graph: what the catalog's entries can reach, read from the host's source.

Nodes: the server, every tool, resource, template and prompt, and every function of the
modules in scope (``level "mfa"``). Edges (all ``provenance "declared"``, ``sign "unset"``):
the server to each entry (``invoke``; ``read`` for resources), each entry to its handler, and
each call between functions that static reading resolves.

A call in one of the effect shapes (``effect_shapes``: the ORM, raw SQL, mail, the network,
files, processes, the cache) is an edge of kind ``effect`` to the effect's node instead.

Static reading resolves a call when its callee is a name bound in the module (a function, a
class, an import) or an attribute of an imported module or of ``self`` naming a method of the
enclosing class. Everything else is listed in the *completeness bound* beside the graph,
never guessed: calls through variables or expressions, ``getattr``, ``importlib`` and
``__import__``, callees outside the scope (imports from other packages), modules that failed
to parse. Builtins are neither edges nor bound entries: they are not host code.

Python counterparts of the original's ids: a module is its dotted import path, a function
is ``<module>/<qualified name>/<arity>`` where the arity counts the positional parameters of
the definition, ``self`` included.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.connectome.core import effects
from beammcp_django.connectome.core.canonical import Edge, Graph, Node, node_id
from beammcp_django.connectome.core.effect_shapes import ShapeReader
from beammcp_django.protocol.catalog import ENTRY_KINDS, KIND_OF_TAG

_BUILTINS = frozenset(dir(builtins))
_DYNAMIC_IMPORTS = frozenset({"importlib.import_module", "__import__", "import_module"})


@dataclass(frozen=True)
class Unresolved:
    """One thing static reading could not resolve: where, what kind, and a short detail."""

    where: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Declared:
    graph: Graph
    bound: Sequence[Unresolved] = field(default_factory=tuple)


# The server edge from an entry to its handler, by the entry's tag.
EDGE_OF_TAG = {"tool": "invoke", "resource": "read", "prompt": "invoke"}


def handler_function(catalog: Any, spec: Any, tag: str) -> Any:
    """The host function serving one entry: the site's handler for it (the class's ``call``,
    ``read`` or ``get``), or the catalog's own method; unwrapped to the plain function."""
    handlers = getattr(catalog, "handlers", None)
    method = KIND_OF_TAG[tag].handler  # the catalog method serving each kind of entry
    handler = handlers(spec) if callable(handlers) else getattr(catalog, method)
    return inspect.unwrap(getattr(handler, "__func__", handler))


def _spec(module: str) -> Any:
    """The import spec of ``module``, or None (find_spec raises when a parent is no package)."""
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def _arity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return len(node.args.posonlyargs) + len(node.args.args)


class _ModuleReader(ast.NodeVisitor):
    """Functions of one module and the calls inside them, resolved against its bindings."""

    def __init__(self, module: str, scope: Sequence[str]) -> None:
        self.module = module
        self.scope = scope
        self.functions: dict[str, int] = {}  # qualname -> arity
        self.definitions: dict[str, ast.AST] = {}  # qualname -> its def
        self.classes: set[str] = set()
        self.imports: dict[str, str] = {}  # local name -> dotted target
        self.calls: list[tuple[str, ast.Call, str | None]] = []  # caller, call, class

    def in_scope(self, dotted: str) -> bool:
        return any(dotted == root or dotted.startswith(root + ".") for root in self.scope)

    def resolve(self, dotted: str) -> str | None:
        """A dotted name as written here, through the imports and the module's own
        definitions, to its dotted target; None for a local variable or a builtin."""
        head, _, rest = dotted.partition(".")
        if head in self.imports:
            return self.imports[head] + (f".{rest}" if rest else "")
        if head in self.classes or head in self.functions:
            return f"{self.module}.{dotted}"
        return None

    def read(self, tree: ast.Module) -> None:
        for statement in tree.body:
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imports[local] = alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                for alias in statement.names:
                    self.imports[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        self._define(tree.body, prefix="", owner=None)

    def _define(self, body: Iterable[ast.stmt], prefix: str, owner: str | None) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + statement.name
                self.functions[qualname] = _arity(statement)
                self.definitions[qualname] = statement
                for inner in ast.walk(statement):
                    if isinstance(inner, ast.Call):
                        self.calls.append((qualname, inner, owner))
            elif isinstance(statement, ast.ClassDef):
                qualname = prefix + statement.name
                self.classes.add(qualname)
                self._define(statement.body, prefix=qualname + ".", owner=qualname)


def _dotted(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        base = _dotted(expression.value)
        return f"{base}.{expression.attr}" if base else None
    return None


class DeclaredBuilder:
    """Builds the declared graph of a catalog over the modules in ``scope`` (dotted names of
    packages or modules whose source is read)."""

    def __init__(
        self,
        server: str,
        scope: Sequence[str],
        model_label: Callable[[str], str | None] = lambda dotted: None,
        kind_label: Callable[[str], str | None] = lambda dotted: None,
    ) -> None:
        self.server = server
        self.scope = tuple(scope)
        self.model_label = model_label
        self.kind_label = kind_label
        self.shapes: dict[str, ShapeReader] = {}
        self.nodes: dict[str, Node] = {}
        self.edges: dict[tuple[str, str, str, str], Edge] = {}
        self.bound: list[Unresolved] = []
        self.readers: dict[str, _ModuleReader | None] = {}
        # The server's node comes first and is there even for a catalog with no entry.
        self._node(node_id(server, "server"), "server", "server")

    # -- nodes and edges -------------------------------------------------------------------

    def _node(self, identity: str, kind: str, level: str) -> str:
        self.nodes.setdefault(identity, Node(identity, kind, level))
        return identity

    def _edge(self, source: str, target: str, kind: str = "invoke") -> None:
        edge = Edge(source, target, kind, "declared")
        self.edges.setdefault(edge.key, edge)

    def function_id(self, module: str, qualname: str, arity: int) -> str:
        return node_id(self.server, "module", module, qualname, arity)

    # -- reading modules ----------------------------------------------------------------------

    def reader(self, module: str) -> _ModuleReader | None:
        if module in self.readers:
            return self.readers[module]
        reader: _ModuleReader | None = None
        spec = _spec(module)
        origin = spec.origin if spec is not None else None
        if origin is None or not origin.endswith(".py"):
            self.bound.append(Unresolved(module, "no source", "the module has no Python source"))
        else:
            try:
                with open(origin, encoding="utf-8") as source:  # noqa: PTH123 - a spec origin
                    tree = ast.parse(source.read(), filename=origin)
            except (OSError, SyntaxError, UnicodeDecodeError) as error:
                self.bound.append(Unresolved(module, "did not parse", type(error).__name__))
            else:
                reader = _ModuleReader(module, self.scope)
                reader.read(tree)
        self.readers[module] = reader
        return reader

    def _locate(self, dotted: str) -> tuple[str, str] | None:
        """(module, qualname) of a dotted name in scope, trying the longest module prefix."""
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module, qualname = ".".join(parts[:cut]), ".".join(parts[cut:])
            if _spec(module) is None:
                continue
            reader = self.reader(module)
            if reader is not None and (qualname in reader.functions or qualname in reader.classes):
                return module, qualname
        return None

    def _function_node(self, module: str, qualname: str) -> str | None:
        reader = self.reader(module)
        if reader is None:
            return None
        if qualname in reader.classes:
            qualname = f"{qualname}.__init__"
        if qualname not in reader.functions:
            return None
        return self._node(
            self.function_id(module, qualname, reader.functions[qualname]), "module", "mfa"
        )

    def read_module(self, module: str) -> None:
        """Add every function of ``module`` and the calls between functions it resolves."""
        reader = self.reader(module)
        if reader is None:
            return
        for qualname in reader.functions:
            self._function_node(module, qualname)
        for caller, call, owner in reader.calls:
            if self._effects(reader, module, caller, call):
                continue
            source = self.function_id(module, caller, reader.functions[caller])
            self._call(reader, module, source, call, owner)

    def _effects(self, reader: _ModuleReader, module: str, caller: str, call: ast.Call) -> bool:
        """Edges from the calling function to the effects ``call`` has; whether it had any."""
        shapes = self.shapes.get(module)
        if shapes is None:
            shapes = self.shapes[module] = ShapeReader(
                reader.resolve, self.model_label, self.kind_label
            )
        found = shapes.effects(call, reader.definitions[caller])
        source = self.function_id(module, caller, reader.functions[caller])
        for effect in found:
            target = self._node(effect.node(self.server), effects.KIND, effects.LEVEL)
            self._edge(source, target, effects.EDGE_KIND)
        return bool(found)

    def _call(
        self, reader: _ModuleReader, module: str, source: str, call: ast.Call, owner: str | None
    ) -> None:
        dotted = _dotted(call.func)
        if dotted is None:
            self.bound.append(
                Unresolved(source, "call through an expression", ast.unparse(call.func)[:80])
            )
            return
        head, _, rest = dotted.partition(".")
        if dotted == "getattr":
            self.bound.append(Unresolved(source, "getattr", ast.unparse(call)[:80]))
            return
        if head == "self" and owner is not None and rest and "." not in rest:
            target = self._function_node(module, f"{owner}.{rest}")
            if target is not None:
                self._edge(source, target)
            else:
                self.bound.append(Unresolved(source, "call through an attribute", dotted))
            return
        if head in reader.imports:
            resolved = reader.imports[head] + (f".{rest}" if rest else "")
        elif not rest and (head in reader.functions or head in reader.classes):
            target = self._function_node(module, head)
            if target is not None:
                self._edge(source, target)
            return
        elif not rest and head in _BUILTINS:
            if head == "__import__":
                self.bound.append(Unresolved(source, "dynamic import", dotted))
            return
        else:
            self.bound.append(Unresolved(source, "call through a variable", dotted))
            return
        if resolved in _DYNAMIC_IMPORTS or resolved.startswith("importlib."):
            self.bound.append(Unresolved(source, "dynamic import", resolved))
            return
        if not reader.in_scope(resolved):
            self.bound.append(Unresolved(source, "callee outside the scope", resolved))
            return
        located = self._locate(resolved)
        target = self._function_node(*located) if located else None
        if target is None:
            self.bound.append(Unresolved(source, "unresolved name in scope", resolved))
            return
        self._edge(source, target)

    # -- the catalog -------------------------------------------------------------------------

    def add_entry(self, tag: str, name: str, function: Any, kind: str) -> None:
        """An entry node, the server's edge to it, and its edge to the handler function."""
        server = self._node(node_id(self.server, "server"), "server", "server")
        entry = self._node(node_id(self.server, tag, name), tag, "server")
        self._edge(server, entry, kind)
        module = getattr(function, "__module__", None)
        qualname = getattr(function, "__qualname__", None)
        if not module or not qualname or not self._in_scope(module):
            self.bound.append(
                Unresolved(entry, "handler outside the scope", f"{module}.{qualname}")
            )
            return
        self.read_module(module)
        target = self._function_node(module, qualname)
        if target is None:
            self.bound.append(
                Unresolved(entry, "handler not found in source", f"{module}.{qualname}")
            )
            return
        self._edge(entry, target)

    def _in_scope(self, module: str) -> bool:
        return any(module == root or module.startswith(root + ".") for root in self.scope)

    def result(self) -> Declared:
        graph = Graph(tuple(self.nodes.values()), tuple(self.edges.values()))
        ordered = sorted(set(self.bound), key=lambda u: (u.where, u.reason, u.detail))
        return Declared(graph, tuple(ordered))


def build_declared(
    catalog: Any,
    server: str,
    scope: Sequence[str],
    model_label: Callable[[str], str | None] = lambda dotted: None,
    kind_label: Callable[[str], str | None] = lambda dotted: None,
) -> Declared:
    """The declared graph of ``catalog`` (a site or any catalog object) over ``scope``;
    ``model_label`` tells a Django model's dotted name from any other (its ``app.Model``),
    so that the ORM's shapes become effects (``effect_shapes``), and ``kind_label`` a handle
    kind's class (its kind), so that ``context.handles`` calls name their kind."""
    builder = DeclaredBuilder(server, scope, model_label, kind_label)
    for kind in ENTRY_KINDS:
        for spec in getattr(catalog, kind.list):
            handler = handler_function(catalog, spec, kind.tag)
            builder.add_entry(kind.tag, spec.key, handler, EDGE_OF_TAG[kind.tag])
    for module in scope:
        if _spec(module) is not None:
            builder.read_module(module)
    return builder.result()
