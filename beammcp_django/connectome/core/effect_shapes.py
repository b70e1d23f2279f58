"""The shapes of effects in source: which calls static reading takes for an effect.

The declared graph's reader asks ``ShapeReader.effects(call)`` of every call in a function
and draws an edge to each effect it returns. The shapes are the common ones, named in
``docs/connectome.md``:

- the ORM: ``Model.objects.<method>(...)`` (any manager, through chained querysets and
  slices), classified read, write or delete by the method; ``instance.save()``,
  ``.delete()`` and ``.refresh_from_db()`` on a name bound in the function to an instance of
  a model (``Model(...)``, ``Model.objects.get(...)``, a loop over a queryset);
- raw SQL: ``connection.cursor()``, ``connections["alias"].cursor()``;
- mail: ``send_mail`` and its siblings, ``.send()`` of an ``EmailMessage``;
- the network: ``requests``, ``httpx`` and ``urllib.request`` calls, and clients' methods;
  the host when the URL is a literal;
- files: ``open`` with a writing mode, ``Path.write_text``/``write_bytes``, ``os`` and
  ``shutil`` calls that change the file system;
- processes: ``subprocess``, ``os.system`` and their kin;
- the cache: writing methods of ``cache`` and ``caches["alias"]``;
- handles: ``<...>.handles.mint(Kind, ...)``, ``get``, ``touch`` and ``end`` (and their
  ``a`` twins), the kind named by its ``HandleKind`` class or its name as a literal.

Anything else is not an effect here: the call goes on to the ordinary resolution, and what
that cannot resolve goes in the completeness bound. Whether a dotted name is a Django model
is asked of ``model_label`` (the Django layer imports it and looks): this module reads source
only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from urllib.parse import urlsplit

from beammcp_django.connectome.core.effects import (
    ANY_HOST,
    CACHE_WRITE,
    FILE_WRITE,
    HANDLE_END,
    HANDLE_MINT,
    HANDLE_USE,
    MAIL,
    MODEL_DELETE,
    MODEL_READ,
    MODEL_WRITE,
    NETWORK,
    SQL,
    SUBPROCESS,
    Effect,
)


def _asynchronous(*names: str) -> frozenset[str]:
    """The methods and their ``a``-prefixed async twins (Django's async ORM and cache)."""
    return frozenset(names) | frozenset(f"a{name}" for name in names)


QUERYSET_READS = _asynchronous(
    "get", "first", "last", "earliest", "latest", "count", "exists", "aggregate", "in_bulk",
    "iterator", "contains", "explain",
) | frozenset({
    "all", "filter", "exclude", "values", "values_list", "order_by", "select_related",
    "prefetch_related", "annotate", "alias", "distinct", "only", "defer", "raw", "dates",
    "datetimes", "union", "intersection", "difference", "select_for_update", "using", "none",
    "reverse", "extra",
})  # fmt: skip
QUERYSET_WRITES = _asynchronous("create", "bulk_create", "bulk_update", "update")
QUERYSET_READ_WRITES = _asynchronous("get_or_create", "update_or_create")
QUERYSET_DELETES = _asynchronous("delete")
# What a queryset method returns when it returns one instance of its model.
INSTANCE_RETURNING = _asynchronous("get", "first", "last", "earliest", "latest", "create")
INSTANCE_WRITES = _asynchronous("save")
INSTANCE_DELETES = _asynchronous("delete")
INSTANCE_READS = _asynchronous("refresh_from_db")

MAIL_FUNCTIONS = frozenset(
    f"django.core.mail.{name}"
    for name in ("send_mail", "send_mass_mail", "mail_admins", "mail_managers")
)
MAIL_MESSAGES = frozenset(
    f"django.core.mail.{name}" for name in ("EmailMessage", "EmailMultiAlternatives")
) | frozenset(
    f"django.core.mail.message.{name}" for name in ("EmailMessage", "EmailMultiAlternatives")
)
HTTP_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request"})
NETWORK_FUNCTIONS = (
    frozenset(f"requests.{verb}" for verb in HTTP_VERBS)
    | frozenset(f"httpx.{verb}" for verb in (*HTTP_VERBS, "stream"))
    | frozenset(
        {
            "urllib.request.urlopen",
            "urllib.request.urlretrieve",
            "http.client.HTTPConnection",
            "http.client.HTTPSConnection",
            "socket.create_connection",
            "smtplib.SMTP",
            "smtplib.SMTP_SSL",
        }
    )
)
HTTP_CLIENTS = frozenset(
    {"requests.Session", "requests.session", "httpx.Client", "httpx.AsyncClient"}
)
CLIENT_METHODS = HTTP_VERBS | {"stream", "send"}
FILE_FUNCTIONS = frozenset(
    [f"os.{name}" for name in ("remove", "unlink", "rename", "replace", "rmdir", "removedirs",
                               "mkdir", "makedirs", "truncate", "chmod", "chown", "link",
                               "symlink")]
    + [f"shutil.{name}" for name in ("copy", "copy2", "copyfile", "copytree", "move", "rmtree")]
)  # fmt: skip
FILE_METHODS = frozenset({"write_text", "write_bytes"})
SUBPROCESS_FUNCTIONS = frozenset(
    [f"subprocess.{name}" for name in ("run", "Popen", "call", "check_call", "check_output",
                                       "getoutput", "getstatusoutput")]
    + [f"os.{name}" for name in ("system", "popen", "execv", "execve", "execvp", "execvpe",
                                 "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve",
                                 "spawnl", "spawnle", "posix_spawn", "posix_spawnp", "fork")]
    + ["asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"]
)  # fmt: skip
CACHE_WRITES = _asynchronous(
    "set", "add", "delete", "incr", "decr", "set_many", "delete_many", "clear", "touch",
    "get_or_set",
)  # fmt: skip
WRITING_MODES = frozenset("wax+")

# What a local name was bound to, as far as effects go: an instance of a model (its label),
# an email message, or an HTTP client.
MESSAGE = "mail message"
CLIENT = "http client"


def _inner(expression: ast.expr) -> ast.expr | None:
    """The next link down a chain of attributes, calls, subscripts and awaits, or None."""
    if isinstance(expression, ast.Attribute | ast.Subscript | ast.Await):
        return expression.value
    if isinstance(expression, ast.Call):
        return expression.func
    return None


def _root(expression: ast.expr) -> ast.expr:
    """The expression a chain of attributes, calls, subscripts and awaits starts from."""
    while (inner := _inner(expression)) is not None:
        expression = inner
    return expression


def _first_link(expression: ast.expr) -> ast.expr:
    """The link just above a chain's root (``Model.objects`` of ``Model.objects.filter()``)."""
    while (inner := _inner(expression)) is not None and _inner(inner) is not None:
        expression = inner
    return expression


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _host(call: ast.Call) -> str:
    """The host a network call names by a literal URL (or an f-string starting with one)."""
    url = _argument(call, 0, "url")
    if isinstance(url, ast.JoinedStr) and url.values:
        url = url.values[0]
    text = _literal(url)
    if text and "://" in text:
        return urlsplit(text).hostname or ANY_HOST
    if text and url is not None and call.args and call.args[0] is url and "/" not in text:
        return text  # http.client.HTTPConnection("example.com")
    return ANY_HOST


# The methods of ``context.handles`` and the effect each has (``save`` writes back what a
# ``get`` found: that ``get`` is the use).
HANDLE_METHODS = {
    **dict.fromkeys(("mint", "amint"), HANDLE_MINT),
    **dict.fromkeys(("get", "aget", "touch", "atouch"), HANDLE_USE),
    **dict.fromkeys(("end", "aend"), HANDLE_END),
}


class ShapeReader:
    """The effects of calls in one module.

    ``resolve`` turns a dotted name as written in the module into its dotted target (through
    the module's imports and its own classes), or None; ``model_label`` answers whether a
    dotted target is a Django model, with its ``app_label.Model``; ``kind_label`` whether it
    is a handle kind's class, with the kind's name.
    """

    def __init__(
        self,
        resolve: Callable[[str], str | None],
        model_label: Callable[[str], str | None],
        kind_label: Callable[[str], str | None] = lambda dotted: None,
    ) -> None:
        self._resolve = resolve
        self._model_label = model_label
        self._kind_label = kind_label
        self._bindings: dict[int, dict[str, str]] = {}

    def _dotted_target(self, expression: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(expression, ast.Attribute):
            parts.append(expression.attr)
            expression = expression.value
        if not isinstance(expression, ast.Name):
            return None
        return self._resolve(".".join([expression.id, *reversed(parts)]))

    def _model(self, expression: ast.expr) -> str | None:
        target = self._dotted_target(expression)
        return self._model_label(target) if target else None

    def _manager_model(self, chain: ast.expr) -> str | None:
        """The model ``Model.manager...`` starts from: the chain's root is a model and at
        least one attribute (the manager) stands between it and the method."""
        root = _root(chain)
        if root is chain or not isinstance(root, ast.Name):
            return None
        if not isinstance(_first_link(chain), ast.Attribute):
            return None  # Model(...).save(): an instance's method, not a manager's
        return self._model(root)

    # -- what a name is bound to ------------------------------------------------------------

    def _kind_of_value(self, value: ast.expr, bindings: dict[str, str]) -> str | None:
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Name):
            return bindings.get(value.id)
        if not isinstance(value, ast.Call):
            return None
        target = self._dotted_target(value.func)
        if target in MAIL_MESSAGES:
            return MESSAGE
        if target in HTTP_CLIENTS:
            return CLIENT
        model = self._model(value.func)
        if model is not None:
            return model  # Model(...): an instance
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in INSTANCE_RETURNING:
            return self._manager_model(func.value)
        return None

    def bindings(self, function: ast.AST) -> dict[str, str]:
        """Local names of ``function`` bound to a model instance, a message or a client."""
        known = self._bindings.get(id(function))
        if known is not None:
            return known
        bindings: dict[str, str] = {}
        for node in ast.walk(function):
            pairs: list[tuple[ast.expr, str | None]] = []
            if isinstance(node, ast.Assign):
                kind = self._kind_of_value(node.value, bindings)
                pairs = [(target, kind) for target in node.targets]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                pairs = [(node.target, self._kind_of_value(node.value, bindings))]
            elif isinstance(node, ast.For | ast.AsyncFor):
                iterable = node.iter
                method = iterable.func if isinstance(iterable, ast.Call) else iterable
                pairs = [(node.target, self._manager_model(method))]
            elif isinstance(node, ast.With | ast.AsyncWith):
                pairs = [
                    (item.optional_vars, self._kind_of_value(item.context_expr, bindings))
                    for item in node.items
                    if item.optional_vars is not None
                ]
            for target, kind in pairs:
                if isinstance(target, ast.Name) and kind is not None:
                    bindings[target.id] = kind
        self._bindings[id(function)] = bindings
        return bindings

    # -- the effects of one call -------------------------------------------------------------

    def effects(self, call: ast.Call, function: ast.AST) -> list[Effect]:
        """The effects ``call`` (inside ``function``) has; empty when it is no effect shape."""
        func = call.func
        target = self._dotted_target(func)
        if target is not None:
            found = self._by_target(target, call)
            if found:
                return found
        if isinstance(func, ast.Name) and func.id == "open" and target is None:
            mode = _literal(_argument(call, 1, "mode")) or "r"
            return [Effect(FILE_WRITE)] if WRITING_MODES & set(mode) else []
        if isinstance(func, ast.Attribute):
            return self._by_method(func.attr, func.value, call, function)
        return []

    def _by_target(self, target: str, call: ast.Call) -> list[Effect]:
        if target in MAIL_FUNCTIONS:
            return [Effect(MAIL)]
        if target in NETWORK_FUNCTIONS:
            return [Effect(NETWORK, _host(call))]
        if target in SUBPROCESS_FUNCTIONS:
            return [Effect(SUBPROCESS)]
        if target in FILE_FUNCTIONS:
            return [Effect(FILE_WRITE)]
        if target == "django.db.connection.cursor":
            return [Effect(SQL, "default")]
        return []

    def _by_method(
        self, method: str, receiver: ast.expr, call: ast.Call, function: ast.AST
    ) -> list[Effect]:
        handles = isinstance(receiver, ast.Attribute) and receiver.attr == "handles"
        if handles and method in HANDLE_METHODS:
            return [Effect(HANDLE_METHODS[method], self._handle_kind(call))]
        model = self._manager_model(receiver) if not isinstance(receiver, ast.Name) else None
        if model is not None:
            return _queryset_effects(method, model)
        bound = self.bindings(function).get(receiver.id) if isinstance(receiver, ast.Name) else None
        root = _root(receiver)
        if bound is None and isinstance(root, ast.Name) and root is not receiver:
            bound = self._kind_of_value(_outermost_call(receiver), self.bindings(function))
        if bound == MESSAGE and method == "send":
            return [Effect(MAIL)]
        if bound == CLIENT and method in CLIENT_METHODS:
            return [Effect(NETWORK, _host(call))]
        if bound is not None and bound not in (MESSAGE, CLIENT):
            return _instance_effects(method, bound)
        if method in FILE_METHODS:
            return [Effect(FILE_WRITE)]
        return self._by_alias(method, receiver)

    def _handle_kind(self, call: ast.Call) -> str:
        """The kind a ``context.handles`` call names: a literal, or a ``HandleKind`` class;
        "" where reading cannot tell."""
        kind = _argument(call, 0, "kind")
        literal = _literal(kind) if kind is not None else None
        if literal is not None:
            return literal
        target = self._dotted_target(kind) if kind is not None else None
        return (self._kind_label(target) if target else None) or ""

    def _by_alias(self, method: str, receiver: ast.expr) -> list[Effect]:
        """``cache.set(...)``, ``caches["x"].set(...)``, ``connections["x"].cursor()``."""
        alias = "default"
        base = receiver
        if isinstance(receiver, ast.Subscript):
            alias = _literal(receiver.slice) or "*"
            base = receiver.value
        target = self._dotted_target(base)
        if method in CACHE_WRITES and (
            (target == "django.core.cache.cache" and base is receiver)
            or (target == "django.core.cache.caches" and base is not receiver)
        ):
            return [Effect(CACHE_WRITE, alias)]
        if method == "cursor" and target == "django.db.connections" and base is not receiver:
            return [Effect(SQL, alias)]
        return []


def _outermost_call(expression: ast.expr) -> ast.expr:
    """``EmailMessage(...)`` of ``EmailMessage(...).send``: the call a chain starts with."""
    while isinstance(expression, ast.Attribute | ast.Subscript):
        expression = expression.value
    return expression


def _queryset_effects(method: str, model: str) -> list[Effect]:
    if method in QUERYSET_READ_WRITES:
        return [Effect(MODEL_READ, model), Effect(MODEL_WRITE, model)]
    if method in QUERYSET_WRITES:
        return [Effect(MODEL_WRITE, model)]
    if method in QUERYSET_DELETES:
        return [Effect(MODEL_DELETE, model)]
    if method in QUERYSET_READS:
        return [Effect(MODEL_READ, model)]
    return []


def _instance_effects(method: str, model: str) -> list[Effect]:
    if method in INSTANCE_WRITES:
        return [Effect(MODEL_WRITE, model)]
    if method in INSTANCE_DELETES:
        return [Effect(MODEL_DELETE, model)]
    if method in INSTANCE_READS:
        return [Effect(MODEL_READ, model)]
    return []
