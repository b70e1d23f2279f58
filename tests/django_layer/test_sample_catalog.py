"""The sample project's weather catalog, served through ``servers.get_server()``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from jsonschema import Draft202012Validator

from beammcp_django import process as servers
from beammcp_django.protocol.audit import audit
from beammcp_django.registry import site
from sample_project.demo.mcp import STATIONS, GetForecast, made_up_day
from sample_project.demo.models import Observation
from tests.support import SAMPLE_TOOLS

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def handle(
    method: str, params: dict[str, Any] | None = None, principal: Any = None
) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = META
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}
    reply = asyncio.run(servers.get_server().handle(message, principal=principal))
    assert reply is not None
    return reply


def result(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = handle(method, params)
    assert "result" in reply, reply
    return reply["result"]


def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return result("tools/call", {"name": name, "arguments": arguments})


# -- the catalog itself ----------------------------------------------------------------------


def test_the_demo_catalog_is_the_served_catalog():
    assert servers.get_server().catalog is site


def test_the_demo_catalog_passes_the_audit_with_no_problems():
    assert audit(site) == []
    assert site.problems() == []


def test_the_demo_catalog_lists_every_kind_of_declaration():
    assert [t["name"] for t in result("tools/list")["tools"]] == SAMPLE_TOOLS
    # The connectome resources are the admin's rule's (a staff user with the view permission
    # on observed edges): an anonymous caller is not shown them, a superuser is.
    # The sample's skill (its demo app's skills/ folder) lists its SKILL.md among them.
    assert [r["uri"] for r in result("resources/list")["resources"]] == [
        "skill://reading-the-forecast/SKILL.md",
        "ui://weather/forecast-chart",
        "weather://stations",
    ]
    superuser = User(username="root", is_active=True, is_staff=True, is_superuser=True)
    listed = handle("resources/list", principal=superuser)["result"]["resources"]
    assert [r["uri"] for r in listed] == [
        "connectome://declared",
        "connectome://diff",
        "connectome://observed",
        "skill://reading-the-forecast/SKILL.md",
        "ui://weather/forecast-chart",
        "weather://stations",
    ]
    assert [s["uri"] for s in result("skills/list")["skills"]] == [
        "skill://reading-the-forecast/SKILL.md"
    ]
    templates = result("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["weather://observations/{city}"]
    assert [p["name"] for p in result("prompts/list")["prompts"]] == ["forecast_briefing"]
    assert "completions" in result("server/discover")["capabilities"]


# -- tools -----------------------------------------------------------------------------------


def test_echo_answers_one_text_block_with_its_text():
    called = call_tool("echo", {"text": "hello, weather"})
    assert called["content"] == [{"type": "text", "text": "hello, weather"}]
    assert "isError" not in called
    assert "structuredContent" not in called


def test_echo_without_text_is_a_tool_error_naming_the_missing_argument():
    called = call_tool("echo", {})
    assert called["isError"] is True
    assert "text" in called["content"][0]["text"]


def test_get_forecast_structured_content_validates_against_its_output_schema():
    called = call_tool("get_forecast", {"city": "oslo", "days": 2})
    structured = called["structuredContent"]
    Draft202012Validator(GetForecast.output_schema).validate(structured)
    assert structured == {
        "city": "Oslo",
        "days": [made_up_day("oslo", 1), made_up_day("oslo", 2)],
    }
    assert json.loads(called["content"][0]["text"]) == structured


def test_get_forecast_defaults_to_three_days():
    structured = call_tool("get_forecast", {"city": "lisbon"})["structuredContent"]
    assert [day["day"] for day in structured["days"]] == [1, 2, 3]


def test_get_forecast_refuses_an_unknown_city():
    called = call_tool("get_forecast", {"city": "atlantis"})
    assert called["isError"] is True


@pytest.mark.django_db(transaction=True)
def test_record_observation_writes_an_observation_row():
    called = call_tool("record_observation", {"city": "oslo", "temperature_c": 12.5})
    assert called["content"][0]["type"] == "text"
    assert "12.5" in called["content"][0]["text"]
    assert "Oslo" in called["content"][0]["text"]
    rows = list(Observation.objects.values_list("city", "temperature_c"))
    assert rows == [("oslo", 12.5)]


@pytest.mark.django_db(transaction=True)
def test_the_observations_template_reads_a_recorded_observation_back():
    call_tool("record_observation", {"city": "oslo", "temperature_c": -3.0})
    call_tool("record_observation", {"city": "lisbon", "temperature_c": 21.0})
    read = result("resources/read", {"uri": "weather://observations/oslo"})
    (contents,) = read["contents"]
    assert contents["uri"] == "weather://observations/oslo"
    assert contents["mimeType"] == "application/json"
    body = json.loads(contents["text"])
    assert body["city"] == "oslo"
    assert [o["temperature_c"] for o in body["observations"]] == [-3.0]


@pytest.mark.django_db(transaction=True)
def test_the_observations_template_refuses_an_unknown_city_as_not_found():
    reply = handle("resources/read", {"uri": "weather://observations/atlantis"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"] == {"uri": "weather://observations/atlantis"}


def test_the_stations_resource_lists_every_station():
    (contents,) = result("resources/read", {"uri": "weather://stations"})["contents"]
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"]) == STATIONS


# -- prompt and completion -------------------------------------------------------------------


def test_the_forecast_briefing_prompt_renders():
    got = result(
        "prompts/get",
        {"name": "forecast_briefing", "arguments": {"city": "Oslo", "tone": "cheerful"}},
    )
    assert got["description"] == "Briefing for Oslo"
    first, second = got["messages"]
    assert first["role"] == "user"
    assert first["content"]["type"] == "text"
    assert "cheerful" in first["content"]["text"]
    assert "Oslo" in first["content"]["text"]
    assert second["content"]["type"] == "resource_link"
    assert second["content"]["uri"] == "weather://stations"


def test_the_forecast_briefing_prompt_requires_a_city():
    reply = handle("prompts/get", {"name": "forecast_briefing", "arguments": {}})
    assert reply["error"]["code"] == -32602
    assert "city" in reply["error"]["message"]


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": "forecast_briefing"},
        {"type": "ref/resource", "uri": "weather://observations/{city}"},
    ],
    ids=["prompt", "template"],
)
def test_completion_of_the_city_prefix_o_gives_oslo(ref):
    completed = result(
        "completion/complete", {"ref": ref, "argument": {"name": "city", "value": "o"}}
    )
    assert completed["completion"] == {"values": ["oslo"]}


def test_completion_of_an_empty_city_gives_every_station():
    completed = result(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "forecast_briefing"},
            "argument": {"name": "city", "value": ""},
        },
    )
    assert completed["completion"]["values"] == sorted(STATIONS)
