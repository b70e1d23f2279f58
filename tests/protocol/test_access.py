"""Who may use an entry, in the core: gates hide (answered exactly as an unknown entry, in
every list and every request that names one), scopes challenge (``InsufficientScope``), and
a list or cursor shaped for one caller is never another's."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

import pytest

from beammcp_django.protocol.access import Access, InsufficientScope
from beammcp_django.protocol.catalog import (
    PromptSpec,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolSpec,
)
from beammcp_django.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY
from beammcp_django.protocol.listen_filter import (
    MAX_SUBSCRIBED_URI_CHARS,
    MAX_SUBSCRIBED_URIS,
    subscription_notification,
)
from beammcp_django.protocol.server import CacheHint

from .conftest import legacy_request, listen, make_server, request
from .test_server_legacy import handshake

OPEN = {"type": "object"}


@dataclass(frozen=True)
class Caller:
    name: str
    roles: frozenset[str] = frozenset()


def has_role(role: str) -> Any:
    def gate(context: Any) -> bool:
        return context.principal is not None and role in context.principal.roles

    return gate


async def is_named_ada(context: Any) -> bool:
    return context.principal is not None and context.principal.name == "ada"


def raises(context: Any) -> bool:
    raise RuntimeError("the gate's own bug")


STAFF = Access(gates=(has_role("staff"),), shown=("role staff",))
WRITE = Access(scopes=frozenset({"notes.write"}))
STAFF_WRITE = Access(gates=(has_role("staff"),), scopes=frozenset({"notes.write", "notes.read"}))


class GatedCatalog:
    """Tools, resources, templates and prompts, each open, hidden or scope-gated."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.threads: set[str] = set()
        self.tools = [
            ToolSpec("open", OPEN),
            ToolSpec("staff_only", OPEN, access=STAFF),
            ToolSpec("ada_only", OPEN, access=Access(gates=(is_named_ada,))),
            ToolSpec("broken_gate", OPEN, access=Access(gates=(raises,))),
            ToolSpec("write", OPEN, access=WRITE),
            ToolSpec("staff_write", OPEN, access=STAFF_WRITE),
        ]
        self.resources = [
            ResourceSpec("notes://public", "public"),
            ResourceSpec("secret://staff", "staff", access=STAFF),
            ResourceTemplateSpec("notes://staff/{id}", "staff-notes", access=STAFF),
            ResourceTemplateSpec("notes://{+path}", "any-note"),
        ]
        self.prompts = [PromptSpec("open"), PromptSpec("staff", access=STAFF)]

    def dispatch(self, name: str, arguments: Any, context: Any) -> str:
        self.calls.append(name)
        return name

    def read_resource(self, match: Any, context: Any) -> str:
        self.calls.append(match.spec.name)
        return match.spec.name

    def get_prompt(self, name: str, arguments: Any, context: Any) -> list[Any]:
        self.calls.append(name)
        return []

    def complete(self, ref: Any, argument: Any, arguments: Any, context: Any) -> list[str]:
        return ["x"]


STAFFER = Caller("grace", frozenset({"staff"}))
OUTSIDER = Caller("mallory")


def serve(server, message, principal=None, scopes=None):
    return asyncio.run(server.handle(message, principal=principal, scopes=scopes))


def names(server, method, field, principal=None, **kw):
    reply = serve(server, request(method, {}), principal, **kw)
    return [entry.get("name") for entry in reply["result"][field]]


@pytest.fixture
def catalog():
    return GatedCatalog()


@pytest.fixture
def server(catalog):
    return make_server(catalog)


def test_each_list_shows_a_caller_only_what_its_gates_admit(server):
    everyone = ["open", "write"]
    assert names(server, "tools/list", "tools", OUTSIDER) == everyone
    assert names(server, "tools/list", "tools", STAFFER) == sorted(
        [*everyone, "staff_only", "staff_write"]
    )
    assert names(server, "tools/list", "tools", Caller("ada")) == sorted([*everyone, "ada_only"])
    assert names(server, "tools/list", "tools", None) == everyone
    assert names(server, "resources/list", "resources", OUTSIDER) == ["public"]
    assert names(server, "resources/list", "resources", STAFFER) == ["public", "staff"]
    assert names(server, "resources/templates/list", "resourceTemplates", OUTSIDER) == ["any-note"]
    assert names(server, "prompts/list", "prompts", OUTSIDER) == ["open"]
    assert names(server, "prompts/list", "prompts", STAFFER) == ["open", "staff"]


def test_a_hidden_tool_is_answered_exactly_as_one_that_does_not_exist(server, catalog):
    hidden = serve(server, request("tools/call", {"name": "staff_only"}), OUTSIDER)
    unknown = serve(server, request("tools/call", {"name": "no_such"}), OUTSIDER)
    assert hidden["error"]["code"] == unknown["error"]["code"] == INVALID_PARAMS
    assert hidden["error"]["message"] == "unknown tool 'staff_only'"
    assert unknown["error"]["message"] == "unknown tool 'no_such'"
    assert catalog.calls == []
    allowed = serve(server, request("tools/call", {"name": "staff_only"}), STAFFER)
    assert "error" not in allowed and catalog.calls == ["staff_only"]


def test_hidden_prompts_resources_and_completions_answer_as_unknown(server, catalog):
    prompt = serve(server, request("prompts/get", {"name": "staff"}), OUTSIDER)
    assert prompt["error"]["message"] == "unknown prompt 'staff'"
    read = serve(server, request("resources/read", {"uri": "secret://staff"}), OUTSIDER)
    missing = serve(server, request("resources/read", {"uri": "secret://nothing"}), OUTSIDER)
    assert read["error"]["code"] == missing["error"]["code"] == INVALID_PARAMS
    assert read["error"]["message"].replace("secret://staff", "X") == missing["error"][
        "message"
    ].replace("secret://nothing", "X")
    completion = {"argument": {"name": "a", "value": ""}}
    for ref in (
        {"type": "ref/prompt", "name": "staff"},
        {"type": "ref/resource", "uri": "notes://staff/{id}"},
    ):
        hidden = serve(server, request("completion/complete", {**completion, "ref": ref}), OUTSIDER)
        assert hidden["error"]["code"] == INVALID_PARAMS
        shown = serve(server, request("completion/complete", {**completion, "ref": ref}), STAFFER)
        assert shown["result"]["completion"]["values"] == ["x"]
    assert catalog.calls == []


def test_a_uri_a_hidden_template_matches_falls_to_the_next_template(server, catalog):
    """notes://staff/7 matches the hidden staff template first, then the open one."""
    reply = serve(server, request("resources/read", {"uri": "notes://staff/7"}), OUTSIDER)
    assert reply["result"]["contents"][0]["text"] == "any-note"
    reply = serve(server, request("resources/read", {"uri": "notes://staff/7"}), STAFFER)
    assert reply["result"]["contents"][0]["text"] == "staff-notes"


def test_a_gate_that_raises_hides_and_is_logged(server, caplog):
    assert "broken_gate" not in names(server, "tools/list", "tools", STAFFER)
    assert "visibility gate raised" in caplog.text


def test_scope_gated_entries_are_listed_but_their_use_is_challenged_with_every_scope(
    server, catalog
):
    assert "write" in names(server, "tools/list", "tools", OUTSIDER, scopes=frozenset())
    with pytest.raises(InsufficientScope) as lacking:
        serve(
            server,
            request("tools/call", {"name": "staff_write"}),
            STAFFER,
            frozenset({"notes.read"}),
        )
    assert lacking.value.scopes == ("notes.read", "notes.write")
    assert catalog.calls == []
    reply = serve(
        server, request("tools/call", {"name": "write"}), OUTSIDER, frozenset({"notes.write", "x"})
    )
    assert reply["result"]["content"][0]["text"] == "write"


def test_a_hidden_scope_gated_entry_is_unknown_not_challenged(server):
    reply = serve(server, request("tools/call", {"name": "staff_write"}), OUTSIDER, frozenset())
    assert reply["error"]["message"] == "unknown tool 'staff_write'"


def test_callers_whose_scopes_are_unknown_are_not_held_to_scopes(server, catalog):
    """stdio passes no scopes: the authorization spec leaves its credentials to the
    environment."""
    reply = serve(server, request("tools/call", {"name": "write"}), OUTSIDER, None)
    assert reply["result"]["content"][0]["text"] == "write"


def test_a_list_with_gated_entries_is_private_whatever_the_cache_hints_say(catalog):
    server = make_server(
        catalog,
        cache_hints={
            "tools/list": CacheHint(60_000, "public"),
            "prompts/list": CacheHint(60_000, "public"),
        },
    )
    reply = serve(server, request("tools/list", {}), STAFFER)
    assert reply["result"]["cacheScope"] == "private"
    catalog.prompts = [PromptSpec("open")]
    reply = serve(server, request("prompts/list", {}), STAFFER)
    assert reply["result"]["cacheScope"] == "public"


def test_a_cursor_is_refused_to_another_principal(catalog):
    server = make_server(catalog, page_size=1)
    first = serve(server, request("tools/list", {}), STAFFER)
    cursor = first["result"]["nextCursor"]
    again = serve(server, request("tools/list", {"cursor": cursor}), STAFFER)
    assert "error" not in again
    for other in (OUTSIDER, Caller("grace"), None):
        stolen = serve(server, request("tools/list", {"cursor": cursor}), other)
        assert stolen["error"]["code"] == INVALID_PARAMS
        assert "not a cursor this server issued" in stolen["error"]["message"]


def test_every_plain_gate_of_a_list_runs_in_one_worker_thread_call(catalog):
    hops: list[int] = []

    async def run_sync(function, *args):
        hops.append(threading.get_ident())
        return function(*args)

    server = make_server(catalog)
    server._run_sync = run_sync
    catalog.tools = [ToolSpec(f"t{n}", OPEN, access=STAFF) for n in range(40)]
    assert len(names(server, "tools/list", "tools", STAFFER)) == 40
    assert len(hops) == 1


def test_a_hidden_resource_cannot_be_subscribed_in_a_session(catalog, session):
    server = make_server(catalog, legacy=True, subscriptions=True)
    handshake(server, session)
    for principal, expected in ((OUTSIDER, "error"), (STAFFER, "result")):
        reply = asyncio.run(
            server.handle(
                legacy_request("resources/subscribe", {"uri": "secret://staff"}),
                session=session,
                principal=principal,
            )
        )
        assert expected in reply
        if expected == "error":
            assert reply["error"]["code"] == RESOURCE_NOT_FOUND_LEGACY


def listen_to(server, uris, principal):
    """A subscriptions/listen for ``uris``: the reply, the filter acknowledged, and the one
    the stream is served by (``conftest.listen``)."""
    return listen(server, {"resourceSubscriptions": uris}, principal)


def told(delivered, uri):
    return subscription_notification({"kind": "resource", "uri": uri}, delivered, 1)


def test_a_listen_stream_is_acknowledged_alike_but_never_told_of_a_hidden_resource(catalog):
    server = make_server(catalog, subscriptions=True)
    watched = ["secret://staff", "notes://staff/1", "notes://public", "nothing://at-all"]
    for principal in (OUTSIDER, STAFFER):
        _, acknowledged, delivered = listen_to(server, watched, principal)
        assert acknowledged == {"resourceSubscriptions": watched}
        assert told(delivered, "notes://public") is not None
        # A template hidden from the outsider matches, but an open one serves it too.
        assert told(delivered, "notes://staff/1") is not None
    assert told(listen_to(server, watched, OUTSIDER)[2], "secret://staff") is None
    assert told(listen_to(server, watched, STAFFER)[2], "secret://staff") is not None


def test_a_listen_stream_watches_a_bounded_number_of_uris(catalog):
    server = make_server(catalog, subscriptions=True)
    for uris, bound in (
        ([f"notes://{n}" for n in range(MAX_SUBSCRIBED_URIS + 1)], "at most 256 URIs"),
        (["notes://" + "x" * MAX_SUBSCRIBED_URI_CHARS], "at most 2048 characters"),
    ):
        reply, acknowledged, _ = listen_to(server, uris, OUTSIDER)
        assert reply["error"]["code"] == INVALID_PARAMS
        assert bound in reply["error"]["message"]
        assert acknowledged is None


def test_a_gate_that_refuses_at_once_spares_the_thread_hop(catalog, caplog):
    hops: list[str] = []

    async def run_sync(function, *args):
        hops.append(function.__name__)
        return function(*args)

    def needs_a_user(context: Any) -> bool:
        return True

    def broken_quick(context: Any) -> bool:
        raise RuntimeError("the quick test's own bug")

    def quickly_hidden(context: Any) -> bool:
        raise AssertionError("never run: its quick refusal hid the entry")

    needs_a_user.quick_refusal = lambda context: context.principal is None  # type: ignore[attr-defined]
    quickly_hidden.quick_refusal = broken_quick  # type: ignore[attr-defined]
    server = make_server(catalog)
    server._run_sync = run_sync
    catalog.tools = [
        ToolSpec(f"t{n}", OPEN, access=Access(gates=(needs_a_user,))) for n in range(3)
    ] + [ToolSpec("broken", OPEN, access=Access(gates=(quickly_hidden,)))]
    assert names(server, "tools/list", "tools", None) == []
    assert hops == []
    assert "the quick test's own bug" in caplog.text
    assert names(server, "tools/list", "tools", OUTSIDER) == ["t0", "t1", "t2"]
    assert hops == ["_run_sync_gates"]


def test_an_unknown_name_waits_for_the_same_gates_a_hidden_one_does(catalog):
    # The time taken is no oracle either: a hidden name ran its gate on a worker thread while
    # an unknown one was refused at once (0.54 against 0.42 ms, measured from outside). Each
    # now asks every gate of its list, in one hop: bench/hidden_names.py measures the rest.
    hops: list[str] = []
    asked: list[str] = []

    async def run_sync(function, *args):
        hops.append(function.__name__)
        return function(*args)

    def counted(name: str) -> Any:
        def gate(context: Any) -> bool:
            asked.append(name)
            return has_role("staff")(context)

        return gate

    catalog.tools = [
        ToolSpec("open", OPEN),
        *(ToolSpec(f"gated_{n}", OPEN, access=Access(gates=(counted(f"tool {n}"),))) for n in "ab"),
    ]
    catalog.prompts = [
        PromptSpec("open"),
        PromptSpec("gated", access=Access(gates=(counted("prompt"),))),
    ]
    catalog.resources = [
        ResourceSpec("notes://public", "public"),
        ResourceSpec("secret://gated", "gated", access=Access(gates=(counted("resource"),))),
        ResourceTemplateSpec("notes://{id}", "note", access=Access(gates=(counted("template"),))),
    ]
    costs = {}
    for label, method, params in (
        ("hidden tool", "tools/call", {"name": "gated_a"}),
        ("unknown tool", "tools/call", {"name": "gated_z"}),
        ("hidden prompt", "prompts/get", {"name": "gated"}),
        ("unknown prompt", "prompts/get", {"name": "nosuch"}),
        ("hidden resource", "resources/read", {"uri": "secret://gated"}),
        ("unknown resource", "resources/read", {"uri": "secret://nosuch"}),
    ):
        server = make_server(catalog)
        server._run_sync = run_sync
        hops.clear()
        asked.clear()
        reply = serve(server, request(method, params), OUTSIDER)
        assert "error" in reply, (label, reply)
        costs[label] = (list(hops), sorted(asked))
    for kind in ("tool", "prompt", "resource"):
        assert costs[f"hidden {kind}"] == costs[f"unknown {kind}"], kind
        assert costs[f"hidden {kind}"][0] == ["_run_sync_gates"], kind
    assert costs["unknown tool"][1] == ["tool a", "tool b"]
    assert costs["unknown resource"][1] == ["resource", "template"]
    # An entry nobody is hidden from is looked up alone: no gate, no hop.
    server = make_server(catalog)
    server._run_sync = run_sync
    hops.clear()
    serve(server, request("tools/call", {"name": "open"}), OUTSIDER)
    assert "_run_sync_gates" not in hops
