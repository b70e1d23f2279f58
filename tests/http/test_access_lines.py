"""``serving/access_log.py``: the access line ``mcp_serve`` writes is uvicorn's, byte for byte,
in colour and without, for any status and any path; the lines of ``FLUSH_SECONDS`` in one
write; and a logger configured any other way is used as it is."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator

import pytest
from uvicorn.logging import AccessFormatter

from beammcp_django.serving import access_log
from beammcp_django.serving.access_log import (
    FLUSH_SECONDS,
    UVICORN_FORMAT,
    AccessLines,
    access_lines,
)

LINES = [
    ("127.0.0.1:50000", "POST", "/mcp", "1.1", 200),
    ("[::1]:8", "GET", "/mcp", "1.1", 405),
    ("10.0.0.1:1", "DELETE", "/a%7Bb%7D?x={y}&z=%s", "1.0", 404),
    ("", "POST", "/mcp", "1.1", 599),  # a status with no phrase
]


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def uvicorns_line(formatter: logging.Formatter, values: tuple) -> str:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', values, None
    )
    return formatter.format(record) + "\n"


@pytest.fixture
def access_logger() -> Iterator[logging.Logger]:
    """``uvicorn.access`` as uvicorn configures it, restored afterwards."""
    logger = logging.getLogger("uvicorn.access")
    saved = (logger.handlers[:], logger.filters[:], logger.propagate, logger.disabled)
    level = logger.level
    handler = logging.StreamHandler(CountingStream())
    handler.setFormatter(AccessFormatter(UVICORN_FORMAT, use_colors=False))
    logger.handlers[:], logger.filters[:] = [handler], []
    logger.propagate, logger.disabled = False, False
    logger.setLevel(logging.INFO)
    access_log._lines.clear()
    yield logger
    logger.handlers[:], logger.filters[:], logger.propagate, logger.disabled = saved
    logger.setLevel(level)
    access_log._lines.clear()


@pytest.mark.parametrize("colours", [False, True])
def test_each_line_is_uvicorns_to_the_byte_and_their_moment_is_one_write(colours):
    formatter = AccessFormatter(UVICORN_FORMAT, use_colors=colours)
    handler = logging.StreamHandler(CountingStream())
    handler.setFormatter(formatter)

    async def serve() -> None:
        lines = AccessLines(handler, asyncio.get_running_loop())
        for values in LINES * 2:  # the second time from the templates made the first
            lines.info('%s - "%s %s HTTP/%s" %d', *values)
            await asyncio.sleep(0)  # the lines of several turns of the loop
        assert handler.stream.writes == 0
        await asyncio.sleep(FLUSH_SECONDS * 2)

    asyncio.run(serve())
    stream = handler.stream
    assert stream.getvalue() == "".join(uvicorns_line(formatter, values) for values in LINES * 2)
    assert stream.writes == 1


def test_the_stand_in_is_taken_only_for_uvicorns_own_configuration(access_logger):
    del access_logger.handlers[1:]  # pytest's capturing handlers, added as the test starts
    loop = asyncio.new_event_loop()
    try:
        assert isinstance(access_lines(loop), AccessLines)
        assert access_lines(loop) is access_lines(loop)
        access_log._lines.clear()
        handler = access_logger.handlers[0]
        changes = [
            lambda: handler.setFormatter(AccessFormatter("%(asctime)s %(message)s")),
            lambda: handler.setFormatter(logging.Formatter(UVICORN_FORMAT)),
            lambda: access_logger.addFilter(lambda record: True),
            lambda: handler.addFilter(lambda record: True),
            lambda: access_logger.setLevel(logging.WARNING),
            lambda: access_logger.addHandler(logging.NullHandler()),
        ]
        for change in changes:
            saved = (handler.formatter, access_logger.filters[:], handler.filters[:])
            level, handlers = access_logger.level, access_logger.handlers[:]
            change()
            assert access_lines(loop) is None
            handler.formatter, access_logger.filters[:], handler.filters[:] = saved
            access_logger.handlers[:] = handlers
            access_logger.setLevel(level)
            assert isinstance(access_lines(loop), AccessLines)
            access_log._lines.clear()
    finally:
        loop.close()
