"""Counters of Django's request signals, by sender class: what a host's receiver (an APM
agent's, say) sees of MCP requests."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from django.core.signals import request_finished, request_started

COUNTS: dict[str, Counter[str]] = {"started": Counter(), "finished": Counter()}
# The ASGI paths request_started carried, per sender.
PATHS: dict[str, list[str]] = {}
_lock = threading.Lock()


def _started(sender: Any, **kwargs: Any) -> None:
    scope = kwargs.get("scope") or {}
    with _lock:
        COUNTS["started"][sender.__name__] += 1
        PATHS.setdefault(sender.__name__, []).append(str(scope.get("path")))


def _finished(sender: Any, **kwargs: Any) -> None:
    with _lock:
        COUNTS["finished"][sender.__name__] += 1


def connect() -> None:
    request_started.connect(_started, dispatch_uid="observability-probe-started")
    request_finished.connect(_finished, dispatch_uid="observability-probe-finished")


def snapshot() -> dict[str, Any]:
    with _lock:
        return {
            "started": dict(COUNTS["started"]),
            "finished": dict(COUNTS["finished"]),
            "paths": {sender: list(paths) for sender, paths in PATHS.items()},
        }
