"""The weather catalog's own tests, written as a host team writes them: Django's TestCase and
``beammcp_django.test.McpClient``, through the real MCP endpoint, at both revisions.

docs/testing.md shows this module as its example; pytest collects it (pyproject.toml) and so
does ``python manage.py test sample_project.demo``.
"""

from django.test import TestCase

from beammcp_django.test import McpClient, McpError
from sample_project.demo.models import Observation

# What a host that renders MCP Apps' views declares.
DECLARES_APPS = {
    "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
}


class WeatherToolsTests(TestCase):
    def setUp(self) -> None:
        self.mcp = McpClient()  # 2026-07-28, through the HTTP endpoint

    def test_echo_answers_its_text(self) -> None:
        result = self.mcp.call_tool("echo", {"text": "hello"})
        self.assertFalse(result.is_error)
        self.assertEqual(result.text, "hello")

    def test_the_forecast_is_structured(self) -> None:
        result = self.mcp.call_tool("get_forecast", {"city": "oslo", "days": 2})
        self.assertEqual(result.structured["city"], "Oslo")
        self.assertEqual([day["day"] for day in result.structured["days"]], [1, 2])

    def test_arguments_outside_the_schema_are_a_tool_error(self) -> None:
        result = self.mcp.call_tool("get_forecast", {"city": "oslo", "days": 30})
        self.assertTrue(result.is_error)
        self.assertIn("days", result.text)

    def test_recording_an_observation_writes_a_row(self) -> None:
        result = self.mcp.call_tool("record_observation", {"city": "lisbon", "temperature_c": 21})
        self.assertEqual(result.text, "Recorded 21 °C for Lisbon.")
        # The tool ran inside this test's transaction: the row is here, and is rolled back.
        self.assertEqual(Observation.objects.get().city, "lisbon")

    def test_the_observations_resource_reads_the_test_rows(self) -> None:
        Observation.objects.create(city="oslo", temperature_c=-4.5)
        result = self.mcp.read_resource("weather://observations/oslo")
        self.assertIn('"temperature_c": -4.5', result.text)

    def test_an_unknown_city_is_a_resource_not_found(self) -> None:
        with self.assertRaises(McpError) as raised:
            self.mcp.read_resource("weather://observations/atlantis")
        self.assertEqual(raised.exception.code, -32602)

    def test_the_briefing_prompt_names_the_city(self) -> None:
        result = self.mcp.get_prompt("forecast_briefing", {"city": "nairobi", "tone": "dry"})
        self.assertIn("dry weather briefing for Nairobi", result.text)

    def test_the_catalog_lists_what_it_declares(self) -> None:
        self.assertEqual(
            [tool["name"] for tool in self.mcp.list_tools()],
            [
                "create_watch_list",
                "current_conditions",
                "echo",
                "get_forecast",
                "record_observation",
                "seasonal_report",
                "watch_city",
                "watched_forecast",
            ],
        )
        # The chart's app-only Refresh is listed to a host that declared MCP Apps.
        apps = McpClient(capabilities=DECLARES_APPS)
        self.assertIn("refresh_forecast", [tool["name"] for tool in apps.list_tools()])
        templates = self.mcp.list_resource_templates()
        self.assertEqual([t["uriTemplate"] for t in templates], ["weather://observations/{city}"])


class WeatherToolsAtTheHandshakeRevisionTests(TestCase):
    """2025-11-25, which the sample serves over stdio: the same calls through that core."""

    def test_the_same_tools_answer_after_initialize(self) -> None:
        mcp = McpClient("2025-11-25")
        result = mcp.call_tool("record_observation", {"city": "sydney", "temperature_c": 30})
        self.assertEqual(result.text, "Recorded 30 °C for Sydney.")
        self.assertEqual(mcp.initialize_result["serverInfo"]["name"], "beammcp-sample-weather")
        self.assertEqual(Observation.objects.count(), 1)
