"""``context.handles``: the handles host code mints and looks up, as the caller.

Every lookup is the caller's: a handle is found only with its owner's key (the principal
rule of sessions and tasks, ``protocol/principal.py``), only while it lives, and only by
its kind. Whatever else was asked for (another principal's handle, an ended or expired one,
an id of another kind, a malformed one) is the same ``ToolError``, word for word, naming the
kind and never the id: "watch list wl_… expired or unknown: create a new one". Host code
returns it to the model as it is, which then makes a new one.

Sync methods run the ORM where they are called (a sync tool's worker thread); the ``a``
methods (``amint``, ``aget``, ...) are an async tool's, on the package's thread runner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from beammcp_django.handles import store
from beammcp_django.handles.kinds import HandleKind, KindSpec, kind_name
from beammcp_django.protocol.calling import host_call
from beammcp_django.protocol.errors import HostContractError, ToolError
from beammcp_django.protocol.principal import principal_key

# The clock every handle's times are read from; a test replaces it to move time.
clock: Callable[[], datetime] = timezone.now


@dataclass
class Handle:
    """One live handle, as host code holds it: its id (what the tool returns), its kind, the
    host's data, and when it was made and will end unless used again."""

    id: str
    kind: str
    data: dict[str, Any]
    created_at: datetime
    expires_at: datetime


# What is told of each handle a host call minted, used or ended: (the operation, the kind,
# how many frames above the teller the host's caller is). The connectome's observed graph
# counts them as effects (``servers/factory.py`` gives it); None: nobody is told.
EffectNote = Callable[[str, str, int], None]


@contextmanager
def _as_one_effect(
    note: EffectNote | None, operation: str, spec: KindSpec, happened: Callable[[], bool]
) -> Iterator[None]:
    """Run the store's queries as the package's, not the host call's (else they would count
    as effects on the package's own tables), then tell ``note`` of the one operation the
    host's call made, when ``happened()`` says it did."""
    call = host_call.get()
    token = host_call.set(None)
    try:
        yield
    finally:
        host_call.reset(token)
    if note is not None and call is not None and happened():
        # Three frames above the teller: this manager's exit, the book's method, its caller.
        note(operation, spec.kind, 3)


def _held(row: Any) -> Handle:
    return Handle(row.handle_id, row.kind, row.data, row.created_at, row.expires_at)


class HandleBook:
    """The caller's handles of the kinds the catalog declares."""

    def __init__(
        self, kinds: Mapping[str, KindSpec], context: Any, note: EffectNote | None = None
    ) -> None:
        self._kinds = kinds
        self._context = context
        self._note = note
        self._owner = principal_key(context.principal)

    def _spec(self, kind: str | type[HandleKind]) -> KindSpec:
        name = kind_name(kind)
        spec = self._kinds.get(name) if name is not None else None
        if spec is None:
            raise HostContractError(f"no handle kind {str(name)[:64]!r} is registered")
        return spec

    @staticmethod
    def unknown(spec: KindSpec) -> ToolError:
        """The one answer to every id that names no live handle of this caller's."""
        return ToolError(f"{spec.noun} {spec.prefix}_… expired or unknown: create a new one")

    def mint(self, kind: str | type[HandleKind], data: Mapping[str, Any] | None = None) -> Handle:
        """A new handle of ``kind`` holding ``data`` (JSON), or the tool error saying the
        caller holds as many as the kind allows."""
        spec = self._spec(kind)
        minted = []
        with _as_one_effect(self._note, "mint", spec, lambda: bool(minted)):
            minted.append(store.mint_within(spec, self._owner, data or {}, clock()))
        row = minted[0]
        if row is None:
            raise ToolError(
                f"you hold {spec.per_principal} {spec.noun}s, the most one caller may: end "
                "one before making another"
            )
        return _held(row)

    def get(self, kind: str | type[HandleKind], handle_id: Any) -> Handle:
        """The caller's live handle of ``kind`` with that id, its idle lifetime moved on, or
        the one tool error of an unknown id."""
        spec = self._spec(kind)
        used: list[Any] = [None]
        with _as_one_effect(self._note, "use", spec, lambda: used[0] is not None):
            if spec.well_formed(handle_id):
                used[0] = store.use(spec, handle_id, self._owner, clock())
        if used[0] is None:
            raise self.unknown(spec)
        return _held(used[0])

    def touch(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        """Move the handle's idle lifetime on, as a use does."""
        self.get(kind, handle_id)

    def save(self, handle: Handle) -> None:
        """Write ``handle.data`` back (a handle ``get`` just found)."""
        spec = self._spec(handle.kind)
        # No effect of its own: the get that found the handle counted its use.
        with _as_one_effect(self._note, "use", spec, lambda: False):
            saved = store.save_data(spec, handle.id, self._owner, handle.data, clock())
        if not saved:
            raise self.unknown(spec)

    def end(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        """End the caller's handle now, or the one tool error of an unknown id."""
        spec = self._spec(kind)
        ended = [False]
        with _as_one_effect(self._note, "end", spec, lambda: ended[0]):
            ended[0] = spec.well_formed(handle_id) and store.end(
                spec, handle_id, self._owner, clock()
            )
        if not ended[0]:
            raise self.unknown(spec)

    async def amint(
        self, kind: str | type[HandleKind], data: Mapping[str, Any] | None = None
    ) -> Handle:
        return await self._context.run_sync(self.mint, kind, data)

    async def aget(self, kind: str | type[HandleKind], handle_id: Any) -> Handle:
        return await self._context.run_sync(self.get, kind, handle_id)

    async def atouch(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        await self._context.run_sync(self.touch, kind, handle_id)

    async def asave(self, handle: Handle) -> None:
        await self._context.run_sync(self.save, handle)

    async def aend(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        await self._context.run_sync(self.end, kind, handle_id)


def kinds_of(catalog: Any) -> dict[str, KindSpec]:
    """The catalog's handle kinds by name: its optional ``handle_kinds``."""
    return {spec.kind: spec for spec in getattr(catalog, "handle_kinds", ())}


def handle_books(catalog: Any, note: EffectNote | None = None) -> Callable[[Any], HandleBook]:
    """What gives each request's host code its ``context.handles``, telling ``note`` of each
    handle minted, used or ended."""

    def book(context: Any) -> HandleBook:
        return HandleBook(kinds_of(catalog), context, note)

    return book
