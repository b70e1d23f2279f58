"""Effects observed at run time, credited to the host call and the host functions that had them.

A hook that sees an effect (the query hook, the mail backend, the audit-event hook) calls
``EffectObserver.note``. Outside a host call (``protocol.calling.host_call`` is None: the
package's own flushes, sessions, tasks and permission lookups) it returns at once, so none of
those is ever credited to a tool. Inside one, the calling thread's stack says which host
functions led to it: the frames whose module is in the connectome's scope, outermost first,
read up to the call's handler when the call runs on this thread (nothing above it is the
host's). That chain is counted with the effect, in a per-thread table like the dispatch
collector's; nothing of the statement, its parameters or the message is kept. When no frame
on the stack is the host's (the async ORM runs its queries in a worker thread of asgiref's,
away from the coroutine that awaits them), the effect is credited to the call's handler.

Reading a stack frame by frame is the cost: each frame Python has not yet made an object
of is made one, and an ORM query puts a dozen of Django's frames between the host and the
hook. So the chain found for one
(host call, statement) is remembered with the depth and code of each of its frames, and the
next time the same statement of the same call is checked against those frames alone
(``sys._getframe(depth)``, walked in C, makes only the frame asked for): the same code at
every depth is the same chain. A difference reads the whole stack again and remembers the
new chain.

A counted chain becomes observed edges: each function to the next (``invoke``), the last to
the effect (``effect``). Their counts are the effects seen through them, not calls.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from itertools import pairwise
from types import CodeType, FrameType
from typing import Any

from beammcp_django.connectome.core.canonical import node_id
from beammcp_django.connectome.core.effects import EDGE_KIND, Effect
from beammcp_django.connectome.core.observed import Collector, EdgeKey, EdgeLabel, Observation
from beammcp_django.protocol.calling import host_call

# How many code objects, and chains, are remembered; past it, stacks are read afresh.
_CACHE_LIMIT = 8192


# One remembered chain: (depth, code) of each host frame as ``count`` sees them, and the
# collector's keys of the effects counted through it.
Remembered = tuple[tuple[tuple[int, CodeType], ...], tuple[Any, ...]]


class EffectObserver:
    """Counts effects by (host call, chain of host functions, effect).

    ``handler_code`` names the code object of the function serving a call (None when it is
    not a plain function of the host's): the stack is read up to that frame and no further.
    """

    def __init__(
        self,
        scope: Sequence[str],
        handler_code: Callable[[EdgeKey], CodeType | None] = lambda call: None,
    ) -> None:
        self.scope = tuple(scope)
        self.collector = Collector()
        self._handler_code = handler_code
        self._handlers: dict[EdgeKey, CodeType | None] = {}
        # id(code) -> (the code, pinned so its id is never reused; its module or None)
        self._codes: dict[int, tuple[CodeType, str | None]] = {}
        # (call, what the hook saw: a statement's text, an event) -> the chain last found
        self._remembered: dict[tuple[EdgeKey, object], Remembered] = {}
        os.register_at_fork(after_in_child=self.collector.forget)

    def _learn(self, frame: FrameType) -> tuple[CodeType, str | None]:
        """A code object met for the first time: whether its module is in scope."""
        module = frame.f_globals.get("__name__")
        in_scope = isinstance(module, str) and any(
            module == root or module.startswith(root + ".") for root in self.scope
        )
        known = (frame.f_code, module if in_scope else None)
        if len(self._codes) < _CACHE_LIMIT:
            self._codes[id(frame.f_code)] = known
        return known

    def _read(self, call: EdgeKey, start: int) -> tuple[tuple[int, CodeType], ...]:
        """The host frames from ``start`` frames above ``count`` outwards, up to the call's
        handler, outermost first: (their depth as ``count`` counts, their code)."""
        handlers = self._handlers
        if call in handlers:
            stop = handlers[call]
        else:
            stop = handlers[call] = self._handler_code(call)
        codes = self._codes
        frames: list[tuple[int, CodeType]] = []
        frame: FrameType | None = sys._getframe(start + 1)
        depth = start
        while frame is not None:
            code = frame.f_code
            known = codes.get(id(code)) or self._learn(frame)
            if known[1] is not None:
                frames.append((depth, code))
                if code is stop:
                    break
            frame = frame.f_back
            depth += 1
        frames.reverse()
        return tuple(frames)

    def note(self, effect: Effect, seen: object, depth: int = 1) -> None:
        """Count ``effect`` for the host call in progress, if any. ``seen`` is what the hook
        saw (a statement's text, an event's name): the key its chain is remembered by;
        ``depth`` frames above this one is where the hook was called from."""
        self.note_many((effect,), seen, depth + 1)

    def note_many(self, effects: Sequence[Effect], seen: object, depth: int = 1) -> None:
        """``note`` for several effects of one event (a statement touching several tables),
        reading the stack once."""
        call = host_call.get()
        if call is not None and effects:
            self.count(call, seen, lambda seen: effects, depth + 1)

    def count(
        self,
        call: EdgeKey,
        seen: Any,
        effects_of: Callable[[Any], Sequence[Effect]],
        depth: int,
    ) -> None:
        """``note_many`` for a hook that has read ``host_call`` already (the query hook, once
        per statement: the hot path). ``effects_of(seen)`` is asked only when no chain is
        remembered for (call, seen): the effects of one ``seen`` are the same each time (a
        statement's text and alias give the same effects)."""
        key = (call, seen)
        remembered = self._remembered.get(key)
        if remembered is not None:
            try:
                for at, code in remembered[0]:
                    if sys._getframe(at).f_code is not code:
                        break
                else:
                    for counted in remembered[1]:
                        self.collector.count(counted)
                    return
            except ValueError:  # the stack is shallower now
                pass
        frames = self._read(call, depth)
        chain = tuple(id(code) for _, code in frames)
        keys = tuple((call, (chain, effect)) for effect in dict.fromkeys(effects_of(seen)))
        if len(self._remembered) < _CACHE_LIMIT:
            self._remembered[key] = (frames, keys)
        for counted in keys:
            self.collector.count(counted)

    # -- as graph edges ----------------------------------------------------------------------

    def _function(self, server: str, code_id: int) -> str:
        code, module = self._codes[code_id]
        return node_id(server, "module", module or "", code.co_qualname, code.co_argcount)

    def edges(
        self, server: str, handler_of: Callable[[EdgeKey], str | None]
    ) -> dict[EdgeLabel, Observation]:
        """The counted effects as observed edges. ``handler_of`` names the node of the
        handler serving a call (None when it is not the host's), which an effect with no
        host frame on its stack is credited to."""
        edges: dict[EdgeLabel, Observation] = {}
        for (call, (chain, effect)), seen in self.collector.snapshot().items():  # type: ignore[misc]
            functions = [self._function(server, code_id) for code_id in chain]
            if not functions:
                handler = handler_of(call)
                if handler is None:
                    continue
                functions = [handler]
            labels = [
                *((a, b, "invoke") for a, b in pairwise(functions)),
                (functions[-1], effect.node(server), EDGE_KIND),
            ]
            for label in labels:
                _add(edges, label, seen)
        return edges


def _add(edges: dict[EdgeLabel, Observation], label: EdgeLabel, seen: Observation) -> None:
    known = edges.get(label)
    edges[label] = (
        seen
        if known is None
        else Observation(
            known.count + seen.count,
            min(known.first_seen, seen.first_seen),
            max(known.last_seen, seen.last_seen),
        )
    )
