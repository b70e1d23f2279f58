"""The connectome's bounded tracer: which host functions called which, observed at run time.

Optional and off by default. A ``Tracer`` installs a profile function (``sys.setprofile``)
in the thread that starts it and, through ``threading``, in threads started afterwards. On
every ``call`` event whose callee and caller both live in modules of its scope it counts the
edge caller -> callee. It records edge identity and counts only: never an argument, a result,
a local or a message byte, and it keeps no frame.

Two limits, both required and positive, bound what it can cost: every event the profile
function sees (in scope or not, ``call``, ``return``, ``c_call``...) counts toward
``max_events``, and ``max_seconds`` runs from ``start()``. At either limit, or on ``stop()``,
it removes itself: the thread that notices clears its own profile function and the hook for
new threads; every other traced thread clears its own at its next event. Limits are checked
at events (the clock at every 64th), so a thread that sees no event keeps its idle profile
function until it sees one.

Which threads are reached: on Python 3.11, ``threading.setprofile`` only reaches threads
started after ``start()``; threads already running (an executor's existing workers, asgiref's
sync thread) are not traced. On 3.12 and later ``threading.setprofile_all_threads`` reaches
them too (and replaces whatever profiler they had, which this process cannot see). Threads
started with ``_thread.start_new_thread`` are never reached.

What a count is: the number of times the callee was entered from the caller. A generator or
coroutine is entered again at each resumption, so each counts. Comprehensions and generator
expressions are folded into the frame that runs them (a comprehension's is the function that
holds it; Python 3.12 inlines those), so they are never nodes and the calls made inside them
count from that frame's function. Function ids are the
declared graph's: ``<server>/module/<module>/<qualname>/<arity>``, arity counting positional
parameters, ``self`` included (``code.co_argcount``).

Each thread counts in a table of its own, keyed by ``id`` of code objects (a code object
hashes by value, slowly, and two identical functions in different files compare equal); the
tracer keeps every code object it classified so no id is reused while it lives. Ids become
names only when ``edges()`` is read. ``bench/tracer.py`` measures the cost.
"""

from __future__ import annotations

import itertools
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

from beammcp_django.connectome.core.canonical import node_id

ProfileFunction = Callable[[FrameType, str, Any], None]

# Code run as a function by Python 3.11 but folded into the function that holds it.
_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})

# The clock is read at every 64th event (event numbers are process-wide, so some thread reads
# it every 64 events): reading it at every event cost 80-120 ns an event more (2026-11-29,
# Python 3.11.7, the fib workload of bench/tracer.py with and without the clock read).
_CLOCK_EVERY_MASK = 63

# What a thread's table knows of a code object (absent: not classified yet): the module name
# when it is a function in scope, _FOLDED for a comprehension in scope, _OUTSIDE otherwise.
# Both markers are falsy so the hot path tests a callee with one truth test.
_FOLDED = ""
_OUTSIDE = False


@dataclass(frozen=True)
class FunctionRef:
    """A host function as the declared graph names it."""

    module: str
    qualname: str
    arity: int

    def node_id(self, server: str) -> str:
        return node_id(server, "module", self.module, self.qualname, self.arity)


class _ThreadTable:
    """One thread's counts, the classification of every code object it saw, and the number
    of the last event it counted (event numbers are global, so the largest is the total)."""

    __slots__ = ("calls", "codes", "last_event", "modules", "profile")

    def __init__(self) -> None:
        self.calls: dict[tuple[int, int], int] = {}  # (id(caller code), id(callee code))
        self.modules: dict[int, str | bool] = {}  # id(code) -> module, _FOLDED or _OUTSIDE
        self.codes: dict[int, CodeType] = {}  # keeps each id's code object alive
        self.last_event = [0]
        self.profile: ProfileFunction | None = None

    def function(self, code_id: int) -> FunctionRef:
        """The function of a code id in ``calls`` (only functions in scope get there, so its
        classification is a module name)."""
        code = self.codes[code_id]
        return FunctionRef(str(self.modules[code_id]), code.co_qualname, code.co_argcount)


def _positive(name: str, value: object, kinds: tuple[type, ...], what: str) -> None:
    valid = isinstance(value, kinds) and not isinstance(value, bool)
    if valid:
        valid = value > 0  # type: ignore[operator]
    if valid and isinstance(value, float):
        valid = math.isfinite(value)
    if not valid:
        raise ValueError(f"{name} must be a positive {what}, not {value!r}")


class Tracer:
    """A bounded profile-function tracer of call edges between modules of ``scope``.

    ``scope``: dotted names of packages or modules; a module is in scope when its
    ``__name__`` equals one or starts with one followed by a dot. It runs once: ``start()``,
    then it stops at a limit or on ``stop()``; ``edges()`` can be read at any time.
    """

    def __init__(self, scope: Sequence[str], *, max_events: int, max_seconds: float) -> None:
        if (
            isinstance(scope, str)
            or not scope
            or not all(isinstance(root, str) and root for root in scope)
        ):
            raise ValueError("scope must be a non-empty sequence of dotted module names")
        _positive("max_events", max_events, (int,), "integer")
        _positive("max_seconds", max_seconds, (int, float), "finite number")
        self.scope = tuple(scope)
        self.max_events = max_events
        self.max_seconds = max_seconds
        self._roots = frozenset(self.scope)
        self._prefixes = tuple(root + "." for root in self.scope)
        self._tables: list[_ThreadTable] = []
        self._register = threading.Lock()
        self._event_numbers = itertools.count(1)
        # A one-element list so every thread's profile function reads the same cell cheaply.
        self._reason: list[str | None] = [None]
        self._deadline = 0.0
        self._started = False

    # -- control -----------------------------------------------------------------------------

    def start(self) -> None:
        """Trace this thread and threads started from now on (all threads on 3.12+)."""
        if self._started or self._reason[0] is not None:
            raise RuntimeError("this tracer has already run; a tracer runs once, make a new one")
        if sys.getprofile() is not None or threading.getprofile() is not None:
            raise RuntimeError("another profiler is installed; refusing to replace it")
        self._started = True
        self._deadline = time.monotonic() + self.max_seconds
        if sys.version_info >= (3, 12):
            threading.setprofile_all_threads(self._adopt)  # type: ignore[attr-defined]
        else:
            threading.setprofile(self._adopt)
            sys.setprofile(self._adopt)

    def stop(self) -> None:
        """Stop now: this thread's profile function goes at once, other threads' at their
        next event. Stopping a stopped tracer changes nothing."""
        self._halt("stopped")

    @property
    def stopped_because(self) -> str | None:
        """Why it stopped: ``"max_events"``, ``"max_seconds"``, ``"stopped"`` (``stop()``) or
        ``"error"`` (a failure inside a profile function, swallowed so host code never sees
        it); None while it has not stopped."""
        return self._reason[0]

    @property
    def events(self) -> int:
        """How many events the profile functions have counted so far."""
        with self._register:
            tables = list(self._tables)
        return max((table.last_event[0] for table in tables), default=0)

    def _halt(self, reason: str) -> None:
        if self._reason[0] is None:
            self._reason[0] = reason
        # No lock here: this runs inside profile functions, possibly while this very thread
        # holds self._register (reading a snapshot); a list is safe to scan as it grows.
        current = sys.getprofile()
        if current == self._adopt or any(current is table.profile for table in self._tables):
            sys.setprofile(None)
        if threading.getprofile() == self._adopt:
            threading.setprofile(None)

    # -- the profile functions ---------------------------------------------------------------

    def _adopt(self, frame: FrameType, event: str, arg: Any) -> None:
        """A thread's first event: give the thread a table and a profile function of its own
        (so the hot path needs no thread-local lookup), then count the event with it."""
        if self._reason[0] is not None:
            sys.setprofile(None)
            return
        try:
            table = _ThreadTable()
            table.profile = profile = self._make_profile(table)
            with self._register:
                self._tables.append(table)
            sys.setprofile(profile)
        except Exception:
            self._halt("error")
            return
        profile(frame, event, arg)

    def _make_profile(self, table: _ThreadTable) -> ProfileFunction:
        # Everything the hot path touches is bound to a local of this closure.
        calls, modules, codes, last_event = (
            table.calls,
            table.modules,
            table.codes,
            table.last_event,
        )
        reason, event_numbers, max_events, deadline = (
            self._reason,
            self._event_numbers,
            self.max_events,
            self._deadline,
        )
        roots, prefixes, halt = self._roots, self._prefixes, self._halt
        setprofile, monotonic = sys.setprofile, time.monotonic

        def classify(frame: FrameType, code: CodeType) -> str | bool:
            name = frame.f_globals.get("__name__")
            place: str | bool = _OUTSIDE
            if isinstance(name, str) and (name in roots or name.startswith(prefixes)):
                place = _FOLDED if code.co_name in _COMPREHENSIONS else name
            modules[id(code)] = place
            codes[id(code)] = code
            return place

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            try:
                if reason[0] is not None:
                    setprofile(None)
                    return
                last_event[0] = number = next(event_numbers)
                if number >= max_events:
                    halt("max_events")
                    return
                if not number & _CLOCK_EVERY_MASK and monotonic() > deadline:
                    halt("max_seconds")
                    return
                if event != "call":
                    return
                callee = frame.f_code
                callee_id = id(callee)
                place = modules.get(callee_id)
                if place is None:
                    place = classify(frame, callee)
                if not place:
                    return
                caller = frame.f_back
                while caller is not None:
                    caller_id = id(caller.f_code)
                    place = modules.get(caller_id)
                    if place is None:
                        place = classify(caller, caller.f_code)
                    if place is not _FOLDED:
                        break
                    caller = caller.f_back
                if caller is None or not place:
                    return
                key = (caller_id, callee_id)
                calls[key] = calls.get(key, 0) + 1
            except Exception:
                halt("error")

        return profile

    # -- reading -------------------------------------------------------------------------------

    def edges(self) -> dict[tuple[FunctionRef, FunctionRef], int]:
        """(caller, callee) -> how many times, merged over every traced thread."""
        with self._register:
            tables = list(self._tables)
        merged: dict[tuple[FunctionRef, FunctionRef], int] = {}
        for table in tables:
            for (caller, callee), count in dict(table.calls).items():
                key = (table.function(caller), table.function(callee))
                merged[key] = merged.get(key, 0) + count
        return merged

    def edge_counts(self, server: str) -> dict[tuple[str, str, str], int]:
        """The edges as the graph names them, (from, to, "invoke"), with their counts:
        ``observed.observed_graph`` turns them into the observed graph and its weights."""
        counts: dict[tuple[str, str, str], int] = {}
        for (caller, callee), count in self.edges().items():
            label = (caller.node_id(server), callee.node_id(server), "invoke")
            counts[label] = counts.get(label, 0) + count
        return counts
