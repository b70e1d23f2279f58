"""Who may read the ``connectome://`` resources, and what of them: the admin's rule gates
them (``may_read_connectome``), and a caller who passes it reads the part of each graph the
catalog's gates leave them (``connectome/hiding.py``), never a hidden entry's node, handler,
effect or count. Over HTTP with two principals: ``tests/interop/test_sdk_oauth.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, Permission, User

from beammcp_django.connectome import exports
from beammcp_django.connectome.core import hiding
from beammcp_django.connectome.core.canonical import Edge, Graph, Node
from beammcp_django.connectome.core.observed import Observation
from beammcp_django.connectome.resources import may_read_connectome
from beammcp_django.connectome.store import ProcessStore
from tests.connectome.test_exports import SUPERUSER, handle, sample_server
from tests.principals.tools import Caller

pytestmark = pytest.mark.django_db(transaction=True)

SERVER = "beammcp-sample-weather"
HIDDEN_TOOL = f"{SERVER}/tool/delete_observation"
HIDDEN_HANDLER = f"{SERVER}/module/sample_project.demo.mcp/DeleteObservation.call/3"
DELETE = f"{SERVER}/effect/model.delete/demo.Observation"
ECHO = f"{SERVER}/tool/echo"
ECHO_HANDLER = f"{SERVER}/module/sample_project.demo.mcp/Echo.call/3"
GRAPHS = ("declared", "observed", "diff")


def staff(username: str, *codenames: str) -> User:
    user = User.objects.create_user(username, is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return User.objects.get(pk=user.pk)  # no permission cache from before the grant


def read(principal: Any, uri: str) -> dict[str, Any]:
    return handle(sample_server(with_connectome=True), "resources/read", {"uri": uri}, principal)


def text_of(principal: Any, graph: str) -> str:
    reply = read(principal, f"connectome://{graph}")
    assert "result" in reply, reply
    (contents,) = reply["result"]["contents"]
    return contents["text"]


def observe_both_tools() -> None:
    """Counts in the store as serving processes write them: echo's and the hidden tool's
    calls, with its handler and its effect."""
    seen = Observation(2, 1_800_000_000.0, 1_800_000_060.0)
    hidden = Observation(1, 1_700_000_000.0, 1_900_000_000.0)  # widens the window if leaked
    ProcessStore().flush(
        {
            (f"{SERVER}/server", ECHO, "invoke"): seen,
            (ECHO, ECHO_HANDLER, "invoke"): seen,
            (f"{SERVER}/server", HIDDEN_TOOL, "invoke"): hidden,
            (HIDDEN_TOOL, HIDDEN_HANDLER, "invoke"): hidden,
            (HIDDEN_HANDLER, DELETE, "effect"): hidden,
        }
    )


def test_the_rule_is_the_admins_an_active_staff_user_holding_the_view_or_change_permission():
    assert may_read_connectome(staff("viewer", "view_observededge"))
    assert may_read_connectome(staff("changer", "change_observededge"))
    assert may_read_connectome(SUPERUSER)
    assert not may_read_connectome(staff("plain"))
    no_staff = User.objects.create_user("no-staff")
    no_staff.user_permissions.add(Permission.objects.get(codename="view_observededge"))
    assert not may_read_connectome(User.objects.get(pk=no_staff.pk))
    gone = User(username="gone", is_active=False, is_staff=True, is_superuser=True)
    assert not may_read_connectome(gone)
    for nobody in (None, AnonymousUser(), Caller("ada")):
        assert not may_read_connectome(nobody)


@pytest.mark.parametrize("who", ["nobody", "a token's claims", "staff without the permission"])
def test_a_caller_the_rule_refuses_is_answered_as_if_the_resources_did_not_exist(who):
    principal = {
        "nobody": None,
        "a token's claims": Caller("mallory"),
        "staff without the permission": staff("plain"),
    }[who]
    listed = handle(sample_server(with_connectome=True), "resources/list", principal=principal)
    assert [r["uri"] for r in listed["result"]["resources"]] == [
        "ui://weather/forecast-chart",
        "weather://stations",
    ]
    for graph in GRAPHS:
        uri = f"connectome://{graph}"
        hidden = json.dumps(read(principal, uri)).replace(uri, "<uri>")
        unknown = json.dumps(read(principal, "connectome://nothing")).replace(
            "connectome://nothing", "<uri>"
        )
        assert hidden == unknown


def test_a_caller_nothing_is_hidden_from_reads_the_export_bytes():
    observe_both_tools()
    for graph in GRAPHS:
        text = text_of(SUPERUSER, graph)
        assert text.encode() == exports.export(graph).data
    assert "delete_observation" in text_of(SUPERUSER, "declared")


def test_a_reader_the_catalog_hides_a_tool_from_reads_no_trace_of_it():
    observe_both_tools()
    viewer = staff("viewer", "view_observededge")  # not demo.delete_observation
    whole = {graph: json.loads(exports.export(graph).data) for graph in GRAPHS}
    seen = {graph: json.loads(text_of(viewer, graph)) for graph in GRAPHS}
    for graph in GRAPHS:
        text = json.dumps(seen[graph])
        for trace in ("delete_observation", "DeleteObservation", "model.delete"):
            assert trace not in text, (graph, trace)
    for graph in ("declared", "observed"):
        kept = {node["id"] for node in seen[graph]["nodes"]}
        removed = {node["id"] for node in whole[graph]["nodes"]} - kept
        # The tool, its handler and the effect only it reaches: nothing else.
        assert removed == {HIDDEN_TOOL, HIDDEN_HANDLER, DELETE}, graph
        assert seen[graph]["edges"] == [
            edge for edge in whole[graph]["edges"] if {edge["from"], edge["to"]} <= kept
        ]
    assert (ECHO, ECHO_HANDLER) in {(e["from"], e["to"]) for e in seen["observed"]["edges"]}
    # The diff is computed over what remains: its counts, and a window the hidden tool's
    # calls (earlier and later than echo's) do not widen.
    coverage = seen["diff"]["coverage"]
    assert coverage["declared_edges"] == len(seen["declared"]["edges"])
    assert coverage["observed_edges"] == len(seen["observed"]["edges"])
    assert coverage["declared_nodes"] == len(seen["declared"]["nodes"])
    assert seen["diff"]["window"] == {
        "ended_at": "2027-01-15T08:01:00Z",
        "started_at": "2027-01-15T08:00:00Z",
    }
    assert whole["diff"]["window"]["started_at"] < "2027"


def test_another_reader_holding_the_tool_s_permission_reads_it_again():
    observe_both_tools()
    both = staff("both", "view_observededge", "delete_observation")
    for graph in GRAPHS:
        assert text_of(both, graph).encode() == exports.export(graph).data


# -- the hiding rule on small graphs ----------------------------------------------------------


def graph(*edges: tuple[str, str]) -> Graph:
    ids = sorted({end for edge in edges for end in edge})
    return Graph(
        tuple(Node(i, "module", "mfa") for i in ids),
        tuple(Edge(a, b, "invoke", "declared") for a, b in edges),
    )


def test_what_a_visible_entry_also_reaches_stays_and_what_no_entry_reaches_stays():
    shown = graph(
        ("s/server", "s/tool/a"),
        ("s/server", "s/tool/h"),
        ("s/tool/a", "s/module/m/A.call/3"),
        ("s/tool/h", "s/module/m/H.call/3"),
        ("s/module/m/H.call/3", "s/module/m/H.helper/1"),
        ("s/module/m/H.call/3", "s/module/m/shared/0"),
        ("s/module/m/A.call/3", "s/module/m/shared/0"),
        ("s/module/m/H.unused/1", "s/module/m/deep/0"),
        ("s/module/m/lonely/0", "s/module/m/lonelier/0"),
    )
    owned = hiding.owned_nodes(shown, ["s/tool/h"], ["s/tool/a"], ["s/module/m/H.call/3"])
    assert owned == {
        "s/tool/h",
        "s/module/m/H.call/3",
        "s/module/m/H.helper/1",
        "s/module/m/H.unused/1",  # a method of the hidden handler's class, reached or not
        "s/module/m/deep/0",
    }
    left = hiding.without(shown, owned)
    assert {edge.source for edge in left.edges} == {
        "s/server",
        "s/tool/a",
        "s/module/m/A.call/3",
        "s/module/m/lonely/0",
    }
    assert hiding.owned_nodes(shown, [], ["s/tool/a"]) == frozenset()


def test_an_entry_a_visible_entry_reaches_is_still_removed_when_hidden():
    shown = graph(("s/tool/a", "s/tool/h"), ("s/tool/h", "s/module/m/f/0"))
    assert hiding.owned_nodes(shown, ["s/tool/h"], ["s/tool/a"]) == {"s/tool/h"}
