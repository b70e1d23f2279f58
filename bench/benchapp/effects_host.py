"""The host function of ``bench/effects.py``: the one module in the observer's scope, so a
counted chain is this function alone, as a tool's handler running its queries would be."""

from __future__ import annotations

from collections.abc import Callable


def run(times: int, step: Callable[[], object]) -> None:
    for _ in range(times):
        step()
