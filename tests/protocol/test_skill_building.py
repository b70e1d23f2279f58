"""A skill built from its files (``protocol/skills.py``): the frontmatter as the author
wrote it, every digest the SHA-256 of the bytes handed in, every rule of the extension's
page refused by name with the rule the system checks give an id."""

from __future__ import annotations

import base64
import hashlib

import pytest

from beammcp_django.protocol.skills import (
    MAX_BYTES,
    MAX_FILES,
    SKILL_FRONTMATTER,
    SKILL_LIMITS,
    SKILL_NAME,
    SKILL_PATH,
    SkillProblem,
    build_skill,
)

SKILL_MD = (
    b"---\n"
    b"name: pdf-processing\n"
    b"description: Extract, fill and assemble PDF documents\n"
    b"license: Apache-2.0\n"
    b"metadata:\n"
    b"  version: '2.1'\n"
    b"  released: 2026-09-13\n"
    b"  tags: [pdf, forms]\n"
    b"---\n"
    b"\n"
    b"# PDF processing\n"
)
FILES = {
    "SKILL.md": SKILL_MD,
    "templates/invoice.md": "# Invoice\r\nTotal: 12 €\r\n".encode(),
    "templates/regional/eu-invoice.md": b"# EU invoice\n",
    "scripts/extract.py": b"print('extract')\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\xff\xfe",
}


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def refused(rule: str, files: dict[str, bytes], name: str = "pdf-processing", **kw) -> str:
    with pytest.raises(SkillProblem) as problem:
        build_skill(name, files, **kw)
    assert problem.value.rule == rule, problem.value.message
    return problem.value.message


def test_the_entry_is_a_complete_manifest_of_the_bytes_handed_in_skill_md_first():
    skill = build_skill("pdf-processing", FILES)
    entry = skill.to_wire()
    assert entry["uri"] == "skill://pdf-processing/SKILL.md"
    assert [item["uri"] for item in entry["resources"]] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets/logo.png",
        "skill://pdf-processing/scripts/extract.py",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/regional/eu-invoice.md",
    ]
    for item in entry["resources"]:
        content = FILES[item["uri"].removeprefix("skill://pdf-processing/")]
        assert item == {"uri": item["uri"], "digest": digest(content), "size": len(content)}


def test_the_frontmatter_is_the_author_s_every_field_dates_kept_as_written():
    frontmatter = build_skill("pdf-processing", FILES).to_wire()["frontmatter"]
    assert frontmatter == {
        "name": "pdf-processing",
        "description": "Extract, fill and assemble PDF documents",
        "license": "Apache-2.0",
        "metadata": {"version": "2.1", "released": "2026-09-13", "tags": ["pdf", "forms"]},
    }


def test_each_file_reads_back_as_the_exact_bytes_its_digest_covers():
    skill = build_skill("pdf-processing", FILES)
    for file in skill.files:
        contents = file.contents
        if "text" in contents:
            served = contents["text"].encode("utf-8")
        else:
            served = base64.b64decode(contents["blob"])
        assert served == FILES[file.path]
        assert digest(served) == file.digest and len(served) == file.size
    by_path = {file.path: file for file in skill.files}
    assert by_path["SKILL.md"].mime_type == "text/markdown"
    assert by_path["assets/logo.png"].contents["mimeType"] == "image/png"
    assert "blob" in by_path["assets/logo.png"].contents
    assert by_path["scripts/extract.py"].mime_type == "text/x-python"


def test_the_resources_list_item_is_named_and_described_from_the_frontmatter():
    assert build_skill("pdf-processing", FILES).resource_wire() == {
        "uri": "skill://pdf-processing/SKILL.md",
        "name": "pdf-processing",
        "description": "Extract, fill and assemble PDF documents",
        "mimeType": "text/markdown",
        "size": len(SKILL_MD),
    }


def test_every_directory_lists_its_direct_children_subdirectories_as_directories():
    skill = build_skill("pdf-processing", FILES, prefix="acme/billing")
    root = "skill://acme/billing/pdf-processing"
    assert skill.uri == f"{root}/SKILL.md"
    assert [(c["name"], c["mimeType"]) for c in skill.directories[root]] == [
        ("SKILL.md", "text/markdown"),
        ("assets", "inode/directory"),
        ("scripts", "inode/directory"),
        ("templates", "inode/directory"),
    ]
    assert [c["uri"] for c in skill.directories[f"{root}/templates"]] == [
        f"{root}/templates/invoice.md",
        f"{root}/templates/regional",
    ]
    assert set(skill.directories) == {
        root,
        f"{root}/assets",
        f"{root}/scripts",
        f"{root}/templates",
        f"{root}/templates/regional",
    }


@pytest.mark.parametrize(
    ("skill_md", "cause"),
    [
        (b"# no frontmatter\n", "does not begin with YAML frontmatter"),
        (b"---\nname: pdf-processing\n", "no closing '---' line"),
        (b"---\nname: pdf-processing\n---\n", "no 'description'"),
        (b"---\nname: pdf-processing\ndescription: ''\n---\n", "no 'description'"),
        (b"---\n- a list\n---\n", "not a mapping of fields"),
        (b"---\nname: [unclosed\n---\n", "is not valid YAML (line 2)"),
        (b"\xff\xfe---\n", "is not UTF-8"),
        (
            b"---\nname: pdf-processing\ndescription: x\n1: one\n---\n",
            "the key '1', which is not a string",
        ),
        (
            b"---\nname: pdf-processing\ndescription: x\nbase: &b {a: 1}\nagain: *b\n---\n",
            "anchors or aliases",
        ),
        (
            b"---\nname: pdf-processing\ndescription: !!python/object/apply:os.system ['true']\n"
            b"---\n",
            "is not valid YAML",
        ),
        (b"---\nname: pdf-processing\ndescription: x\nwhen: !!binary aGk=\n---\n", "YAML bytes"),
        (b"---\nname: pdf-processing\ndescription: x\nn: .nan\n---\n", "JSON cannot carry"),
        (
            b"---\nname: pdf-processing\ndescription: x\nname: other\n---\n",
            "has the key 'name' twice (line 4): parsers disagree on which wins",
        ),
        (b"---\nname: pdf-processing\ndescription: x\nok: yes\n---\n", "value 'yes' (line 4)"),
        (b"---\nname: pdf-processing\ndescription: x\nmode: 010\n---\n", "value '010'"),
        (b"---\nname: pdf-processing\ndescription: x\nt: 1:30\n---\n", "value '1:30'"),
        (b"---\nname: pdf-processing\ndescription: x\nn: 1_000\n---\n", "value '1_000'"),
        (b"---\nname: pdf-processing\ndescription: x\nn: 1e3\n---\n", "YAML 1.2 does not"),
        (b"---\nname: pdf-processing\ndescription: x\nn: " + b"[" * 5000 + b"\n---\n", "nests"),
        (
            b"---\nname: pdf-processing\ndescription: x\nn: " + b"[" * 70 + b"]" * 70 + b"\n---\n",
            "nests past 64 levels",
        ),
    ],
)
def test_a_skill_md_without_usable_frontmatter_is_refused_by_name(skill_md, cause):
    assert cause in refused(SKILL_FRONTMATTER, {"SKILL.md": skill_md})


def test_values_both_yaml_revisions_read_alike_are_served_as_written():
    agreed = (
        b"---\nname: pdf-processing\ndescription: x\nflags: [true, false, null]\n"
        b"numbers: [0, -7, 1.5, 2.0e+3, 0x1F]\nquoted: ['yes', '010', \"1:30\"]\n---\n"
    )
    frontmatter = build_skill("pdf-processing", {"SKILL.md": agreed}).frontmatter
    assert frontmatter["flags"] == [True, False, None]
    assert frontmatter["numbers"] == [0, -7, 1.5, 2000.0, 31]
    assert frontmatter["quoted"] == ["yes", "010", "1:30"]


def test_a_description_past_1024_characters_is_refused():
    long = b"---\nname: pdf-processing\ndescription: " + b"x" * 1025 + b"\n---\n"
    assert "1025 characters" in refused(SKILL_FRONTMATTER, {"SKILL.md": long})


def test_a_skill_without_skill_md_is_refused():
    assert "has no SKILL.md" in refused(SKILL_FRONTMATTER, {"README.md": b"x"})


@pytest.mark.parametrize("name", ["PDF", "pdf--processing", "-pdf", "pdf-", "a" * 65, "pdf_x", ""])
def test_a_name_off_the_agent_skills_rule_is_refused(name):
    assert "Agent Skills rule" in refused(SKILL_NAME, FILES, name=name)


def test_a_frontmatter_name_that_is_not_the_folder_s_is_refused():
    message = refused(SKILL_NAME, FILES, name="pdf")
    assert "names it 'pdf-processing', but its folder" in message


@pytest.mark.parametrize("prefix", ["Acme", "acme//billing", "acme/..", "acme/a b"])
def test_a_prefix_that_is_not_uri_segments_is_refused(prefix):
    assert "is not '/'-separated URI segments" in refused(SKILL_NAME, FILES, prefix=prefix)


@pytest.mark.parametrize(
    ("path", "cause"),
    [
        ("../settings.py", "'.' or '..' segment"),
        ("templates/../../etc/passwd", "'.' or '..' segment"),
        ("./SKILL.md", "'.' or '..' segment"),
        ("/etc/passwd", "is not relative"),
        ("templates//x.md", "is not relative"),
        ("my notes.md", "is not relative"),
        ("templates\\x.md", "is not relative"),
    ],
)
def test_a_path_that_leaves_or_cannot_be_a_uri_is_refused(path, cause):
    assert cause in refused(SKILL_PATH, {**FILES, path: b"x"})


def test_a_path_both_a_file_and_a_directory_is_refused():
    message = refused(SKILL_PATH, {**FILES, "templates": b"x"})
    assert "'templates' both as a file and as a directory" in message


def test_the_extension_s_limits_are_refused_past_them_and_served_at_them():
    at_limit = {"SKILL.md": SKILL_MD} | {f"n/{n}": b"" for n in range(MAX_FILES - 1)}
    assert len(build_skill("pdf-processing", at_limit).files) == MAX_FILES
    over = {**at_limit, "n/one-more": b""}
    assert f"has {MAX_FILES + 1} files" in refused(SKILL_LIMITS, over)
    heavy = {"SKILL.md": SKILL_MD, "big.bin": b"\0" * (MAX_BYTES - len(SKILL_MD))}
    assert build_skill("pdf-processing", heavy).size == MAX_BYTES
    heavier = {**heavy, "one.bin": b"\0"}
    assert f"has {MAX_BYTES + 1} bytes" in refused(SKILL_LIMITS, heavier)
