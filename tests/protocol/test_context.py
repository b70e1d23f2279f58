"""What host code reports through its request context, and when nothing more is sent."""

from __future__ import annotations

import logging
import math

from beammcp_django.protocol.context import RequestContext


def context(sent: list, **meta) -> RequestContext:
    return RequestContext(
        request_id=1,
        method="tools/call",
        protocol_version="2026-07-28",
        client_capabilities={},
        client_info=None,
        meta={"progressToken": "t", **meta},
        run_sync=None,  # type: ignore[arg-type]
        emit=sent.append,
        log_level="debug",
    )


def test_progress_that_does_not_increase_is_dropped_and_the_first_drop_is_logged(caplog):
    sent: list = []
    reporting = context(sent)
    with caplog.at_level(logging.WARNING, logger="beammcp_django"):
        for value in (1, 1, 0.5, 2, math.nan, math.inf, 3, True, 4):
            reporting.progress(value)
    assert [item["params"]["progress"] for item in sent] == [1, 2, 3, 4]
    assert caplog.text.count("MCP progress dropped") == 1


def test_after_finish_nothing_is_sent_and_the_code_reads_cancelled():
    sent: list = []
    reporting = context(sent)
    reporting.progress(1)
    assert not reporting.cancelled
    reporting.finish()
    reporting.progress(2)
    reporting.log("error", "too late")
    assert reporting.cancelled
    assert [item["method"] for item in sent] == ["notifications/progress"]
