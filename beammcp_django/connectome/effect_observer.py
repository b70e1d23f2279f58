"""Effects observed at run time, credited to the host call and the host functions that had them.

A hook that sees an effect (the query hook, the mail backend) calls ``EffectObserver.note``.
Outside a host call (``protocol.calling.host_call`` is None: the package's own flushes,
sessions, tasks and permission lookups) it returns at once, so none of those is ever credited
to a tool. Inside one, the calling thread's stack says which host functions led to it: the
frames whose module is in the connectome's scope, outermost first, the handler among them
when the call ran on this thread. That chain is counted with the effect, in a per-thread
table like the dispatch collector's; nothing of the statement, its parameters or the message
is kept. When no frame on the stack is the host's (the async ORM runs its queries in a
worker thread of asgiref's, away from the coroutine that awaits them), the effect is credited
to the call's handler.

A counted chain becomes observed edges: each function to the next (``invoke``), the last to
the effect (``effect``). Their counts are the effects seen through them, not calls.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from itertools import pairwise
from types import CodeType, FrameType

from beammcp_django.protocol.calling import host_call

from .canonical import node_id
from .effects import EDGE_KIND, Effect
from .observed import Collector, EdgeKey, EdgeLabel, Observation

# How many code objects the in-scope cache remembers; past it, frames are looked at afresh.
_CODE_CACHE_LIMIT = 8192
# The outermost host frame is rarely deeper than this; a deeper stack is cut here.
_STACK_LIMIT = 256


class EffectObserver:
    """Counts effects by (host call, chain of host functions, effect)."""

    def __init__(self, scope: Sequence[str]) -> None:
        self.scope = tuple(scope)
        self.collector = Collector()
        # id(code) -> (the code, pinned so its id is never reused; its module or None)
        self._codes: dict[int, tuple[CodeType, str | None]] = {}
        os.register_at_fork(after_in_child=self.collector.forget)

    def _module_in_scope(self, frame: FrameType) -> str | None:
        module = frame.f_globals.get("__name__")
        if isinstance(module, str) and any(
            module == root or module.startswith(root + ".") for root in self.scope
        ):
            return module
        return None

    def _chain(self, frame: FrameType | None) -> tuple[int, ...]:
        """The ids of the host functions' code on the stack, outermost first."""
        codes = self._codes
        found: list[int] = []
        depth = 0
        while frame is not None and depth < _STACK_LIMIT:
            code = frame.f_code
            known = codes.get(id(code))
            if known is None:
                known = (code, self._module_in_scope(frame))
                if len(codes) < _CODE_CACHE_LIMIT:
                    codes[id(code)] = known
            if known[1] is not None:
                found.append(id(code))
            frame = frame.f_back
            depth += 1
        found.reverse()
        return tuple(found)

    def note(self, effect: Effect, depth: int = 1) -> None:
        """Count ``effect`` for the host call in progress, if any; ``depth`` frames above
        this one is where the hook was called from."""
        call = host_call.get()
        if call is None:
            return
        self.collector.record(call, (self._chain(sys._getframe(depth)), effect))  # type: ignore[arg-type]

    def note_many(self, effects: Sequence[Effect], depth: int = 1) -> None:
        """``note`` for several effects of one event (a statement touching several tables),
        reading the stack once."""
        call = host_call.get()
        if call is None or not effects:
            return
        chain = self._chain(sys._getframe(depth))
        for effect in effects:
            self.collector.record(call, (chain, effect))  # type: ignore[arg-type]

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
