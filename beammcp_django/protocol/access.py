"""Who may use a catalog entry: the gates that hide it from a caller, and the OAuth scopes
its use needs. The host declares both; the core holds every list and every request that
names an entry to them, the same way in both eras.

Two kinds, answered differently:

- A *gate* hides. A caller one of the entry's gates refuses sees it in no list and no
  completion, and a request naming it is answered exactly as for an entry that does not
  exist: the answer is no oracle for what the caller may not see. A gate that raises hides
  (fails closed), and the fault is logged.
- *Scopes* challenge. An entry is listed to every caller its gates admit, whatever scopes
  the caller's token carries: the scope an entry needs is no secret (the resource's metadata
  publishes ``scopes_supported``), and a client can only step up to a scope for an entry it
  can see. Using the entry (calling, reading, getting, completing) with a token that lacks
  one of its scopes raises ``InsufficientScope``, which the HTTP transport answers 403 with
  the authorization spec's ``insufficient_scope`` challenge, every missing scope named at
  once. A caller whose scopes are unknown (``None``: stdio, where the spec leaves
  credentials to the environment) is not held to scopes.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from .context import RequestContext

logger = logging.getLogger("beammcp_django")

# What a gate is: given the request's context (``context.principal`` above all), whether the
# caller may see the entry. A plain function runs on a worker thread, where the ORM may be
# used; a coroutine function is awaited on the loop.
Gate = Callable[[RequestContext], "bool | Awaitable[bool]"]
# A plain gate may also carry ``quick_refusal(context) -> bool``: a test cheap enough for
# the event loop, asked before the worker-thread hop. True hides the entry without running
# the gate (a permission gate and a caller that is no Django user: a list served to it costs
# no thread hop); False leaves the verdict to the gate.
QUICK_REFUSAL = "quick_refusal"


@dataclass(frozen=True, eq=False)
class Access:
    """What an entry demands of its caller. ``shown`` says in words what ``gates`` check,
    for people reading the catalog (the admin); the core never reads it."""

    gates: tuple[Gate, ...] = ()
    scopes: frozenset[str] = frozenset()
    shown: tuple[str, ...] = ()
    _sync: tuple[Gate, ...] = field(init=False, repr=False)
    _async: tuple[Gate, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Decided once: a gate's kind does not change between requests.
        object.__setattr__(
            self, "_sync", tuple(g for g in self.gates if not inspect.iscoroutinefunction(g))
        )
        object.__setattr__(
            self, "_async", tuple(g for g in self.gates if inspect.iscoroutinefunction(g))
        )

    @property
    def hides(self) -> bool:
        """Whether the entry may be hidden from some caller (its lists depend on who asks)."""
        return bool(self.gates)


class InsufficientScope(Exception):
    """The caller's token lacks scopes the entry it used needs: answered by the transport as
    its carrier challenges (HTTP: 403, ``WWW-Authenticate: Bearer
    error="insufficient_scope"``). ``scopes`` is every scope the entry needs, sorted."""

    def __init__(self, scopes: frozenset[str]) -> None:
        super().__init__("the token lacks a scope the request needs")
        self.scopes = tuple(sorted(scopes))


def hides(access: Access | None) -> bool:
    return access is not None and access.hides


def require_scopes(access: Access | None, context: RequestContext) -> None:
    """Raise ``InsufficientScope`` when the caller's scopes lack one ``access`` needs."""
    if access is None or not access.scopes or context.scopes is None:
        return
    if not access.scopes <= context.scopes:
        raise InsufficientScope(access.scopes)


async def admitted(accesses: Sequence[Access | None], context: RequestContext) -> list[bool]:
    """Whether the caller passes each entry's gates, in order. Every plain gate of the batch
    runs in one worker-thread call (a list of a hundred gated tools costs one thread hop,
    not a hundred, and none when every gate's ``quick_refusal`` already hides); each verdict
    is kept on the context, so a request checks an entry once."""
    known = context.admitted
    pending = [a for a in accesses if a is not None and a.gates and id(a) not in known]
    if pending:
        unique = []
        for access in {id(access): access for access in pending}.values():
            if any(_refused_at_once(gate, context) for gate in access._sync):
                known[id(access)] = False
            else:
                unique.append(access)
        if any(access._sync for access in unique):
            verdicts = await context.run_sync(_run_sync_gates, unique, context)
        else:
            verdicts = [True] * len(unique)
        for access, verdict in zip(unique, verdicts, strict=True):
            for gate in access._async:
                if not verdict:
                    break
                verdict = await _async_verdict(gate, context)
            known[id(access)] = verdict
    return [access is None or not access.gates or known[id(access)] for access in accesses]


async def admits(access: Access | None, context: RequestContext) -> bool:
    """Whether the caller passes the gates of one entry."""
    if access is None or not access.gates:
        return True
    return (await admitted((access,), context))[0]


def _run_sync_gates(accesses: list[Access], context: RequestContext) -> list[bool]:
    return [all(_sync_verdict(gate, context) for gate in access._sync) for access in accesses]


def _refused_at_once(gate: Gate, context: RequestContext) -> bool:
    quick = getattr(gate, QUICK_REFUSAL, None)
    if quick is None:
        return False
    try:
        return quick(context) is True
    except Exception:
        logger.exception("an MCP visibility gate raised; the entry is hidden from this caller")
        return True


def _sync_verdict(gate: Gate, context: RequestContext) -> bool:
    try:
        return gate(context) is True
    except Exception:
        logger.exception("an MCP visibility gate raised; the entry is hidden from this caller")
        return False


async def _async_verdict(gate: Gate, context: RequestContext) -> bool:
    try:
        return await gate(context) is True  # type: ignore[misc]
    except Exception:
        logger.exception("an MCP visibility gate raised; the entry is hidden from this caller")
        return False
