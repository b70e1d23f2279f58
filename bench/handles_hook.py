"""The ``AUTHORIZE`` hook of ``bench/handles.py``: the principal is the ``X-Bench-Principal``
header's name (a frozen dataclass: one key a name, as the package keys such principals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from beammcp_django.authorization import HttpRequestInfo


@dataclass(frozen=True)
class BenchCaller:
    name: str


async def authorize(request: HttpRequestInfo) -> Any:
    name = request.header("x-bench-principal")
    return BenchCaller(name) if name else True
