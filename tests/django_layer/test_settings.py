"""``settings.BEAMMCP``: merged over defaults, read once, re-read on ``override_settings``,
and reaching the served results (cache hints, page size, serverInfo)."""

from __future__ import annotations

import asyncio
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings

import beammcp_django
from beammcp_django import process as servers
from beammcp_django.conf import DEFAULTS, get_settings
from beammcp_django.protocol.server import Server

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def result(
    server: Server, method: str, params: dict[str, Any] | None = None, principal: Any = None
) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = META
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}
    reply = asyncio.run(server.handle(message, principal=principal))
    assert reply is not None and "result" in reply, reply
    return reply["result"]


# -- merging ---------------------------------------------------------------------------------


def test_an_empty_beammcp_dict_gives_exactly_the_defaults():
    with override_settings(BEAMMCP={}):
        assert get_settings() == DEFAULTS


def test_a_missing_beammcp_setting_gives_exactly_the_defaults():
    with override_settings(BEAMMCP=None):
        assert get_settings() == DEFAULTS


def test_configured_keys_are_merged_over_the_defaults():
    with override_settings(BEAMMCP={"PAGE_SIZE": 7, "SERVER_NAME": "merged"}):
        values = get_settings()
    assert values["PAGE_SIZE"] == 7
    assert values["SERVER_NAME"] == "merged"
    for key, default in DEFAULTS.items():
        if key not in ("PAGE_SIZE", "SERVER_NAME"):
            assert values[key] == default, key


def test_merging_does_not_change_the_defaults():
    snapshot = dict(DEFAULTS)
    with override_settings(BEAMMCP={"PAGE_SIZE": 9}):
        get_settings()
    assert snapshot == DEFAULTS


def test_unknown_keys_are_kept_so_the_check_can_name_them():
    with override_settings(BEAMMCP={"SERVER_NAEM": "typo"}):
        assert get_settings()["SERVER_NAEM"] == "typo"


def test_settings_are_read_once_and_again_after_override_settings():
    outer = get_settings()
    assert get_settings() is outer
    assert outer["SERVER_NAME"] == settings.BEAMMCP["SERVER_NAME"]
    with override_settings(BEAMMCP={"SERVER_NAME": "inner"}):
        inner = get_settings()
        assert inner is not outer
        assert inner["SERVER_NAME"] == "inner"
    assert get_settings()["SERVER_NAME"] == settings.BEAMMCP["SERVER_NAME"]


# -- reaching the server ---------------------------------------------------------------------


def test_the_sample_cache_hints_reach_tools_list():
    listed = result(servers.get_server(), "tools/list")
    assert listed["ttlMs"] == 60_000
    # CACHE_HINTS says public, but delete_observation is shown only to permitted users: a
    # list that depends on who asks is private.
    assert listed["cacheScope"] == "private"


def test_overridden_cache_hints_reach_the_results_and_unlisted_methods_stay_private():
    hints = {
        "tools/list": {"ttl_ms": 1234, "scope": "public"},
        "resources/read": {"ttl_ms": 5},
    }
    with override_settings(BEAMMCP={"CACHE_HINTS": hints}):
        server = servers.get_server()
        tools = result(server, "tools/list")
        prompts = result(server, "prompts/list")
        read = result(server, "resources/read", {"uri": "weather://stations"})
    assert (tools["ttlMs"], tools["cacheScope"]) == (1234, "private")  # a gated tool
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (0, "private")
    assert (read["ttlMs"], read["cacheScope"]) == (5, "private")


def test_page_size_is_honoured_and_the_cursor_gives_the_rest():
    with override_settings(BEAMMCP={"PAGE_SIZE": 2}):
        server = servers.get_server()
        first = result(server, "tools/list")
        second = result(server, "tools/list", {"cursor": first["nextCursor"]})
        third = result(server, "tools/list", {"cursor": second["nextCursor"]})
        fourth = result(server, "tools/list", {"cursor": third["nextCursor"]})
    assert [tool["name"] for tool in first["tools"]] == ["create_watch_list", "current_conditions"]
    assert [tool["name"] for tool in second["tools"]] == ["echo", "get_forecast"]
    assert [tool["name"] for tool in third["tools"]] == ["record_observation", "seasonal_report"]
    assert [tool["name"] for tool in fourth["tools"]] == ["watch_city", "watched_forecast"]
    assert "nextCursor" not in fourth


def test_a_page_size_of_one_pages_every_list():
    with override_settings(BEAMMCP={"PAGE_SIZE": 1}):
        server = servers.get_server()
        tools = result(server, "tools/list")
        # A superuser, who is shown the connectome resources beside the stations.
        root = User(username="root", is_active=True, is_staff=True, is_superuser=True)
        resources = result(server, "resources/list", principal=root)
    assert len(tools["tools"]) == 1 and "nextCursor" in tools
    assert len(resources["resources"]) == 1 and "nextCursor" in resources


def test_server_name_version_and_title_are_the_server_info_in_meta():
    configured = {"SERVER_NAME": "weather-host", "SERVER_VERSION": "4.2.0", "SERVER_TITLE": "W"}
    with override_settings(BEAMMCP=configured):
        discovered = result(servers.get_server(), "server/discover")
    assert discovered["_meta"][SERVER_INFO] == {
        "name": "weather-host",
        "version": "4.2.0",
        "title": "W",
    }


def test_without_server_version_the_package_version_is_used():
    with override_settings(BEAMMCP={"SERVER_NAME": "weather-host"}):
        listed = result(servers.get_server(), "tools/list")
    assert listed["_meta"][SERVER_INFO] == {
        "name": "weather-host",
        "version": beammcp_django.__version__,
    }


def test_the_sample_settings_name_the_server_and_give_instructions():
    discovered = result(servers.get_server(), "server/discover")
    assert discovered["_meta"][SERVER_INFO]["name"] == "beammcp-sample-weather"
    assert discovered["_meta"][SERVER_INFO]["title"] == "Sample weather service"
    assert discovered["instructions"] == settings.BEAMMCP["INSTRUCTIONS"]


# -- the cached server -----------------------------------------------------------------------


def test_the_server_is_built_once_and_rebuilt_after_override_settings():
    outer = servers.get_server()
    assert servers.get_server() is outer
    with override_settings(BEAMMCP={"SERVER_NAME": "inner"}):
        inner = servers.get_server()
        assert inner is not outer
        assert inner.options.name == "inner"
        assert servers.get_server() is inner
    restored = servers.get_server()
    assert restored is not inner
    assert restored.options.name == settings.BEAMMCP["SERVER_NAME"]


def test_the_stdio_server_is_separate_and_also_rebuilt():
    http, legacy = servers.get_server(), servers.get_server(stdio=True)
    assert http is not legacy
    # Both speak 2025-11-25 (HTTP unless HTTP_LEGACY_SESSIONS is off); HTTP alone holds
    # change streams (subscriptions/listen, a session's GET stream).
    assert legacy.options.legacy and http.options.legacy
    assert http.options.subscriptions and not legacy.options.subscriptions
    with override_settings(BEAMMCP={"HTTP_LEGACY_SESSIONS": False}):
        assert not servers.get_server().options.legacy
    with override_settings(BEAMMCP={"PAGE_SIZE": 3}):
        assert servers.get_server(stdio=True) is not legacy
        assert servers.get_server(stdio=True).options.page_size == 3


def test_a_new_secret_key_rebuilds_the_server_and_old_cursors_are_refused():
    with override_settings(BEAMMCP={"PAGE_SIZE": 1}):
        cursor = result(servers.get_server(), "tools/list")["nextCursor"]
        with override_settings(SECRET_KEY="a-different-secret-key-for-this-test"):
            server = servers.get_server()
            body = {"cursor": cursor, "_meta": META}
            reply = asyncio.run(
                server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": body})
            )
    assert reply is not None
    assert reply["error"]["code"] == -32602


def test_the_modern_server_is_one_object_however_the_default_is_spelled():
    assert servers.get_server() is servers.get_server(stdio=False)
