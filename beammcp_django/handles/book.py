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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from beammcp_django.handles import store
from beammcp_django.handles.kinds import HandleKind, KindSpec, kind_name
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


def _held(row: Any) -> Handle:
    return Handle(row.handle_id, row.kind, row.data, row.created_at, row.expires_at)


class HandleBook:
    """The caller's handles of the kinds the catalog declares."""

    def __init__(self, kinds: Mapping[str, KindSpec], context: Any) -> None:
        self._kinds = kinds
        self._context = context
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
        row = store.mint_within(spec, self._owner, data or {}, clock())
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
        row = (
            store.use(spec, handle_id, self._owner, clock())
            if spec.well_formed(handle_id)
            else None
        )
        if row is None:
            raise self.unknown(spec)
        return _held(row)

    def touch(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        """Move the handle's idle lifetime on, as a use does."""
        self.get(kind, handle_id)

    def save(self, handle: Handle) -> None:
        """Write ``handle.data`` back (a handle ``get`` just found)."""
        spec = self._spec(handle.kind)
        row = store.use(spec, handle.id, self._owner, clock())
        if row is None:
            raise self.unknown(spec)
        store.save_data(row, handle.data)

    def end(self, kind: str | type[HandleKind], handle_id: Any) -> None:
        """End the caller's handle now, or the one tool error of an unknown id."""
        spec = self._spec(kind)
        if not (spec.well_formed(handle_id) and store.end(spec, handle_id, self._owner, clock())):
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


def handle_books(catalog: Any) -> Callable[[Any], HandleBook]:
    """What gives each request's host code its ``context.handles``."""

    def book(context: Any) -> HandleBook:
        return HandleBook(kinds_of(catalog), context)

    return book
