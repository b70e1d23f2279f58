"""uvicorn's access line, the same bytes, for a fraction of what the logging machinery costs.

``manage.py mcp_serve`` keeps uvicorn's access log on, as a developer expects it. Through
the ``uvicorn.access`` logger each line costs a ``LogRecord`` (the caller's frame looked up,
the time, the thread and process names), the handler's lock, uvicorn's formatter (a copy of
the record, the status phrase looked up, the line formatted) and a write and flush of its
own: a sync echo served 0.61x as many calls with it on (``bench/serve_paths.py``'s
``ours-access``; docs/performance.md). The protocol calls no more of the logger than
``info(...)`` with the line's five values, so where the logger is configured as uvicorn
configures it (one stream handler with uvicorn's access formatter and format, no filter),
``AccessLines`` stands in for it: each status code's line is formatted once by that very
formatter, with markers in place of the values, and every later line fills the markers in;
the lines of each ``FLUSH_SECONDS`` go out in one write (a line is on its way at most that
late; a closing connection, a shutdown's included, writes what is waiting at once).
Configured any other way (a JSON handler, a filter, a time in the format), the logger is
used as it is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import IO, Any

from uvicorn.config import LOGGING_CONFIG
from uvicorn.logging import AccessFormatter

ACCESS_LOGGER = "uvicorn.access"
UVICORN_FORMAT = LOGGING_CONFIG["formatters"]["access"]["fmt"]
# The values of a line, as markers no request can put in it: the formatter is run once per
# status code on these, and the markers become the template's fields.
_MARKERS = ("\x00client\x00", "\x00method\x00", "\x00path\x00", "\x00version\x00")
# How long a line may wait for the others of its write: too short for a reader to notice.
FLUSH_SECONDS = 0.05


class AccessLines:
    """What the protocol takes for the ``uvicorn.access`` logger: ``info`` queues the line,
    written with the others queued within ``FLUSH_SECONDS`` of the first."""

    def __init__(self, handler: logging.StreamHandler, loop: asyncio.AbstractEventLoop) -> None:
        self._formatter: logging.Formatter = handler.formatter  # type: ignore[assignment]
        self._stream: IO[str] = handler.stream
        self._terminator = handler.terminator
        self._loop = loop
        self._templates: dict[int, str] = {}
        self._pending: list[str] = []

    def info(self, _message: str, *values: Any) -> None:
        client, method, path, version, status = values
        template = self._templates.get(status) or self._template(status)
        if not self._pending:
            self._loop.call_later(FLUSH_SECONDS, self.flush)
        self._pending.append(template.format(client, method, path, version))

    def _template(self, status: int) -> str:
        """The line uvicorn's formatter writes for ``status``, its values made fields."""
        record = logging.LogRecord(
            ACCESS_LOGGER, logging.INFO, __file__, 0, '%s - "%s %s HTTP/%s" %d',
            (*_MARKERS, status), None,
        )  # fmt: skip
        line = self._formatter.format(record).replace("{", "{{").replace("}", "}}")
        for index, marker in enumerate(_MARKERS):
            line = line.replace(marker, f"{{{index}}}")
        self._templates[status] = template = line + self._terminator
        return template

    def flush(self) -> None:
        lines, self._pending = self._pending, []
        if not lines:
            return
        try:
            self._stream.write("".join(lines))
            self._stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: as logging, not fatal
            pass


def uvicorns_own_handler() -> logging.StreamHandler | None:
    """The ``uvicorn.access`` logger's one handler when the logger is as uvicorn configures it
    and writes at INFO; None otherwise (then the logger itself is used)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if logger.filters or logger.propagate or not logger.isEnabledFor(logging.INFO):
        return None
    if len(logger.handlers) != 1:
        return None
    handler = logger.handlers[0]
    formatter = handler.formatter
    if type(handler) is not logging.StreamHandler or handler.filters:
        return None
    if type(formatter) is not AccessFormatter or formatter._fmt != UVICORN_FORMAT:
        return None
    if handler.level > logging.INFO:
        return None
    return handler


_lines: dict[asyncio.AbstractEventLoop, AccessLines] = {}


def access_lines(loop: asyncio.AbstractEventLoop) -> AccessLines | None:
    """This event loop's ``AccessLines``, or None where the logger must be used as it is."""
    found = _lines.get(loop)
    if found is None:
        handler = uvicorns_own_handler()
        if handler is None:
            return None
        found = _lines[loop] = AccessLines(handler, loop)
    return found
