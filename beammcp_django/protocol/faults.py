"""What an internal error tells a developer while the project runs with ``DEBUG`` on.

With ``DEBUG`` off (``ServerOptions.debug`` false) an internal error says only that the
server logged it. With it on, as Django's own error pages do for a view, the error's
``data`` names the cause and the place: ``{"cause": "<exception class>: <message>",
"where": "<module>.<function>:<line>"}``. Never a traceback and never a repr of an object:
the message is the exception's own text, on one line and cut to ``MAX_ECHO`` characters; the
place is one line of the host's code, the innermost frame that is neither this package's,
the standard library's nor an installed library's (a fault in a library the host called is
placed where the host called it), or, for an answer off the host contract (raised in the
package, after the host's code returned), the handler that gave the answer.
"""

from __future__ import annotations

import inspect
import re
import sysconfig
from pathlib import Path
from types import TracebackType
from typing import Any

from .echo import MAX_ECHO

_PACKAGE = str(Path(__file__).resolve().parents[1])
_LIBRARIES = tuple(
    {str(Path(sysconfig.get_paths()[name]).resolve()) for name in ("stdlib", "purelib", "platlib")}
)
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f]+")


def fault_data(error: BaseException, handler: Any = None) -> dict[str, str]:
    """The ``data`` of an internal error under ``DEBUG``: its cause, and where it arose (or
    where ``handler``, the host function that answered, is defined)."""
    data = {"cause": _cause(error)}
    where = _host_frame(error.__traceback__) or _defined_at(handler)
    if where is not None:
        data["where"] = where
    return data


def _cause(error: BaseException) -> str:
    message = _LINE_BREAKS.sub(" ", str(error)).strip()
    cause = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return cause if len(cause) <= MAX_ECHO else cause[: MAX_ECHO - 3] + "..."


def _host_frame(trace: TracebackType | None) -> str | None:
    """The innermost frame of the host's own code in ``trace``, as ``module.function:line``."""
    found = None
    while trace is not None:
        frame = trace.tb_frame
        filename = str(Path(frame.f_code.co_filename).resolve())
        if not filename.startswith((_PACKAGE, *_LIBRARIES)):
            module = frame.f_globals.get("__name__", "?")
            found = f"{module}.{frame.f_code.co_qualname}:{trace.tb_lineno}"
        trace = trace.tb_next
    return found


def _defined_at(function: Any) -> str | None:
    """Where ``function`` (a handler, possibly a bound method or wrapped) is defined."""
    if function is None:
        return None
    function = inspect.unwrap(getattr(function, "__func__", function))
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    return f"{function.__module__}.{function.__qualname__}:{code.co_firstlineno}"
