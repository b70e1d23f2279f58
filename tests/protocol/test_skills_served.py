"""The skills extension served by the core: declared where each revision declares
extensions, ``skills/list`` paged and cache-hinted, ``skills/get``, ``resources/read`` of a
skill's files and ``resources/directory/read``; a skill its caller's gates hide is answered
through every method exactly as one that does not exist, after asking the same gates."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from beammcp_django.protocol.access import Access, InsufficientScope
from beammcp_django.protocol.catalog import ResourceTemplateSpec
from beammcp_django.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from beammcp_django.protocol.request import LegacySession
from beammcp_django.protocol.server import CacheHint
from beammcp_django.protocol.skills import EXTENSION, build_skill

from .conftest import MemoryCatalog, legacy_request, make_server, request
from .test_access import OUTSIDER, STAFFER, Caller, has_role
from .test_server_legacy import handshake


def skill_md(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\n\n# {name}\n".encode()


ASKED: list[str] = []


def counted_staff_gate(context: Any) -> bool:
    ASKED.append("staff")
    return has_role("staff")(context)


STAFF = Access(gates=(counted_staff_gate,), shown=("role staff",))
WRITE = Access(scopes=frozenset({"skills.write"}))


class SkillCatalog(MemoryCatalog):
    def __init__(self, *, skills: bool = True) -> None:
        super().__init__()
        self.skills = (
            (
                build_skill(
                    "open-skill",
                    {
                        "SKILL.md": skill_md("open-skill"),
                        "references/a.md": b"# a\n",
                        "references/b.md": b"# b\n",
                        "references/deeper/c.md": b"# c\n",
                    },
                ),
                build_skill(
                    "staff-skill",
                    {"SKILL.md": skill_md("staff-skill"), "notes/secret.md": b"# secret\n"},
                    access=STAFF,
                ),
                build_skill("write-skill", {"SKILL.md": skill_md("write-skill")}, access=WRITE),
            )
            if skills
            else ()
        )


def serve(server, message, principal=None, scopes=None, session=None):
    return asyncio.run(server.handle(message, principal=principal, scopes=scopes, session=session))


@pytest.fixture
def server():
    return make_server(
        SkillCatalog(), cache_hints={"skills/list": CacheHint(300000, "public")}, legacy=True
    )


def result(server, method, params=None, principal=None, **kw):
    reply = serve(server, request(method, params or {}), principal, **kw)
    assert "error" not in reply, reply
    return reply["result"]


def test_the_extension_is_declared_with_directory_read_beside_resources(server):
    capabilities = result(server, "server/discover")["capabilities"]
    assert capabilities["extensions"] == {EXTENSION: {"directoryRead": True}}
    assert isinstance(capabilities["resources"], dict)


def test_a_2025_11_25_session_is_offered_the_extension_in_initialize_and_served_it(server):
    session = LegacySession()
    handshake(server, session)
    initialized = serve(
        server,
        legacy_request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
        session=LegacySession(),
    )
    assert initialized["result"]["capabilities"]["extensions"] == {
        EXTENSION: {"directoryRead": True}
    }
    listed = serve(server, legacy_request("skills/list", {}), session=session)["result"]
    assert [entry["uri"] for entry in listed["skills"]] == [
        "skill://open-skill/SKILL.md",
        "skill://write-skill/SKILL.md",
    ]
    assert "ttlMs" not in listed and "cacheScope" not in listed  # 2026-07-28's alone
    unknown = serve(
        server,
        legacy_request("resources/read", {"uri": "skill://nothing/SKILL.md"}),
        session=session,
    )
    assert unknown["error"]["code"] == -32002  # 2025-11-25's resource-not-found


def test_a_server_with_no_skill_declares_nothing_and_knows_no_skills_method():
    bare = make_server(SkillCatalog(skills=False))
    assert "extensions" not in result(bare, "server/discover")["capabilities"]
    for method, params in (
        ("skills/list", {}),
        ("skills/get", {"uri": "skill://open-skill/SKILL.md"}),
        ("resources/directory/read", {"uri": "skill://open-skill"}),
    ):
        assert serve(bare, request(method, params))["error"]["code"] == METHOD_NOT_FOUND


def test_the_listing_pages_to_its_end_each_page_hinted_alike():
    paged = make_server(
        SkillCatalog(), page_size=1, cache_hints={"skills/list": CacheHint(300000, "public")}
    )
    seen, cursor, pages = [], None, []
    while True:
        page = result(paged, "skills/list", {"cursor": cursor} if cursor else {}, STAFFER)
        pages.append(page)
        seen += [entry["uri"] for entry in page["skills"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == [
        "skill://open-skill/SKILL.md",
        "skill://staff-skill/SKILL.md",
        "skill://write-skill/SKILL.md",
    ]
    # A list one caller's gates shape is private whatever CACHE_HINTS says.
    assert {(page["ttlMs"], page["cacheScope"]) for page in pages} == {(300000, "private")}


def test_get_answers_the_listed_entry_and_no_cursor(server):
    got = result(server, "skills/get", {"uri": "skill://open-skill/SKILL.md"})
    listed = result(server, "skills/list")["skills"][0]
    assert got["skill"] == listed
    assert "nextCursor" not in got and {"ttlMs", "cacheScope"} <= set(got)


def test_read_serves_a_skill_file_s_bytes_and_a_directory_its_children(server):
    read = result(server, "resources/read", {"uri": "skill://open-skill/references/a.md"})
    assert read["contents"] == [
        {"uri": "skill://open-skill/references/a.md", "mimeType": "text/markdown", "text": "# a\n"}
    ]
    root = result(server, "resources/directory/read", {"uri": "skill://open-skill"})["resources"]
    assert [(c["name"], c["mimeType"]) for c in root] == [
        ("SKILL.md", "text/markdown"),
        ("references", "inode/directory"),
    ]
    listed = json.dumps(result(server, "resources/list")["resources"])
    assert "skill://open-skill/SKILL.md" in listed and "references/a.md" not in listed


def test_a_directory_read_pages_and_refuses_what_is_not_a_directory():
    paged = make_server(SkillCatalog(), page_size=2)
    first = result(paged, "resources/directory/read", {"uri": "skill://open-skill/references"})
    second = result(
        paged,
        "resources/directory/read",
        {"uri": "skill://open-skill/references", "cursor": first["nextCursor"]},
    )
    assert [c["name"] for c in first["resources"] + second["resources"]] == [
        "a.md",
        "b.md",
        "deeper",
    ]
    assert "nextCursor" not in second
    # A cursor of one directory is no position in another.
    elsewhere = serve(
        paged,
        request(
            "resources/directory/read", {"uri": "skill://open-skill", "cursor": first["nextCursor"]}
        ),
    )["error"]
    assert (
        elsewhere["code"] == INVALID_PARAMS
        and "not a cursor this server issued" in elsewhere["message"]
    )
    for uri in ("skill://open-skill/SKILL.md", "skill://open-skill/references/", "skill://x"):
        error = serve(paged, request("resources/directory/read", {"uri": uri}))["error"]
        assert error["code"] == INVALID_PARAMS
        assert error["message"] == f"{uri} is not a directory resource of this server"


def test_an_unknown_skill_is_refused_invalid_params_never_echoing_odd_bytes(server):
    error = serve(server, request("skills/get", {"uri": "skill://nope/SKILL.md"}))["error"]
    assert error == {
        "code": INVALID_PARAMS,
        "message": "no skill is served at skill://nope/SKILL.md",
    }
    odd = serve(server, request("skills/get", {"uri": "skill://<script>/SKILL.md"}))["error"]
    assert odd["message"] == "no skill is served at the requested URI (not shown)"
    traversal = serve(
        server, request("resources/read", {"uri": "skill://open-skill/../staff-skill/SKILL.md"})
    )["error"]
    assert traversal["code"] == INVALID_PARAMS and traversal["message"] == "resource not found"


def swapped(reply: dict[str, Any], hidden: str, unknown: str) -> str:
    return json.dumps(reply).replace(hidden, unknown)


@pytest.mark.parametrize(
    ("method", "hidden", "unknown"),
    [
        ("skills/get", "skill://staff-skill/SKILL.md", "skill://other-skil/SKILL.md"),
        ("resources/read", "skill://staff-skill/SKILL.md", "skill://other-skil/SKILL.md"),
        (
            "resources/read",
            "skill://staff-skill/notes/secret.md",
            "skill://other-skil/notes/nope.md",
        ),
        ("resources/directory/read", "skill://staff-skill", "skill://other-skil"),
        ("resources/directory/read", "skill://staff-skill/notes", "skill://other-skil/notes"),
    ],
)
def test_a_hidden_skill_is_answered_as_an_unknown_one_after_the_same_gates(
    server, method, hidden, unknown
):
    """Same bytes (the URI asked for aside) and the same gates asked: no oracle."""
    ASKED.clear()
    hidden_reply = serve(server, request(method, {"uri": hidden}), OUTSIDER)
    asked_for_hidden = list(ASKED)
    ASKED.clear()
    unknown_reply = serve(server, request(method, {"uri": unknown}), OUTSIDER)
    assert swapped(hidden_reply, hidden, unknown) == json.dumps(unknown_reply)
    assert asked_for_hidden == ASKED == ["staff"]
    shown = serve(server, request(method, {"uri": hidden}), STAFFER)
    assert "result" in shown


def test_a_hidden_skill_is_in_no_list(server):
    for method, field in (("skills/list", "skills"), ("resources/list", "resources")):
        outsider = json.dumps(result(server, method, principal=OUTSIDER)[field])
        staffer = json.dumps(result(server, method, principal=STAFFER)[field])
        assert "staff-skill" not in outsider and "staff-skill" in staffer
    assert result(server, "skills/list", principal=Caller("ada"))["cacheScope"] == "private"


def test_a_scoped_skill_is_listed_and_its_use_challenged(server):
    listed = result(server, "skills/list", principal=OUTSIDER, scopes=frozenset())["skills"]
    assert "skill://write-skill/SKILL.md" in [entry["uri"] for entry in listed]
    for method, uri in (
        ("skills/get", "skill://write-skill/SKILL.md"),
        ("resources/read", "skill://write-skill/SKILL.md"),
        ("resources/directory/read", "skill://write-skill"),
    ):
        with pytest.raises(InsufficientScope):
            serve(server, request(method, {"uri": uri}), OUTSIDER, frozenset())
        granted = serve(
            server, request(method, {"uri": uri}), OUTSIDER, frozenset({"skills.write"})
        )
        assert "result" in granted


class TemplatedSkills(SkillCatalog):
    """A host template serving every skill:// URI no skill serves."""

    def __init__(self) -> None:
        super().__init__()
        self.resources = (*self.resources, ResourceTemplateSpec("skill://{+path}", "any-skill"))

    def read_resource(self, match: Any, context: Any) -> Any:
        self.calls.append(("template", match.uri))
        return f"the host's {match.variables['path']}"


def test_a_hidden_skill_s_file_falls_through_to_a_template_as_an_unknown_uri_does():
    """A host template matching skill:// URIs answers a hidden skill's file as it answers
    any URI no skill serves: the skill's presence shows nowhere."""
    catalog = TemplatedSkills()
    server = make_server(catalog)
    hidden = serve(
        server, request("resources/read", {"uri": "skill://staff-skill/SKILL.md"}), OUTSIDER
    )
    unknown = serve(
        server, request("resources/read", {"uri": "skill://other-skil/SKILL.md"}), OUTSIDER
    )
    assert swapped(hidden, "staff-skill", "other-skil") == json.dumps(unknown)
    assert catalog.calls == [
        ("template", "skill://staff-skill/SKILL.md"),
        ("template", "skill://other-skil/SKILL.md"),
    ]
    shown = serve(
        server, request("resources/read", {"uri": "skill://staff-skill/SKILL.md"}), STAFFER
    )
    assert shown["result"]["contents"][0]["text"].startswith("---\nname: staff-skill")


def test_a_skill_inside_another_s_folder_is_refused_by_the_audit():
    """Two skills serving one URI would split it between two manifests."""
    from beammcp_django.protocol.audit import audit
    from beammcp_django.protocol.skills import REPEATED_SKILL

    catalog = SkillCatalog(skills=False)
    catalog.skills = (
        build_skill("outer", {"SKILL.md": skill_md("outer"), "inner/SKILL.md": skill_md("inner")}),
        build_skill("inner", {"SKILL.md": skill_md("inner")}, prefix="outer"),
    )
    (problem,) = [p for p in audit(catalog) if p.rule == REPEATED_SKILL]
    assert problem.subject == "skill 'skill://outer/inner/SKILL.md'"
    assert "serves skill://outer/inner/SKILL.md, which the skill 'skill://outer/SKILL.md'" in (
        problem.message
    )


def test_a_session_subscribes_to_a_skill_file_it_may_read_and_no_other():
    server = make_server(SkillCatalog(), legacy=True, subscriptions=True)
    session = LegacySession()
    handshake(server, session)

    def subscribe(uri: str, principal: Any) -> dict[str, Any]:
        message = legacy_request("resources/subscribe", {"uri": uri})
        return serve(server, message, principal, session=session)

    assert subscribe("skill://open-skill/SKILL.md", OUTSIDER) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    hidden = subscribe("skill://staff-skill/SKILL.md", OUTSIDER)
    unknown = subscribe("skill://other-skil/SKILL.md", OUTSIDER)
    assert swapped(hidden, "staff-skill", "other-skil") == json.dumps(unknown)
    assert hidden["error"]["code"] == -32002
    assert "result" in subscribe("skill://staff-skill/SKILL.md", STAFFER)
