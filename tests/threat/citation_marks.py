"""A pytest plugin for the citation test: after collection, prints each collected item that
an expected failure or an active skip marks, so a page cannot cite a test that does not hold.

Loaded with ``-p tests.threat.citation_marks`` in a collection-only run of its own."""

from __future__ import annotations

from typing import Any

MARKED = "CITATION-MARKED"


def _active(mark: Any) -> bool:
    """A mark's condition, when it has one (``skipif(condition)``, ``xfail(condition)``)."""
    condition = mark.args[0] if mark.args else mark.kwargs.get("condition", True)
    return bool(condition)


def pytest_collection_finish(session: Any) -> None:
    for item in session.items:
        for mark in item.iter_markers():
            if mark.name in ("xfail", "skip", "skipif") and _active(mark):
                print(f"{MARKED} {item.nodeid} {mark.name}")
                break
