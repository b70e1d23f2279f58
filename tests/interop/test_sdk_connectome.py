"""The connectome resources through the official SDK client and a real uvicorn process, held
byte for byte against ``manage.py mcp_connectome export`` run on the same database."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from tests.http.mcphttp_support import (
    MODERN,
    ServerProcess,
    server_env,
    start_server,
)
from tests.interop.test_sdk_http_client import run
from tests.support import manage

pytestmark = [pytest.mark.interop, pytest.mark.orm, pytest.mark.one_leg]

SERVER = "beammcp-sample-weather"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("sdk-connectome")
    env = server_env(directory)
    server: ServerProcess = start_server("mcp_serve", env, directory)
    yield server.url, env
    server.stop()


def exported(env: dict[str, str], graph: str, output: Path) -> str:
    """Run the export command on the server's database; the hash line it prints."""
    done = manage(env, "mcp_connectome", "export", f"--{graph}", "-o", str(output))
    return done.stdout.decode().strip()


def read_all(url: str) -> dict[str, str]:
    async def scenario() -> dict[str, str]:
        async with Client(url, mode=MODERN) as client:
            for text in ("one", "two", "three"):
                await client.call_tool("echo", {"text": text})
            texts = {}
            # observed last: each read is itself observed, so nothing may come after it
            # before the command reads the same store.
            for graph in ("declared", "diff", "observed"):
                result = await client.read_resource(f"connectome://{graph}")
                (contents,) = result.contents
                assert contents.mime_type == "application/json"
                texts[graph] = contents.text
            return texts

    return run(scenario)


def test_the_connectome_resources_answer_the_bytes_the_export_command_writes(served, tmp_path):
    url, env = served
    texts = read_all(url)
    for graph, text in texts.items():
        if graph == "diff":
            continue  # read before the observed read above was counted; compared below
        output = tmp_path / f"{graph}.json"
        line = exported(env, graph, output)
        data = output.read_bytes()
        assert text.encode("utf-8") == data, graph
        assert line == f"sha256 {hashlib.sha256(data).hexdigest()}  {output}"


def test_the_observed_resource_counts_the_calls_and_the_diff_classes_them(served, tmp_path):
    url, env = served
    texts = read_all(url)
    observed = json.loads(texts["observed"])
    edges = {(edge["from"], edge["to"], edge["kind"]) for edge in observed["edges"]}
    echo = f"{SERVER}/tool/echo"
    handler = f"{SERVER}/module/sample_project.demo.mcp/Echo.call/3"
    assert (f"{SERVER}/server", echo, "invoke") in edges
    assert (echo, handler, "invoke") in edges
    assert all(
        edge["provenance"] == "observed" and edge["sign"] == "unset" for edge in observed["edges"]
    )
    record = json.loads(texts["diff"])
    both = {(entry["from"], entry["to"]) for entry in record["classes"]["declared_and_observed"]}
    assert {(f"{SERVER}/server", echo), (echo, handler)} <= both
    never = {(entry["from"], entry["to"]) for entry in record["classes"]["declared_never_observed"]}
    assert (f"{SERVER}/server", f"{SERVER}/tool/record_observation") in never
    assert record["window"]["started_at"] <= record["window"]["ended_at"]
    # The diff the command writes now sees the same store: the same bytes.
    output = tmp_path / "diff.json"
    exported(env, "diff", output)
    assert json.loads(output.read_bytes())["coverage"]["observed_edges"] >= 4
