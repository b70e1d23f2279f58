"""The admin's MCP pages through Django's test client: who may see them, what they show of the
real sample catalog and store, that downloads are the canonical bytes, that the edge filter
narrows the table, that a hostile node id stays text, and that large graphs are drawn
aggregated."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import NoReverseMatch, reverse

from beammcp_django import process as servers
from beammcp_django.connectome import exports
from beammcp_django.connectome.core.canonical import node_id
from beammcp_django.connectome.core.observed import process_collector
from beammcp_django.connectome.store import edge_key, process_store
from beammcp_django.models import Connectome, ObservedEdge
from beammcp_django.protocol.access import Access
from beammcp_django.protocol.catalog import ResourceTemplateSpec, ToolSpec
from beammcp_django.registry import site
from beammcp_django.templatetags.mcp_text import process_name

pytestmark = pytest.mark.django_db

SERVER = "beammcp-sample-weather"
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = 'evil/tool/<script>alert("x")</script>" onmouseover="alert(1)'


def url(suffix: str, *args: str, model: str = "observededge") -> str:
    return reverse(f"admin:beammcp_django_{model}_{suffix}", args=args)


CATALOG = url("changelist", model="mcpcatalog")
CONNECTOME = url("changelist", model="connectome")


def entry_url(kind: str, name: str) -> str:
    return url("entry", kind, name, model="mcpcatalog")


def export_url(name: str) -> str:
    return url("export", name, model="connectome")


def store_edge(source: str, target: str, kind: str = "invoke", count: int = 1, node: str = "w1"):
    now = datetime.now(tz=UTC)
    return ObservedEdge.objects.create(
        node=node,
        source=source,
        target=target,
        kind=kind,
        edge_key=edge_key((source, target, kind)),
        count=count,
        first_seen=now,
        last_seen=now,
        flushed_at=now,
    )


def staff(*permissions: str) -> Client:
    user = User.objects.create_user("staff", password="unused", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=permissions))
    client = Client()
    client.force_login(user)
    return client


def text(response: Any) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def drawings(page: str) -> dict[str, ET.Element]:
    """Each drawn graph's SVG, parsed as XML, by drawing name."""
    found = {}
    for name, section in re.findall(r'id="drawing-(\w+)" open>(.*?)</details>', page, re.S):
        if "<svg" in section:
            found[name] = ET.fromstring(
                section[section.index("<svg") : section.index("</svg>") + 6]
            )
    return found


def edge_rows(page: str) -> list[list[str]]:
    """The edge table's rows as lists of cell texts."""
    table = page.split('id="edge-table"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="mcp-edge">(.*?)</tr>', table, re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in rows
    ]


def first(element: ET.Element, tag: str) -> ET.Element:
    return next(element.iter(f"{SVG}{tag}"))


def elements_of_class(svg: ET.Element, kind: str, css_class: str) -> list[ET.Element]:
    return [
        element
        for element in svg.iter(f"{SVG}g")
        if {kind, css_class} <= set(element.get("class", "").split())
    ]


@pytest.fixture(autouse=True)
def empty_store(settings):
    """Each test starts from nothing observed: what this process counted before (other tests'
    calls) is forgotten, so only the test's own rows and calls are seen. (And users'
    passwords hash fast: the login is not what these tests are about.)"""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    process_collector.forget()
    process_store._written.clear()
    ObservedEdge.objects.all().delete()


# -- permissions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", [CATALOG, entry_url("tool", "echo"), CONNECTOME, export_url("diff")]
)
def test_an_anonymous_visitor_is_sent_to_the_admin_login(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login") + "?next=")


def test_staff_without_the_view_permission_reads_the_catalog_but_not_the_connectome():
    client = staff()
    page = text(client.get(CATALOG))
    assert "get_forecast" in page
    assert CONNECTOME not in page  # no link that would answer 403
    assert client.get(CONNECTOME).status_code == 403
    for name in exports.GRAPHS:
        assert client.get(export_url(name)).status_code == 403


def test_staff_with_the_view_permission_reads_the_connectome_and_downloads():
    client = staff("view_observededge")
    assert "Canonical exports" in text(client.get(CONNECTOME))
    assert client.get(export_url("declared")).status_code == 200


def test_nobody_adds_changes_or_deletes_observed_edges_in_the_admin(admin_client):
    row = store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=3)
    changelist = text(admin_client.get(url("changelist")))
    assert CATALOG in changelist and CONNECTOME in changelist  # the object tools link them
    assert url("add") not in changelist
    assert admin_client.get(url("add")).status_code == 403
    assert admin_client.get(url("delete", str(row.pk))).status_code == 403
    assert admin_client.post(url("change", str(row.pk)), {"count": 9}).status_code == 403
    row.refresh_from_db()
    assert row.count == 3


def index_entries(client: Client, path: str | None = None) -> dict[str, str]:
    """The MCP server app's entries on the admin index (or the app's page): name -> link."""
    page = text(client.get(path or reverse("admin:index")))
    found = re.search(r'<div class="app-beammcp_django module.*?</table>', page, re.S)
    if found is None:
        return {}
    return {
        re.sub(r"<[^>]+>", "", name).strip(): link
        for link, name in re.findall(
            r'<th scope="row" id="[^"]*">\s*<a href="([^"]+)"[^>]*>(.*?)</a>\s*</th>',
            found.group(0),
            re.S,
        )
    }


def test_the_admin_index_lists_the_catalog_and_the_connectome_as_entries_of_the_app(
    admin_client,
):
    entries = index_entries(admin_client)
    assert entries == {
        "Connectome": CONNECTOME,
        "MCP catalog": CATALOG,
        "MCP handles": url("changelist", model="mcphandle"),
        "MCP tasks": url("changelist", model="mcptask"),
        "Observed edges": url("changelist"),
    }
    # The app's own page lists the same entries, and every link opens its page.
    assert index_entries(admin_client, reverse("admin:app_list", args=["beammcp_django"])) == (
        entries
    )
    assert "<h1>MCP catalog</h1>" in text(admin_client.get(CATALOG))
    assert "<h1>Connectome</h1>" in text(admin_client.get(CONNECTOME))


def test_staff_without_the_view_permission_sees_the_catalog_but_not_the_connectome_on_the_index():
    client = staff()
    assert index_entries(client) == {"MCP catalog": CATALOG}
    viewer = Client()
    viewer.force_login(User.objects.create_user("viewer", password="unused", is_staff=True))
    viewer_user = User.objects.get(username="viewer")
    viewer_user.user_permissions.add(Permission.objects.get(codename="view_observededge"))
    assert index_entries(viewer) == {
        "Connectome": CONNECTOME,
        "MCP catalog": CATALOG,
        "Observed edges": url("changelist"),
    }


def test_the_change_permission_on_observed_edges_counts_as_view_for_the_connectome():
    client = staff("change_observededge")
    assert "Connectome" in index_entries(client)
    assert "Canonical exports" in text(client.get(CONNECTOME))


def test_an_unregistered_page_leaves_the_index_and_the_other_pages_stop_linking_it(
    admin_client,
):
    # The URLconf holds the registered instance: that same one goes back afterwards.
    registered = admin.site.get_model_admin(Connectome)
    admin.site.unregister(Connectome)
    try:
        assert set(index_entries(admin_client)) == {
            "MCP catalog",
            "MCP handles",
            "MCP tasks",
            "Observed edges",
        }
        catalog = text(admin_client.get(CATALOG))
        assert "get_forecast" in catalog and CONNECTOME not in catalog
        assert CONNECTOME not in text(admin_client.get(url("changelist")))
    finally:
        admin.site._registry[Connectome] = registered
    assert CONNECTOME in text(admin_client.get(CATALOG))


def test_a_user_who_is_not_staff_sees_no_entry_and_no_page():
    user = User.objects.create_user("member", password="unused", is_staff=False)
    user.user_permissions.add(Permission.objects.get(codename="view_observededge"))
    client = Client()
    client.force_login(user)
    for path in (reverse("admin:index"), CATALOG, CONNECTOME):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith(reverse("admin:login"))


def test_the_entries_add_no_permission_and_no_other_admin_url():
    names = set(
        Permission.objects.filter(content_type__app_label="beammcp_django").values_list(
            "codename", flat=True
        )
    )
    actions = ("add", "change", "delete", "view")
    # The three models' own; the catalog's and the connectome's proxies add none.
    assert names == {
        f"{action}_{model}"
        for action in actions
        for model in ("observededge", "mcptask", "mcphandle")
    }
    # A proxy's default admin URLs would show observed edges to staff without the view
    # permission (<id>/change/ through the catalog's proxy): none of them exists.
    client = staff()
    row = store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo")
    for model in ("mcpcatalog", "connectome"):
        for suffix, args in (("add", ()), ("change", (str(row.pk),)), ("history", (str(row.pk),))):
            with pytest.raises(NoReverseMatch):
                url(suffix, *args, model=model)
    assert client.get(f"{CATALOG}{row.pk}/change/").status_code == 404


def test_the_first_urls_of_the_pages_redirect_to_their_entries(admin_client):
    echo = node_id(SERVER, "tool", "echo")
    moved = {
        url("catalog"): CATALOG,
        url("catalog_entry", "tool", "echo"): entry_url("tool", "echo"),
        f"{url('connectome')}?{urlencode({'node': echo})}": (
            f"{CONNECTOME}?{urlencode({'node': echo})}"
        ),
        f"{url('connectome_export', 'diff')}?algorithm=sha512": (
            f"{export_url('diff')}?algorithm=sha512"
        ),
    }
    for old, new in moved.items():
        response = admin_client.get(old)
        assert (response.status_code, response["Location"]) == (301, new), old
    assert admin_client.get(export_url("diff"), {"algorithm": "sha512"}).status_code == 200


# -- the catalog ------------------------------------------------------------------------------


def test_the_catalog_lists_every_tool_resource_template_and_prompt_of_the_sample(admin_client):
    page = text(admin_client.get(CATALOG))
    names = [spec.name for spec in (*site.tools, *site.prompts)]
    names += [getattr(spec, "uri", None) or spec.uri_template for spec in site.resources]
    assert len(names) >= 9
    for name in names:
        assert f">{name}</a>" in page, name
    assert "application/json" in page  # resources show their mimeType


def test_every_catalog_entry_links_to_its_page_and_its_connectome_node(admin_client):
    page = text(admin_client.get(CATALOG))
    echo = node_id(SERVER, "tool", "echo")
    assert entry_url("tool", "echo") in page
    assert f"{CONNECTOME}?{urlencode({'node': echo})}#edges" in page
    template = next(spec for spec in site.resources if isinstance(spec, ResourceTemplateSpec))
    # A URI travels in one path segment through the admin's own quoting.
    template_url = entry_url("template", quote(template.uri_template))
    assert template_url in page
    entry = text(admin_client.get(template_url))
    assert template.uri_template in entry
    assert node_id(SERVER, "resource", template.uri_template) in entry


def test_a_tool_page_shows_its_schema_properties_output_schema_and_annotations(admin_client):
    page = text(admin_client.get(entry_url("tool", "get_forecast")))
    properties = page.split('id="input-schema"', 1)[1].split("</section>", 1)[0]
    assert '<td class="mcp-code">city</td>' in properties
    assert '<td class="mcp-code">days</td>' in properties
    assert "minimum: 1" in properties and "maximum: 7" in properties and "default: 3" in properties
    assert "enum: [&quot;amsterdam&quot;" in properties
    assert "required" in properties and "optional" in properties
    assert "&quot;additionalProperties&quot;: false" in properties  # the JSON as advertised
    output = page.split('id="output-schema"', 1)[1].split("</section>", 1)[0]
    assert '<td class="mcp-code">days[].condition</td>' in output
    annotations = page.split('id="annotations"', 1)[1].split("</section>", 1)[0]
    assert "readOnlyHint" in annotations and "idempotentHint" in annotations


def test_a_prompt_page_lists_its_arguments(admin_client):
    page = text(admin_client.get(entry_url("prompt", "forecast_briefing")))
    arguments = page.split('id="arguments"', 1)[1].split("</section>", 1)[0]
    assert "city" in arguments and "tone" in arguments
    assert "One of the known stations." in arguments


def test_an_entry_the_catalog_does_not_hold_is_404(admin_client):
    assert admin_client.get(entry_url("tool", "no_such_tool")).status_code == 404
    assert admin_client.get(entry_url("prompt", "echo")).status_code == 404


class HeaderCatalog:
    """A catalog whose one tool mirrors two arguments into headers."""

    tools = (
        ToolSpec(
            "route",
            {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "urgent": {"type": "boolean", "x-mcp-header": "Urgent"},
                    "note": {"type": "string", "maxLength": 80},
                },
                "required": ["region"],
            },
        ),
    )
    resources = ()
    prompts = ()

    def dispatch(self, name, arguments, context):
        return "ok"

    def read_resource(self, match, context):
        raise AssertionError

    def get_prompt(self, name, arguments, context):
        raise AssertionError


HEADER_CATALOG = HeaderCatalog()


def test_a_tool_page_lists_the_arguments_mirrored_into_headers(admin_client, settings):
    settings.BEAMMCP = {
        **settings.BEAMMCP,
        "CATALOG": "tests.admin.test_admin_views.HEADER_CATALOG",
    }
    page = text(admin_client.get(entry_url("tool", "route")))
    headers = page.split('id="header-parameters"', 1)[1].split("</section>", 1)[0]
    assert "Mcp-Param-Region" in headers and "Mcp-Param-Urgent" in headers
    assert "note" not in headers
    assert "maxLength: 80" in page


class GatedCatalog(HeaderCatalog):
    """A catalog whose entries each demand something else of a caller."""

    tools = (
        ToolSpec("open", {"type": "object"}),
        ToolSpec(
            "correct",
            {"type": "object"},
            access=Access(
                gates=(lambda context: True,),
                scopes=frozenset({"demo.write", "demo.read"}),
                shown=("permissions: demo.change_observation",),
            ),
        ),
        ToolSpec("scoped", {"type": "object"}, access=Access(scopes=frozenset({"demo.read"}))),
    )


GATED_CATALOG = GatedCatalog()


def test_the_catalog_and_each_entry_say_who_may_use_it(admin_client, settings):
    settings.BEAMMCP = {**settings.BEAMMCP, "CATALOG": "tests.admin.test_admin_views.GATED_CATALOG"}
    page = admin_client.get(CATALOG).content.decode()
    tools = page.split('id="tools"', 1)[1].split("</section>", 1)[0]
    by_tool = {
        re.search(r'mcp-code" href="[^"]*">([^<]*)</a>', row)[1]: row.split('"mcp-access">')[
            1
        ].split("</td>")[0]
        for row in tools.split("<tr>")[2:]
    }
    assert by_tool["open"] == "every caller the endpoint serves"
    assert "permissions: demo.change_observation" in by_tool["correct"]
    assert "scopes: demo.read demo.write" in by_tool["correct"]
    assert "scopes: demo.read" in by_tool["scoped"] and "permissions" not in by_tool["scoped"]
    entry = text(admin_client.get(entry_url("tool", "correct")))
    assert (
        "permissions: demo.change_observation" in entry and "scopes: demo.read demo.write" in entry
    )


# -- the connectome ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["sha256", "sha384", "sha512"])
def test_each_download_is_the_exact_canonical_export_and_the_page_shows_its_digest(
    admin_client, algorithm
):
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=2)
    page = text(admin_client.get(CONNECTOME, {"algorithm": algorithm}))
    for name in exports.GRAPHS:
        response = admin_client.get(export_url(name), {"algorithm": algorithm})
        expected = exports.export(name, algorithm)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response["Content-Disposition"] == f'attachment; filename="connectome.{name}.json"'
        assert response.content == expected.data
        assert response["Connectome-Digest"] == f"{algorithm}={expected.hexdigest}"
        assert f'id="digest-{name}">{expected.hexdigest}</td>' in page


def test_an_unknown_graph_or_algorithm_is_refused(admin_client):
    assert admin_client.get(export_url("secrets")).status_code == 404
    assert admin_client.get(export_url("diff"), {"algorithm": "md5"}).status_code == 400


def test_the_page_flushes_this_process_counts_before_reading_the_store(admin_client):
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"text": "hi"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    assert "result" in asyncio.run(servers.get_server().handle(message))
    page = text(admin_client.get(CONNECTOME, {"edge_class": "declared_and_observed"}))
    rows = edge_rows(page)
    assert [f"{SERVER}/server", f"{SERVER}/tool/echo"] in [row[1:3] for row in rows]
    attribution = page.split('id="attribution"', 1)[1].split("</section>", 1)[0]
    # This process, named readably, its raw name on hover.
    assert process_name(process_store.node) in attribution
    assert f'<span title="{process_store.node}"><span class="nowrap">' in attribution


def test_the_diff_drawing_styles_each_class_and_labels_observed_edges_with_counts(admin_client):
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=7)
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=5, node="w2")
    store_edge(f"{SERVER}/tool/echo", f"{SERVER}/module/elsewhere/leak/1", count=1)
    svgs = drawings(text(admin_client.get(CONNECTOME)))
    assert set(svgs) == {"declared", "observed", "diff"}
    diff = svgs["diff"]
    both = elements_of_class(diff, "edge", "declared_and_observed")
    assert [first(e, "text").text for e in both] == ["12"]  # summed over both processes
    drift = elements_of_class(diff, "edge", "observed_but_undeclared")
    assert len(drift) == 1 and first(drift[0], "path").get("stroke") == "#e8590c"
    dead = elements_of_class(diff, "edge", "declared_never_observed")
    assert dead and all(first(e, "path").get("stroke-dasharray") for e in dead)
    observed = elements_of_class(svgs["observed"], "edge", "observed")
    assert sorted(first(e, "text").text for e in observed) == ["1", "12"]
    assert len(elements_of_class(svgs["declared"], "node", "tool")) == len(site.tools)


def test_the_filter_form_narrows_the_edge_table_and_the_attribution(admin_client):
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=4)
    store_edge(f"{SERVER}/tool/echo", f"{SERVER}/module/elsewhere/leak/1", count=1)
    everything = edge_rows(text(admin_client.get(CONNECTOME)))
    drift = edge_rows(text(admin_client.get(CONNECTOME, {"edge_class": "observed_but_undeclared"})))
    assert [row[2] for row in drift] == [f"{SERVER}/module/elsewhere/leak/1"]
    reads = edge_rows(text(admin_client.get(CONNECTOME, {"kind": "read"})))
    assert reads and all(row[3] == "read" for row in reads)
    weather = edge_rows(text(admin_client.get(CONNECTOME, {"q": "WEATHER:%2F%2FSTATIONS"})))
    assert weather and all("weather:%2F%2Fstations" in row[1] + row[2] for row in weather)
    echo = node_id(SERVER, "tool", "echo")
    page = text(admin_client.get(CONNECTOME, {"node": echo}))
    touching = edge_rows(page)
    assert touching and all(echo in row[1:3] for row in touching)
    assert len(everything) > len(touching) > len(drift) >= 1
    attribution = page.split('id="attribution"', 1)[1].split("</section>", 1)[0]
    assert attribution.count('class="mcp-attributed"') == 2
    attribution = text(admin_client.get(CONNECTOME, {"kind": "read"})).split('id="attribution"', 1)[
        1
    ]
    assert 'class="mcp-attributed"' not in attribution.split("</section>", 1)[0]


def test_a_node_focused_from_the_catalog_is_highlighted_in_the_drawings(admin_client):
    echo = node_id(SERVER, "tool", "echo")
    svgs = drawings(text(admin_client.get(CONNECTOME, {"node": echo})))
    focused = elements_of_class(svgs["declared"], "node", "focus")
    assert [first(e, "title").text for e in focused] and len(focused) == 1
    assert "echo" in "".join(focused[0].itertext())


def tooltips(svg: ET.Element) -> list[str | None]:
    return [link.get("{http://www.w3.org/1999/xlink}title") for link in svg.iter(f"{SVG}a")]


def assert_no_markup(page: str) -> None:
    assert '<script>alert("x")' not in page
    assert 'onmouseover="alert(1)' not in page


ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"


def section(page: str, anchor: str, end: str = "</section>") -> str:
    return page.split(f'id="{anchor}"', 1)[1].split(end, 1)[0]


def test_markup_in_a_node_id_stays_text_in_the_table_the_attribution_and_the_drawings(
    admin_client, monkeypatch
):
    """Everywhere the page shows an id: the edge table, the attribution, the drawings (whole,
    aggregated and a neighbourhood), the audit's findings, the reach form's suggestions, its
    answer and its refusal, and the catalog's effect summary."""
    hostile_effect = f"{SERVER}/effect/model.write/{HOSTILE}"
    hostile_module = node_id(SERVER, "module", HOSTILE, "f", 1)  # its group keeps the markup
    store_edge(f"{SERVER}/server", HOSTILE, count=1)
    store_edge(f"{SERVER}/tool/echo", hostile_effect, kind="effect", count=2)
    store_edge(f"{SERVER}/tool/echo", hostile_module, count=50)
    query = {
        "node": HOSTILE,
        "reach-graph": "observed",
        "reach-question": "reaches",
        "reach-entry": "tool/echo",
        "reach-effect": hostile_effect,
    }
    page = text(admin_client.get(CONNECTOME, query))
    assert_no_markup(page)
    for anchor in ("edge-table", "attribution", "findings", "reach-answer", "reach-entries"):
        assert ESCAPED in section(page, anchor), anchor
    svgs = drawings(page)  # still well-formed XML
    for name in ("observed", "diff", "neighbourhood"):
        assert HOSTILE in tooltips(svgs[name]), name  # the id arrives as text, exactly
    drawn = page.split('id="drawing-observed"', 1)[1].split("</svg>", 1)[0]
    assert "&lt;script&gt;" in drawn and "<script" not in drawn
    reach = section(page, "drawing-reach", "</svg>")
    assert "&lt;script&gt;" in reach and "<script" not in reach

    refused = text(admin_client.get(CONNECTOME, {**query, "reach-entry": HOSTILE + "x"}))
    assert_no_markup(refused)
    assert ESCAPED in section(refused, "reach-refusal", "</div>")

    monkeypatch.setattr(admin.site._registry[Connectome], "drawing_cap", 1)
    aggregated = text(admin_client.get(CONNECTOME))
    assert_no_markup(aggregated)
    drawn = section(aggregated, "drawing-diff", "</details>")
    assert "Aggregated to fit" in drawn and drawings(aggregated)["diff"] is not None
    assert "&lt;script&gt;" in drawn and "<script" not in drawn

    for page in (admin_client.get(CATALOG), admin_client.get(entry_url("tool", "echo"))):
        shown = text(page)
        assert_no_markup(shown)
        assert ESCAPED in shown.split('class="mcp-tool-effects"', 1)[1]


def test_a_graph_above_the_drawing_cap_is_drawn_aggregated_and_listed_in_full(
    admin_client, monkeypatch
):
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/echo", count=1)
    monkeypatch.setattr(admin.site._registry[Connectome], "drawing_cap", 12)
    page = text(admin_client.get(CONNECTOME))
    svgs = drawings(page)
    assert set(svgs) == {"declared", "observed", "diff"}
    declared = len(exports.declared().graph.edges)
    note = section(page, "note-declared", "</p>")
    assert f"Aggregated to fit the drawing cap of 12: {declared} edges drawn as" in note
    assert "entries by kind" in note  # the sample needs the third level to fit 12
    drawn = elements_of_class(svgs["declared"], "edge", "declared")
    assert 0 < len(drawn) <= 12
    groups = [first(g, "title").text for g in elements_of_class(svgs["declared"], "node", "group")]
    labels = ["".join(g.itertext()) for g in elements_of_class(svgs["declared"], "node", "group")]
    assert groups and any("tool/*" in label and "10 tools" in label for label in labels)
    assert 'id="note-observed"' not in page  # one edge: within the cap, at full detail
    assert len(edge_rows(page)) == declared  # the table still lists every edge


def test_a_store_that_cannot_be_written_canonically_still_shows_and_names_the_cause(
    admin_client,
):
    # Two ids equal after NFC (é composed and decomposed): the format refuses to merge them.
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/caf\u00e9")
    store_edge(f"{SERVER}/server", f"{SERVER}/tool/cafe\u0301")
    page = text(admin_client.get(CONNECTOME))
    assert 'id="refusal-observed"' in page and "after NFC" in page
    assert 'id="digest-declared"' in page  # the declared graph is not affected
    assert len(edge_rows(page)) == len(exports.declared().graph.edges) + 1
    refused = admin_client.get(export_url("observed"))
    assert refused.status_code == 409
    assert "after NFC" in refused.content.decode()


# -- reading at a glance (issue 36) ------------------------------------------------------


def test_a_tool_page_says_whether_it_runs_as_a_task(admin_client):
    optional = text(admin_client.get(entry_url("tool", "seasonal_report")))
    assert "<th>Runs as a task</th><td>when the client can take one" in optional
    never = text(admin_client.get(entry_url("tool", "echo")))
    assert "<th>Runs as a task</th><td>never: in the request" in never


def test_the_catalog_marks_task_tools_and_shows_a_description_s_literals_as_code(admin_client):
    page = text(admin_client.get(CATALOG))
    tools = page.split('id="tools"', 1)[1].split("</section>", 1)[0]
    assert '<span class="mcp-badge">task: optional</span>' in tools
    assert "<code>demo.delete_observation</code>" in tools and "``" not in tools


def test_the_observed_edges_list_names_each_process_readably_and_keeps_its_raw_name(
    admin_client,
):
    raw = "vm:18489:1796526589:fab473e8"
    store_edge("a/tool/x", "a/effect/y", node=raw)
    page = text(admin_client.get(url("changelist")))
    assert f'<span title="{raw}"><span class="nowrap">vm</span>, ' in page
    assert '<span class="nowrap">pid 18489</span>, <span class="nowrap">since 2026-12-06 ' in page


def test_the_observed_edges_list_folds_an_edge_s_processes_into_one_row_linking_to_them(
    admin_client,
):
    one = store_edge("a/tool/x", "a/effect/y", count=3, node="vm:1:1796526589:aa")
    store_edge("a/tool/x", "a/effect/y", count=4, node="vm:2:1796526590:bb")
    store_edge("a/tool/z", "a/effect/y", count=5, node="vm:1:1796526589:aa")
    page = text(admin_client.get(url("changelist")))
    rows = re.findall(r"<tr>.*?</tr>", page.split("<tbody>", 1)[1], re.S)
    assert len(rows) == 2, rows  # one row an edge
    assert f'<a href="?edge_key={one.edge_key}">2 processes</a>' in rows[0]
    assert '<td class="field-calls">7</td>' in rows[0]
    assert "pid 1</span>" in rows[1] and '<td class="field-calls">5</td>' in rows[1]
    # Node ids as the connectome page's forms take them, whole on hover.
    assert '<span class="mcp-id" title="a/tool/x">tool/x</span>' in rows[0]
    processes = text(admin_client.get(url("changelist"), {"edge_key": one.edge_key}))
    body = processes.split("<tbody>", 1)[1]
    assert body.count("<tr") == 2 and "pid 1</span>" in body and "pid 2</span>" in body
    assert '<td class="field-calls">3</td>' in body and '<td class="field-calls">4</td>' in body
    by_node = text(admin_client.get(url("changelist"), {"node": "vm:1:1796526589:aa"}))
    assert by_node.split("<tbody>", 1)[1].count("<tr") == 2  # that process's rows as stored
    # The filter names each process as the rows do.
    assert by_node.count("vm, pid 1, since") == 1 and "vm, pid 2, since" in by_node
