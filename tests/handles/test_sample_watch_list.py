"""The sample's watch list (``sample_project/demo/mcp.py``): a handle the forecast tools read,
made, grown and read by one caller, unknown to another, its lifetime in the listing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from beammcp_django.test import McpClient

pytestmark = pytest.mark.django_db


def as_user(name: str) -> McpClient:
    return McpClient("2025-11-25", user=User.objects.get_or_create(username=name)[0])


def test_a_watch_list_is_made_grown_and_read_by_its_caller_alone():
    ada = as_user("ada")
    made = ada.call_tool("create_watch_list", {"cities": ["oslo"]}).structured
    assert made["cities"] == ["oslo"]
    handle = made["watch_list_id"]
    grown = ada.call_tool("watch_city", {"watch_list_id": handle, "city": "lisbon"})
    assert grown.text == "Watching Lisbon, Oslo."
    forecast = ada.call_tool("watched_forecast", {"watch_list_id": handle}).text.splitlines()
    assert [line.split(":")[0] for line in forecast] == ["Lisbon", "Oslo"]
    other = as_user("bob").call_tool("watched_forecast", {"watch_list_id": handle})
    assert (other.is_error, other.text) == (
        True,
        "watch list wl_… expired or unknown: create a new one",
    )


def test_the_listing_tells_the_model_how_long_a_watch_list_lives():
    tools = {tool["name"]: tool for tool in McpClient().list_tools()}
    assert tools["create_watch_list"]["description"].endswith(
        "Watch lists expire after 1 hour unused and 1 day after they are made; one caller may "
        "hold 20 at once."
    )
