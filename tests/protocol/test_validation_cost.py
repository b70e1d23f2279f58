"""Validating one request costs time linear in its size, for every keyword family.

Each family of ``tests/validation_families.py`` is run at 64 KiB through ``Server.handle``,
accepted and refused at the last place it looks, and must answer within a bound a hundred
times what it takes (about a millisecond): jsonschema, which validated refusals before,
took 21 s for uniqueItems over 6,000 objects at this size, and 0.6 s to pick one of many
type errors. ``bench/validation.py`` gives the figures at the 1 MiB cap.
"""

from __future__ import annotations

import time

import pytest

from beammcp_django.protocol import wire
from beammcp_django.protocol.catalog import ToolSpec
from beammcp_django.protocol.schema import unbounded_reasons
from tests.validation_families import FAMILIES

from .conftest import MemoryCatalog, call, make_server, request

SIZE = 65_536
BOUND_SECONDS = 1.0


def served_within_the_bound(family, refused: bool) -> dict:
    catalog = MemoryCatalog()
    catalog.tools = (ToolSpec("f", family.schema),)
    catalog.handlers["f"] = lambda arguments, context: "accepted"
    server = make_server(catalog)
    message = request("tools/call", {"name": "f", "arguments": family.arguments(SIZE, refused)})
    data = wire.encode(message)
    assert len(data) <= SIZE
    started = time.perf_counter()
    reply = call(server, message, size=len(data))
    elapsed = time.perf_counter() - started
    assert elapsed < BOUND_SECONDS, f"{family.name}: {elapsed:.2f} s"
    return reply["result"]


@pytest.mark.parametrize("family", FAMILIES, ids=[family.name for family in FAMILIES])
def test_every_family_accepts_its_largest_valid_arguments_within_the_bound(family):
    assert unbounded_reasons(family.schema) == []
    result = served_within_the_bound(family, refused=False)
    assert result["content"] == [{"type": "text", "text": "accepted"}], result


@pytest.mark.parametrize("family", FAMILIES, ids=[family.name for family in FAMILIES])
def test_every_family_refuses_at_its_last_place_within_the_bound(family):
    assert len(wire.encode({"a": family.build(1000, True)})) > 1000  # it grows with the size
    result = served_within_the_bound(family, refused=True)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid arguments for tool 'f': arguments")
