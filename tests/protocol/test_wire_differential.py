"""The fast decoder against a plain reference on generated messages: the same value, or the
same refusal, for every shape its shortcuts treat differently (small and wide containers,
colons and brackets inside strings, repeated keys at any depth, nesting around the bound)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from beammcp_django.protocol import wire
from beammcp_django.protocol.errors import ProtocolError


def reference(data: bytes) -> tuple[str, Any]:
    """What the bounds say, computed the slow obvious way."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        if len(set(keys)) != len(keys):
            raise KeyError("repeated")
        return dict(items)

    def depth(value: Any) -> int:
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        return 0

    try:
        value = json.loads(data, object_pairs_hook=pairs)
    except KeyError:
        return ("refused", -32600)
    except RecursionError:
        return ("refused", -32600)
    except ValueError:
        return ("refused", -32700)
    if not isinstance(value, dict):
        return ("refused", -32600)
    if depth(value) > wire.MAX_DEPTH:
        return ("refused", -32600)
    return ("value", value)


def decoded(data: bytes) -> tuple[str, Any]:
    try:
        return ("value", wire.decode(data))
    except ProtocolError as refusal:
        return ("refused", refusal.code)


TRICKY_STRINGS = ["a:b", "{[", "]}", 'q"uote', "back\\slash", "x" * 40, "", "é:ü"]


def scalar(rng: random.Random) -> Any:
    return rng.choice(
        [rng.randint(-5, 10**6), rng.random(), True, False, None, rng.choice(TRICKY_STRINGS)]
    )


def generate(rng: random.Random, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth <= 0 or budget[0] <= 0 or rng.random() < 0.3:
        return scalar(rng)
    width = rng.choice([0, 1, 2, 3, 5, 17, 40])
    if rng.random() < 0.5:
        return [generate(rng, depth - 1, budget) for _ in range(width)]
    return {
        f"k{rng.randint(0, 60)}{rng.choice(['', ':', '[', '{'])}": generate(rng, depth - 1, budget)
        for _ in range(width)
    }


def with_repeat(rng: random.Random, text: str) -> str:
    """Repeat one key inside some object of the text, when there is one."""
    spots = [i for i, char in enumerate(text) if char == "{" and text[i + 1 : i + 2] == '"']
    if not spots:
        return text
    at = rng.choice(spots) + 1
    return text[:at] + '"dup":1,"dup":2,' + text[at:]


@pytest.mark.parametrize("seed", range(6))
def test_the_decoder_agrees_with_the_reference_on_generated_messages(seed):
    rng = random.Random(seed)
    for _ in range(400):
        body = generate(rng, rng.choice([2, 4, 8, 70]), [rng.choice([10, 200, 3000])])
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"x": body}}
        text = json.dumps(message, separators=rng.choice([(",", ":"), (", ", ": ")]))
        if rng.random() < 0.3:
            text = with_repeat(rng, text)
        data = text.encode()
        if len(data) > wire.MAX_MESSAGE_BYTES:
            continue
        assert decoded(data) == reference(data), text[:300]


@pytest.mark.parametrize("levels", [63, 64, 65, 66, 200])
@pytest.mark.parametrize("wide_at", [None, 0, 30, 60])
def test_nesting_around_the_bound_agrees_with_the_reference(levels, wide_at):
    """A chain of alternating objects and arrays, one level of it 40 members wide (so the
    walk that handles wide containers meets the bound too)."""
    inner: Any = 1
    for level in range(levels - 1):
        width = 40 if level == wide_at else 1
        if level % 2:
            inner = [inner, *range(width - 1)]
        else:
            inner = {"k": inner, **{f"s{i}": i for i in range(width - 1)}}
    data = json.dumps({"x": inner}).encode()
    assert decoded(data) == reference(data)
