"""The connectome page's effect parts through Django's test client, on the sample: the
annotation audit's findings, the reach form (the command's very answer), each tool's effect
summary in the catalog browser, and a generated 5,000-edge graph drawn aggregated, its
layouts served from the cache on a second view."""

from __future__ import annotations

import html
import io
import re
import xml.etree.ElementTree as ET

import graphviz
import pytest
from django.core.management import call_command

from beammcp_django.connectome import exports
from beammcp_django.connectome.core import drawing
from beammcp_django.connectome.core.canonical import node_id
from tests.admin.generated_graph import generated
from tests.admin.test_admin_views import (  # noqa: F401 - empty_store: the autouse fixture
    CATALOG,
    CONNECTOME,
    SERVER,
    drawings,
    edge_rows,
    elements_of_class,
    empty_store,
    entry_url,
    section,
    staff,
    store_edge,
    text,
    tooltips,
)

pytestmark = pytest.mark.django_db

CURRENT = node_id(SERVER, "tool", "current_conditions")
HANDLER = node_id(SERVER, "module", "sample_project.demo.mcp", "CurrentConditions.call", 3)
WRITE = node_id(SERVER, "effect", "model.write", "demo.Observation")
DELETE_HANDLER = node_id(SERVER, "module", "sample_project.demo.mcp", "DeleteObservation.call", 3)


def cells(row: str) -> list[str]:
    return [
        " ".join(re.sub(r"<[^>]+>", " ", cell).split())
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    ]


def finding_rows(page: str) -> list[list[str]]:
    table = section(page, "finding-table", "</table>")
    return [cells(row) for row in re.findall(r'<tr class="mcp-finding">(.*?)</tr>', table, re.S)]


def observe_current_conditions(writes: int) -> None:
    """What calls of current_conditions leave in the store: the tool to its handler, the
    handler to the write it made."""
    store_edge(CURRENT, HANDLER, count=writes)
    store_edge(HANDLER, WRITE, kind="effect", count=writes)


# -- the annotation audit ---------------------------------------------------------------------


def test_the_audit_names_current_conditions_with_its_annotation_effect_graph_and_path(
    admin_client,
):
    observe_current_conditions(3)
    page = text(admin_client.get(CONNECTOME))
    path = f"{CURRENT} {HANDLER} {WRITE}"
    assert finding_rows(page) == [
        [CURRENT, "readOnlyHint: true", WRITE, "declared", path],
        [CURRENT, "readOnlyHint: true", WRITE, "observed", path],
    ]
    assert "The package enforces nothing" in " ".join(section(page, "findings").split())


def test_a_tool_whose_annotations_hold_has_no_finding(admin_client):
    page = text(admin_client.get(CONNECTOME))
    assert [row[0] for row in finding_rows(page)] == [CURRENT]  # only the declared one


# -- the reach form ---------------------------------------------------------------------------


def ask(client, question: str, entry: str, effect: str, gate: str = "", graph: str = "declared"):
    query = {
        "reach-graph": graph,
        "reach-question": question,
        "reach-entry": entry,
        "reach-effect": effect,
        "reach-gate": gate,
    }
    return text(client.get(CONNECTOME, query))


def command_answer(*arguments: str) -> str:
    out = io.StringIO()
    call_command("mcp_connectome", "reach", *arguments, stdout=out)
    return out.getvalue().strip()


def printed_record(page: str) -> str:
    return html.unescape(section(page, "reach-record", "</pre>").split(">", 1)[1])


def hops(page: str) -> list[list[str]]:
    table = section(page, "reach-path", "</table>")
    return [cells(row) for row in re.findall(r'<tr class="mcp-hop">(.*?)</tr>', table, re.S)]


def svg_in(page: str, anchor: str) -> ET.Element:
    part = page.split(f'id="{anchor}"', 1)[1]
    return ET.fromstring(part[part.index("<svg") : part.index("</svg>") + 6])


def verdict(page: str) -> str:
    return section(page, "reach-verdict", "</strong>").split(">", 1)[1]


def test_a_yes_answer_lists_and_draws_its_path_and_is_the_commands_answer(admin_client):
    page = ask(
        admin_client, "reaches", "tool/current_conditions", "effect/model.write/demo.Observation"
    )
    assert verdict(page) == "Yes"
    assert hops(page) == [
        [CURRENT, HANDLER, "invoke", "declared"],
        [HANDLER, WRITE, "effect", "declared"],
    ]
    assert printed_record(page) == command_answer(
        "reaches",
        "tool/current_conditions",
        "effect/model.write/demo.Observation",
        "--graph",
        "declared",
    )
    path = svg_in(page, "drawing-reach")
    assert len(elements_of_class(path, "edge", "declared")) == 2
    assert {CURRENT, HANDLER, WRITE} <= set(tooltips(path))


def test_a_no_answer_says_so_with_no_path(admin_client):
    page = ask(admin_client, "reaches", "tool/get_forecast", "effect/model.write/demo.Observation")
    assert verdict(page) == "No"
    assert "tool/get_forecast cannot reach effect/model.write/demo.Observation." in page
    assert 'id="reach-path"' not in page and 'id="drawing-reach"' not in page
    assert '"answer": false' in printed_record(page)


def test_a_gate_that_dominates_is_said_to_guard_every_path(admin_client):
    gate = "module/sample_project.demo.mcp/DeleteObservation.call/3"
    page = ask(
        admin_client,
        "dominates",
        "tool/delete_observation",
        "effect/model.delete/demo.Observation",
        gate,
    )
    assert verdict(page) == "Yes"
    assert f"{gate} guards every path from tool/delete_observation" in page
    must = ask(
        admin_client,
        "must_cross",
        "tool/delete_observation",
        "effect/model.delete/demo.Observation",
    )
    listed = re.findall(r'<li class="mcp-id">(.*?)</li>', section(must, "reach-nodes", "</ol>"))
    assert listed[1] == DELETE_HANDLER and len(listed) == 3


@pytest.mark.parametrize(
    ("question", "entry", "effect", "gate", "refusal"),
    [
        (
            "reaches",
            "tool/nope",
            "effect/model.write/demo.Observation",
            "",
            "the declared graph has no node &#x27;tool/nope&#x27;",
        ),
        ("dominates", "tool/echo", "effect/model.write/demo.Observation", "", "needs a gate"),
        (
            "reaches",
            "tool/echo",
            "effect/model.write/demo.Observation",
            "tool/echo",
            "takes no gate",
        ),
    ],
)
def test_a_bad_question_is_refused_by_name(admin_client, question, entry, effect, gate, refusal):
    page = ask(admin_client, question, entry, effect, gate)
    assert refusal in section(page, "reach-refusal", "</div>")
    assert 'id="reach-answer"' not in page and "Traceback" not in page


def test_a_missing_node_is_named_beside_its_field(admin_client):
    page = ask(admin_client, "reaches", "", "effect/model.write/demo.Observation")
    assert "Name the entry: a tool, resource, prompt or function node." in section(
        page, "reach-form", "</form>"
    )


def test_the_form_suggests_entries_and_effects_without_the_server_name(admin_client):
    page = text(admin_client.get(CONNECTOME))
    entries = re.findall(r'<option value="([^"]+)">', section(page, "reach-entries", "</datalist>"))
    effects = re.findall(r'<option value="([^"]+)">', section(page, "reach-effects", "</datalist>"))
    assert "tool/current_conditions" in entries and "prompt/forecast_briefing" in entries
    assert effects == [
        "effect/handle.mint/watch_list",
        "effect/handle.use/watch_list",
        "effect/model.delete/demo.Observation",
        "effect/model.read/demo.Observation",
        "effect/model.write/demo.Observation",
    ]


# -- the effect summary in the catalog browser ------------------------------------------------


def tool_effects(page: str, tool: str) -> str:
    """The effect cell of one tool's row on the catalog list, as text."""
    rows = re.findall(r"<tr>(.*?)</tr>", section(page, "tools"), re.S)
    row = next(r for r in rows if f">{tool}</a>" in r)
    cell = row.split('class="mcp-tool-effects">', 1)[1].split("</td>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", cell).split())


def test_the_catalog_lists_each_tools_effects_declared_and_observed_with_counts(admin_client):
    observe_current_conditions(4)
    page = text(admin_client.get(CATALOG))
    assert tool_effects(page, "current_conditions") == (
        "model.write demo.Observation : can reach; reached, 4 calls"
    )
    assert tool_effects(page, "delete_observation") == (
        "model.delete demo.Observation : can reach; not reached "
        "model.read demo.Observation : can reach; not reached"
    )
    assert tool_effects(page, "get_forecast") == "none"
    entry = text(admin_client.get(entry_url("tool", "current_conditions")))
    assert "reached, 4 calls" in section(entry, "effects")


def test_an_observed_effect_the_source_does_not_declare_is_counted_as_reached_only(admin_client):
    elsewhere = node_id(SERVER, "module", "elsewhere", "helper", 0)
    store_edge(node_id(SERVER, "tool", "echo"), elsewhere, count=2)
    store_edge(elsewhere, node_id(SERVER, "effect", "mail"), kind="effect", count=5)
    assert tool_effects(text(admin_client.get(CATALOG)), "echo") == (
        "mail : not declared; reached, 5 calls"
    )


def test_staff_without_the_connectome_permission_see_no_effect_summary():
    client = staff()
    assert "mcp-tool-effects" not in text(client.get(CATALOG))
    assert 'id="effects"' not in text(client.get(entry_url("tool", "current_conditions")))


# -- a generated 5,000-edge graph ------------------------------------------------------------


@pytest.fixture
def large_graph(monkeypatch):
    """The page's graphs replaced by a generated 5,000-edge declared graph and a 1,000-edge
    observed graph; the layout cache emptied first."""
    declared, observed = generated(SERVER)
    monkeypatch.setattr(exports, "declared", lambda: declared)
    monkeypatch.setattr(exports, "observed", lambda hidden=None: observed)
    drawing.layouts.clear()
    return declared, observed


@pytest.fixture
def pipes(monkeypatch) -> list[str]:
    """The name of every graph ``dot`` lays out (graphviz's pipe, counted)."""
    laid_out: list[str] = []
    pipe = graphviz.Digraph.pipe

    def counted(self, *args, **kwargs):
        laid_out.append(self.name)
        return pipe(self, *args, **kwargs)

    monkeypatch.setattr(graphviz.Digraph, "pipe", counted)
    return laid_out


def test_a_5000_edge_graph_is_drawn_aggregated_on_the_page_and_listed_in_full(
    admin_client, large_graph
):
    page = text(admin_client.get(CONNECTOME))
    svgs = drawings(page)
    assert set(svgs) == {"declared", "observed", "diff"}
    note = section(page, "note-declared", "</p>")
    assert "Aggregated to fit the drawing cap of 200: 5000 edges drawn as" in note
    declared = svgs["declared"]
    assert 0 < len(elements_of_class(declared, "edge", "declared")) <= 200
    labels = ["".join(g.itertext()) for g in elements_of_class(declared, "node", "group")]
    assert any("tool/*" in label and "150 tools" in label for label in labels)
    assert any("module/pkg3.*" in label and "250 functions" in label for label in labels)
    assert len(elements_of_class(svgs["diff"], "edge", "declared_and_observed")) > 0
    assert len(edge_rows(page)) == 5000


def test_a_nodes_neighbourhood_is_drawn_at_full_detail(admin_client, large_graph):
    declared, _ = large_graph
    busiest = max(
        (n.id for n in declared.graph.nodes if "/module/" in n.id),
        key=lambda n: sum(n in (e.source, e.target) for e in declared.graph.edges),
    )
    touching = sum(busiest in (e.source, e.target) for e in declared.graph.edges)
    page = text(admin_client.get(CONNECTOME, {"node": busiest}))
    near = drawings(page)["neighbourhood"]
    drawn = [g for g in near.iter() if "edge" in (g.get("class") or "").split()]
    assert len(drawn) == touching and touching < 200
    assert f"{touching} edges at full detail." in section(page, "note-neighbourhood", "</p>")
    assert len(elements_of_class(near, "node", "focus")) == 1


def test_a_second_view_of_an_unchanged_graph_runs_no_dot(admin_client, large_graph, pipes):
    first_view = drawings(text(admin_client.get(CONNECTOME)))
    assert sorted(pipes) == ["declared", "diff", "observed"]
    pipes.clear()
    second_view = drawings(text(admin_client.get(CONNECTOME)))
    assert pipes == []
    assert {name: len(list(svg.iter())) for name, svg in second_view.items()} == {
        name: len(list(svg.iter())) for name, svg in first_view.items()
    }
    focused = text(admin_client.get(CONNECTOME, {"node": f"{SERVER}/tool/t0"}))
    assert "neighbourhood" in drawings(focused)
    assert pipes == ["neighbourhood"]  # the aggregates do not draw t0: their layouts are kept
