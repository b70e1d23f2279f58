"""Unsafe deserialization has no way in: the package never unpickles, evaluates or imports by
a name from the wire, and every dynamic attribute lookup takes its name from a fixed table.

A source scan of ``beammcp_django``: a new dynamic lookup fails this test until a reviewer
checks where its name comes from and adds it to the table below with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "beammcp_django"
UNSAFE_MODULES = {"pickle", "marshal", "shelve", "dill", "yaml", "cloudpickle"}
UNSAFE_BUILTINS = {"eval", "exec", "compile", "__import__"}
# The one module that may read YAML (a skill's frontmatter), held to the safe loader below.
YAML_READERS = {"protocol/frontmatter.py"}
# PyYAML's loaders and shortcuts that build Python objects from tags.
UNSAFE_YAML = {"Loader", "FullLoader", "UnsafeLoader", "unsafe_load", "full_load", "load_all"}

# (file, call as written): where each name comes from.
REVIEWED_DYNAMIC_CALLS = {
    # Dotted paths from settings (the host's configuration), never from a request.
    ("conf.py", "import_string(get_settings()['CATALOG'])"),
    ("checks/settings.py", "import_string(hook)"),
    ("servers/http_settings.py", "import_string(hook)"),
    ("servers/http_settings.py", "import_string(body_hook)"),
    ("servers/http_settings.py", "import_string(values['RATE_LIMIT'])"),
    ("management/commands/mcp_stdio.py", "import_string(values['RATE_LIMIT'])"),
    ("oauth/bearer.py", "import_string(server.tokens_path)"),  # OAUTH["TOKENS"]
    # OAUTH["JWT"]["PRINCIPAL"]: checked at startup, then built into the validator.
    ("oauth/jwt_settings.py", "import_string(path)"),
    ("oauth/jwt.py", "import_string(settings.principal_path)"),
    # settings.ASGI_APPLICATION, the project's own application (mcp_serve with DEBUG on).
    ("serving/plan.py", "import_string(configured)"),
    # BEAMMCP["CONNECTOME_EMAIL_BACKEND"]: the backend the observing mail wrapper hands on to.
    ("connectome/mail.py", "import_string(path)"),
    # Method names from the core's own tables (ENTRY_KINDS, _OBSERVED_AS), not the wire.
    ("protocol/methods/base.py", "getattr(self.catalog, name)"),
    ("protocol/methods/base.py", "getattr(catalog, name, None)"),
    # The catalog method serving a method that calls host code: a fixed table of four.
    ("protocol/methods/base.py", "getattr(self.catalog, _CATALOG_METHODS.get(method, ''), None)"),
    ("protocol/audit.py", "getattr(catalog, name, None)"),
    ("protocol/audit.py", "getattr(catalog, _HANDLERS[name], None)"),
    ("connectome/core/declared.py", "getattr(catalog, method)"),
    # List names from the catalog's one table of entry kinds (protocol/catalog.py ENTRY_KINDS).
    ("connectome/core/declared.py", "getattr(catalog, kind.list)"),
    ("connectome/exports.py", "getattr(catalog, kind.list)"),
    ("connectome/resources.py", "getattr(catalog, kind.list)"),
    ("connectome/core/observed.py", "getattr(catalog, KIND_OF_TAG[tag].list)"),
    # The user model's two relations that grant permissions, named in a fixed tuple.
    ("credential_signals.py", "getattr(user_model, field, None)"),
    # Field names from the declarations' own tables: the spec dataclasses' fields, and the
    # wire tables of protocol/catalog.py.
    ("registry.py", "getattr(cls, field.name)"),
    ("protocol/catalog.py", "getattr(declaration, attribute)"),
    # The annotation fields the audit holds: the keys of connectome/effects.py CONTRADICTS.
    ("connectome/core/annotations.py", "getattr(annotations, field, None)"),
    # Method names of the registry's declaration kinds ("call", "read", "get", "complete").
    ("registry.py", "getattr(declaration, method)"),
    ("registry.py", "getattr(kind, method)"),
    # A constant: the OpenTelemetry API's provider global, read without importing the SDK.
    ("observability/tracing.py", "getattr(trace, PROVIDER_GLOBAL, trace)"),
    ("observability/tracing.py", "getattr(trace, PROVIDER_GLOBAL, None)"),
    ("observability/host_spans.py", "getattr(trace, PROVIDER_GLOBAL, trace)"),
    ("observability/observers.py", "getattr(trace, PROVIDER_GLOBAL, trace)"),
    # A constant: the optional attribute a visibility gate may carry (protocol/access.py).
    ("protocol/access.py", "getattr(gate, QUICK_REFUSAL, None)"),
    # The test client's method names, each a literal in McpClient's class body.
    ("test.py", "getattr(AsyncMcpClient, name)"),
    ("test.py", "getattr(self.client, name)"),
}


def _sources() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "migrations" not in path.parts
    ]


def test_no_module_of_the_package_imports_a_deserializer_that_runs_code():
    found = []
    for name, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            found += [
                (name, m)
                for m in modules
                if m.split(".")[0] in UNSAFE_MODULES and not (m == "yaml" and name in YAML_READERS)
            ]
    assert found == []


def test_the_yaml_reader_uses_the_safe_loader_alone():
    """``protocol/frontmatter.py`` reads a SKILL.md's frontmatter with a subclass of PyYAML's
    ``SafeLoader`` (which makes no Python object from a tag) and names no other loader."""
    (tree,) = [tree for name, tree in _sources() if name in YAML_READERS]
    named = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "yaml"
    }
    assert not named & UNSAFE_YAML, named
    loads = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load"
    ]
    assert loads, "the scan no longer finds the frontmatter's yaml.load"
    for call in loads:
        (loader,) = [keyword.value for keyword in call.keywords if keyword.arg == "Loader"]
        assert isinstance(loader, ast.Name)
        (defined,) = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name == loader.id
        ]
        assert [ast.unparse(base) for base in defined.bases] == ["yaml.SafeLoader"]
    # Its constructors are SafeLoader's own, each behind a check that only refuses.
    added = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_constructor"
    ]
    assert sorted(added) == [f"tag:yaml.org,2002:{tag}" for tag in ("bool", "float", "int", "str")]


def test_no_module_of_the_package_evaluates_or_imports_code_by_a_computed_name():
    found = []
    for name, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            named = isinstance(node.func, ast.Name) and node.func.id in UNSAFE_BUILTINS
            imports = isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
            if named or imports:
                found.append((name, ast.unparse(node)))
    assert found == []


def test_every_dynamic_lookup_is_one_a_reviewer_traced_to_a_fixed_table_or_settings():
    dynamic = set()
    for name, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else None
            if callee == "import_string":
                dynamic.add((name, ast.unparse(node)))
            if callee in ("getattr", "setattr", "delattr") and not (
                len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
            ):
                dynamic.add((name, ast.unparse(node)))
    assert dynamic == REVIEWED_DYNAMIC_CALLS
