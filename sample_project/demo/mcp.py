"""The sample project's catalog: a small made-up weather service a newcomer can call at once.

Autodiscovered by ``beammcp_django`` because this app is installed and the module is named
``mcp``. It shows each kind of declaration: sync and async tools, a tool with an output schema,
a tool that writes through the ORM, a tool whose annotations the connectome's audit
contradicts (on purpose), a tool only some users see (a Django permission) and
use with an OAuth scope, a slow tool that runs as a task of the tasks extension (in a worker:
``manage.py db_worker``), a resource, a resource template, and a prompt with completion.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import timedelta
from typing import Any

from beammcp_django import mcp
from sample_project.demo.models import Observation

STATIONS = {
    "amsterdam": {"name": "Amsterdam", "latitude": 52.37, "longitude": 4.90},
    "lisbon": {"name": "Lisbon", "latitude": 38.72, "longitude": -9.14},
    "nairobi": {"name": "Nairobi", "latitude": -1.29, "longitude": 36.82},
    "oslo": {"name": "Oslo", "latitude": 59.91, "longitude": 10.75},
    "sydney": {"name": "Sydney", "latitude": -33.87, "longitude": 151.21},
}
CITY = {"type": "string", "enum": sorted(STATIONS)}
CONDITIONS = ("sunny", "cloudy", "rain", "wind", "snow")


def made_up_day(city: str, day: int) -> dict[str, Any]:
    """A deterministic forecast: the same city and day always give the same figures."""
    digest = hashlib.sha256(f"{city}:{day}".encode()).digest()
    return {
        "day": day,
        "high_c": round(digest[0] / 255 * 35 - 5, 1),
        "condition": CONDITIONS[digest[1] % len(CONDITIONS)],
    }


@mcp.site.register
class Echo(mcp.Tool):
    """Answers its text unchanged: a smoke test and the benchmarks' workload."""

    name = "echo"
    title = "Echo"
    input_schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to send back."}},
        "required": ["text"],
        "additionalProperties": False,
    }
    annotations = mcp.ToolAnnotations(read_only=True, idempotent=True, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        return arguments["text"]


@mcp.site.register
class GetForecast(mcp.Tool):
    """The made-up forecast of a city for the next days, as structured data."""

    name = "get_forecast"
    title = "Forecast"
    input_schema = {
        "type": "object",
        "properties": {
            "city": CITY,
            "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    output_schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "day": {"type": "integer"},
                        "high_c": {"type": "number"},
                        "condition": {"type": "string", "enum": list(CONDITIONS)},
                    },
                    "required": ["day", "high_c", "condition"],
                },
            },
        },
        "required": ["city", "days"],
    }
    annotations = mcp.ToolAnnotations(read_only=True, idempotent=True, open_world=False)
    # A host that renders MCP Apps draws the result in the forecast chart; every other
    # client reads the same result as JSON text.
    meta = {"ui": {"resourceUri": "ui://weather/forecast-chart"}}

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> mcp.ToolResult:
        city = arguments["city"]
        days = [made_up_day(city, day) for day in range(1, arguments.get("days", 3) + 1)]
        return mcp.ToolResult(structured={"city": STATIONS[city]["name"], "days": days})


@mcp.site.register
class RefreshForecast(GetForecast):
    """The forecast again, for the forecast chart's Refresh button: a tool for the view
    alone (``visibility: ["app"]``), which a host keeps out of its model's tool list."""

    name = "refresh_forecast"
    title = "Refresh the forecast chart"
    meta = {"ui": {"resourceUri": "ui://weather/forecast-chart", "visibility": ["app"]}}


@mcp.site.register
class ForecastChart(mcp.UiResource):
    """A chart of a city's forecast, one bar a day, with a button to refresh it: the view
    of ``get_forecast`` in hosts that render MCP Apps."""

    uri = "ui://weather/forecast-chart"
    name = "forecast-chart"
    title = "Forecast chart"
    template_name = "demo/forecast_chart.html"
    prefers_border = True

    def get_context_data(self, context: mcp.RequestContext) -> dict[str, Any]:
        return {"width": 420, "height": 180}


@mcp.site.register
class RecordObservation(mcp.Tool):
    """Stores a temperature reading for a city (through the ORM, in a worker thread)."""

    name = "record_observation"
    title = "Record an observation"
    input_schema = {
        "type": "object",
        "properties": {
            "city": CITY,
            "temperature_c": {"type": "number", "minimum": -90, "maximum": 60},
        },
        "required": ["city", "temperature_c"],
        "additionalProperties": False,
    }
    annotations = mcp.ToolAnnotations(destructive=False, idempotent=False, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        observation = Observation.objects.create(
            city=arguments["city"], temperature_c=arguments["temperature_c"]
        )
        context.log("info", {"recorded": observation.pk}, logger="demo")
        return f"Recorded {observation.temperature_c} °C for {STATIONS[observation.city]['name']}."


@mcp.site.register
class DeleteObservation(mcp.Tool):
    """Deletes one recorded observation: shown only to users holding Django's
    ``demo.delete_observation``, and used only with a token granted ``demo.write``."""

    name = "delete_observation"
    title = "Delete an observation"
    permissions = ("demo.delete_observation",)
    scopes = ("demo.write",)
    input_schema = {
        "type": "object",
        "properties": {"id": {"type": "integer", "minimum": 1}},
        "required": ["id"],
        "additionalProperties": False,
    }
    annotations = mcp.ToolAnnotations(destructive=True, idempotent=True, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        deleted, _ = Observation.objects.filter(pk=arguments["id"]).delete()
        return f"Deleted {deleted} observation(s)."


@mcp.site.register
class CurrentConditions(mcp.Tool):
    """The made-up conditions in a city now. Deliberately mis-annotated, to show the
    connectome's annotation audit: it claims to be read-only, yet it records the reading it
    reports as an observation (a write of ``demo.Observation``). ``manage.py check`` warns
    about it (``beammcp.W008``), and the admin's connectome page and the diff record name it."""

    name = "current_conditions"
    title = "Current conditions"
    input_schema = {
        "type": "object",
        "properties": {"city": CITY},
        "required": ["city"],
        "additionalProperties": False,
    }
    annotations = mcp.ToolAnnotations(read_only=True, idempotent=True, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        city = arguments["city"]
        now = made_up_day(city, int(time.time() // 3600))
        Observation.objects.create(city=city, temperature_c=now["high_c"])
        return f"{STATIONS[city]['name']}: {now['high_c']} °C, {now['condition']}."


# How long the seasonal report works on each week: slow on purpose, as a real model run is.
REPORT_SECONDS_PER_WEEK = 0.5
DETAIL_FORM = {
    "type": "object",
    "properties": {"outlook": {"type": "boolean", "title": "A line of outlook per week?"}},
    "required": ["outlook"],
}


@mcp.site.register
class SeasonalReport(mcp.Tool):
    """A season's made-up forecast for a city, a week at a time, reported as progress: a
    task when the client can take one (a worker runs it, and the client polls), else run in
    the request. A client that can be asked is asked first whether to add an outlook line
    per week (inside the task: it waits in input_required until ``tasks/update`` answers).
    It stops at the next week once cancelled."""

    name = "seasonal_report"
    title = "Seasonal report"
    task = "optional"
    input_schema = {
        "type": "object",
        "properties": {
            "city": CITY,
            "weeks": {"type": "integer", "minimum": 1, "maximum": 12, "default": 4},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    annotations = mcp.ToolAnnotations(read_only=True, idempotent=True, open_world=False)

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> Any:
        city, weeks = arguments["city"], arguments.get("weeks", 4)
        answer = context.input_responses.get("detail")
        if "elicitation" in context.client_capabilities and answer is None:
            return mcp.InputRequired(
                requests={"detail": mcp.inputs.elicit("Add an outlook per week?", DETAIL_FORM)}
            )
        form = answer.get("content") if isinstance(answer, dict) else None
        outlook = isinstance(form, dict) and form.get("outlook") is True
        lines = [f"Seasonal report for {STATIONS[city]['name']}, {weeks} week(s):"]
        for week in range(1, weeks + 1):
            if context.cancelled:
                return f"stopped after {week - 1} of {weeks} week(s): cancelled"
            time.sleep(REPORT_SECONDS_PER_WEEK)
            day = made_up_day(city, week * 7)
            line = f"week {week}: about {day['high_c']} °C"
            lines.append(f"{line}, mostly {day['condition']}" if outlook else line)
            context.progress(week, weeks, f"week {week} of {weeks}")
        return "\n".join(lines)


@mcp.site.register
class WatchList(mcp.HandleKind):
    """A caller's list of cities to watch, kept across calls without a session
    (docs/handles.md): minted by create_watch_list, read by watched_forecast."""

    kind = "watch_list"
    prefix = "wl"
    idle = timedelta(hours=1)
    lifetime = timedelta(days=1)
    per_principal = 20


@mcp.site.register
class CreateWatchList(mcp.Tool):
    """Start a watch list of cities; pass its id to watch_city and watched_forecast."""

    name = "create_watch_list"
    title = "Start a watch list"
    mints = (WatchList,)
    input_schema = {
        "type": "object",
        "properties": {"cities": {"type": "array", "items": CITY, "maxItems": 5}},
        "additionalProperties": False,
    }
    output_schema = {
        "type": "object",
        "properties": {"watch_list_id": {"type": "string"}, "cities": {"type": "array"}},
        "required": ["watch_list_id", "cities"],
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> mcp.ToolResult:
        cities = sorted(set(arguments.get("cities", [])))
        handle = context.handles.mint(WatchList, {"cities": cities})
        return mcp.ToolResult(structured={"watch_list_id": handle.id, "cities": cities})


@mcp.site.register
class WatchCity(mcp.Tool):
    """Add a city to a watch list (at most 5 cities)."""

    name = "watch_city"
    title = "Watch a city"
    input_schema = {
        "type": "object",
        "properties": {
            "watch_list_id": WatchList.argument("the watch list, from create_watch_list"),
            "city": CITY,
        },
        "required": ["watch_list_id", "city"],
        "additionalProperties": False,
    }

    def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        handle = context.handles.get(WatchList, arguments["watch_list_id"])
        cities = sorted({*handle.data["cities"], arguments["city"]})
        if len(cities) > 5:
            raise mcp.ToolError("a watch list holds 5 cities at most: start another")
        handle.data["cities"] = cities
        context.handles.save(handle)
        return "Watching " + ", ".join(STATIONS[city]["name"] for city in cities) + "."


@mcp.site.register
class WatchedForecast(mcp.Tool):
    """Tomorrow's forecast of every city on a watch list."""

    name = "watched_forecast"
    title = "Forecast of a watch list"
    annotations = mcp.ToolAnnotations(read_only=True, open_world=False)
    input_schema = {
        "type": "object",
        "properties": {"watch_list_id": WatchList.argument("the watch list to read")},
        "required": ["watch_list_id"],
        "additionalProperties": False,
    }

    async def call(self, arguments: dict[str, Any], context: mcp.RequestContext) -> str:
        handle = await context.handles.aget(WatchList, arguments["watch_list_id"])
        lines = []
        for city in handle.data["cities"]:
            day = made_up_day(city, 1)
            lines.append(f"{STATIONS[city]['name']}: {day['high_c']} °C, {day['condition']}")
        return "\n".join(lines) or "The watch list is empty: add a city with watch_city."


@mcp.site.register
class Stations(mcp.Resource):
    """Every station this service knows, with coordinates."""

    uri = "weather://stations"
    name = "stations"
    title = "Weather stations"
    mime_type = "application/json"

    def read(self, context: mcp.RequestContext) -> str:
        return json.dumps(STATIONS, sort_keys=True)


@mcp.site.register
class CityObservations(mcp.ResourceTemplate):
    """The latest recorded observations of one city."""

    uri_template = "weather://observations/{city}"
    name = "observations"
    title = "Observations of a city"
    mime_type = "application/json"

    async def read(self, uri: str, variables: dict[str, str], context: mcp.RequestContext) -> str:
        city = variables["city"]
        if city not in STATIONS:
            raise mcp.ResourceNotFound
        latest = [
            {"temperature_c": row.temperature_c, "recorded_at": row.recorded_at.isoformat()}
            async for row in Observation.objects.filter(city=city)[:20]
        ]
        return json.dumps({"city": city, "observations": latest})

    def complete(
        self, argument: str, value: str, context_arguments: dict[str, Any], context: Any
    ) -> list[str]:
        return [city for city in sorted(STATIONS) if city.startswith(value.lower())]


@mcp.site.register
class ForecastBriefing(mcp.Prompt):
    """Asks the model for a short briefing on a city's forecast."""

    name = "forecast_briefing"
    title = "Forecast briefing"
    arguments = (
        mcp.PromptArgument("city", description="One of the known stations.", required=True),
        mcp.PromptArgument("tone", description="How to phrase it, e.g. 'cheerful'."),
    )

    def get(self, arguments: dict[str, str], context: mcp.RequestContext) -> mcp.PromptResult:
        city = arguments["city"].lower()
        if city not in STATIONS:
            city_text = f"the city called {arguments['city']!r} (not a known station)"
        else:
            city_text = STATIONS[city]["name"]
        tone = arguments.get("tone", "plain")
        return mcp.PromptResult(
            description=f"Briefing for {city_text}",
            messages=[
                mcp.content.user(
                    f"Write a three-sentence {tone} weather briefing for {city_text}. "
                    "Call the get_forecast tool first."
                ),
                mcp.content.user(mcp.content.resource_link("weather://stations", "stations")),
            ],
        )

    def complete(
        self, argument: str, value: str, context_arguments: dict[str, Any], context: Any
    ) -> list[str]:
        if argument != "city":
            return []
        return [city for city in sorted(STATIONS) if city.startswith(value.lower())]


# This server's own wiring diagram as three read-only resources: connectome://declared,
# connectome://observed and connectome://diff (docs/connectome.md).
mcp.site.register(*mcp.CONNECTOME_RESOURCES)
