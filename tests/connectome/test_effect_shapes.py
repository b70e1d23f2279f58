"""The declared side of effects: which calls in source static reading takes for an effect,
drawn as an ``effect`` edge from the function making the call (``connectome/effect_shapes.py``),
and which it leaves to the completeness bound."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from beammcp_django.connectome.core.declared import build_declared
from beammcp_django.connectome.core.effects import effect_of
from beammcp_django.protocol.catalog import ToolSpec

SOURCE = """
import os
import shutil
import subprocess
from pathlib import Path
from urllib.request import urlopen

import httpx
import requests
from django.core.cache import cache, caches
from django.core.mail import EmailMessage, send_mail
from django.db import connection, connections

from shoppkg.models import Basket, Line, Order, Unknown


def reads():
    return list(Order.objects.filter(x=1).exclude(y=2).values("id")[:5])


def chained_delete():
    Order.objects.filter(x=1).delete()


def writes():
    Order.objects.create(x=1)
    Line.objects.bulk_create([])


def read_and_write():
    Order.objects.get_or_create(x=1)


def instances():
    order = Order(x=1)
    order.save()
    other = Order.objects.get(pk=1)
    other.delete()
    for line in Line.objects.all():
        line.refresh_from_db()


async def async_instances():
    order = await Order.objects.aget(pk=1)
    await order.asave()
    async for line in Line.objects.filter(order=order):
        await line.adelete()


def unknown_instance(thing):
    thing.save()


def mail():
    send_mail("s", "b", "a@example.com", ["b@example.com"])
    EmailMessage("s").send()


def mail_by_name():
    message = EmailMessage("s")
    message.send()


def network(url):
    requests.get("https://api.example.com/v1/items")
    httpx.post(url)
    urlopen(f"http://data.example.org/{url}")
    with httpx.Client() as client:
        client.get("https://client.example.net/")


def files(path):
    open(path, "w")
    open(path, mode="ab")
    Path(path).write_text("x")
    os.remove(path)
    shutil.rmtree(path)


def reads_a_file(path):
    return open(path).read() + open(path, "rb").read().decode()


def processes():
    subprocess.run(["ls"])
    os.system("ls")


def caching():
    cache.set("k", 1)
    caches["sessions"].delete("k")
    return cache.get("k")


def raw():
    connection.cursor()
    connections["replica"].cursor()


async def handles(context, basket_id):
    basket = context.handles.mint(Basket, {})
    await context.handles.aget("basket", basket_id)
    context.handles.touch(Basket, basket_id)
    context.handles.save(basket)
    context.handles.end(kind=Basket, handle_id=basket_id)
    context.handles.mint(Unknown)
    context.handles.frobnicate(Basket)


def entry(arguments, context):
    return reads()
"""

MODELS = {"shoppkg.models.Order": "shop.Order", "shoppkg.models.Line": "shop.Line"}
KINDS = {"shoppkg.models.Basket": "basket"}


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    root = tmp_path_factory.mktemp("shapes")
    package = root / "shoppkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(
        "Order = Line = Basket = Unknown = None  # names only: MODELS, KINDS say what they are\n"
    )
    (package / "work.py").write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(root))
    # The module is imported to find its handler; the HTTP clients need not be installed.
    stand_ins = [name for name in ("httpx", "requests") if name not in sys.modules]
    sys.modules.update({name: types.ModuleType(name) for name in stand_ins})
    try:
        from shoppkg.work import entry

        class Catalog:
            tools = (ToolSpec("t", {"type": "object"}),)
            resources = ()
            prompts = ()
            dispatch = staticmethod(entry)

        yield build_declared(Catalog(), "s", ["shoppkg"], MODELS.get, KINDS.get)
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.startswith("shoppkg")] + stand_ins:
            del sys.modules[name]


def effects_of(declared, function: str) -> set[tuple[str, str]]:
    """(effect, subject) of every effect edge from one function of shoppkg.work."""
    found = set()
    for edge in declared.graph.edges:
        if edge.source.startswith(f"s/module/shoppkg.work/{function}/"):
            assert edge.kind == "effect" or effect_of(edge.target) is None
            effect = effect_of(edge.target)
            if effect is not None:
                found.add((effect.name, effect.subject))
    return found


def test_queryset_methods_through_chains_and_slices_are_reads_writes_and_deletes(declared):
    assert effects_of(declared, "reads") == {("model.read", "shop.Order")}
    assert effects_of(declared, "chained_delete") == {
        ("model.read", "shop.Order"),  # the filter
        ("model.delete", "shop.Order"),
    }
    assert effects_of(declared, "writes") == {
        ("model.write", "shop.Order"),
        ("model.write", "shop.Line"),
    }
    assert effects_of(declared, "read_and_write") == {
        ("model.read", "shop.Order"),
        ("model.write", "shop.Order"),
    }


def test_instance_methods_count_on_names_bound_to_a_model_s_instances(declared):
    assert effects_of(declared, "instances") == {
        ("model.write", "shop.Order"),  # Order(...).save()
        ("model.read", "shop.Order"),  # .get, and the instance's delete is...
        ("model.delete", "shop.Order"),  # ...a delete
        ("model.read", "shop.Line"),  # the loop, and refresh_from_db
    }
    assert effects_of(declared, "async_instances") == {
        ("model.read", "shop.Order"),
        ("model.write", "shop.Order"),
        ("model.read", "shop.Line"),
        ("model.delete", "shop.Line"),
    }


def test_a_save_on_a_name_of_unknown_type_is_no_effect_but_stays_in_the_bound(declared):
    assert effects_of(declared, "unknown_instance") == set()
    where = "s/module/shoppkg.work/unknown_instance/1"
    assert any(u.where == where and u.detail == "thing.save" for u in declared.bound)


def test_mail_network_files_processes_cache_and_raw_sql(declared):
    assert effects_of(declared, "mail") == {("mail", "")}
    assert effects_of(declared, "mail_by_name") == {("mail", "")}
    assert effects_of(declared, "network") == {
        ("network", "api.example.com"),
        ("network", "*"),  # httpx.post(url): the host is not a literal
        ("network", "data.example.org"),  # an f-string starting with the URL's host
        ("network", "client.example.net"),
    }
    assert effects_of(declared, "files") == {("file.write", "")}
    assert effects_of(declared, "reads_a_file") == set()
    assert effects_of(declared, "processes") == {("subprocess", "")}
    assert effects_of(declared, "caching") == {
        ("cache.write", "default"),
        ("cache.write", "sessions"),
    }
    assert effects_of(declared, "raw") == {("sql", "default"), ("sql", "replica")}


def test_effect_nodes_are_of_their_own_kind_and_the_entry_reaches_them(declared):
    nodes = {node.id: node for node in declared.graph.nodes}
    node = nodes["s/effect/model.read/shop.Order"]
    assert (node.kind, node.level, dict(node.labels)) == ("effect", "boundary", {})
    assert ("s/module/shoppkg.work/entry/2", "s/module/shoppkg.work/reads/0", "invoke") in {
        (e.source, e.target, e.kind) for e in declared.graph.edges
    }


def test_without_a_model_resolver_the_orm_is_no_effect_and_stays_in_the_bound():
    from beammcp_django.registry import site

    plain = build_declared(site, "weather", ["sample_project.demo"])
    effects = {effect_of(edge.target) for edge in plain.graph.edges if edge.kind == "effect"}
    # Only the handles' calls, which read as such without a resolver (their kinds untold).
    assert {(effect.name, effect.subject) for effect in effects if effect} == {
        ("handle.mint", ""),
        ("handle.use", ""),
    }
    assert any("objects.create" in u.detail for u in plain.bound)


def test_context_handles_calls_are_their_kind_s_handle_effects(declared):
    assert effects_of(declared, "handles") == {
        ("handle.mint", "basket"),
        ("handle.use", "basket"),  # aget by a literal, touch by the class
        ("handle.end", "basket"),  # by keyword
        ("handle.mint", ""),  # a class that is no registered kind: the kind untold
    }
