"""The handles' rows (``McpHandle``): minted within the owner's bound, found only by their
owner while they live, moved on by each use, ended, purged. Every function takes ``now``:
the caller's clock (``book.py`` reads it), so a test moves time without sleeping."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from beammcp_django.handles.kinds import TOKEN_BYTES, KindSpec
from beammcp_django.models import McpHandle, McpHandleOwner


def mint_within(
    spec: KindSpec, owner: str, data: Mapping[str, Any], now: datetime
) -> McpHandle | None:
    """A new handle of ``spec``'s kind for ``owner``, committed when this returns; None when
    ``owner`` already holds ``spec.per_principal`` live ones. Exact across processes and
    machines: the count and the insert run in one transaction that first writes the
    owner's lock row for the kind, so a second mint of the same owner and kind waits at that
    write (PostgreSQL's row lock, SQLite's write lock) until the first commits, then counts
    its handle."""
    with transaction.atomic():
        lock = McpHandleOwner.objects.filter(owner=owner, kind=spec.kind)
        if not lock.update(locked_at=now):
            try:
                with transaction.atomic():  # a savepoint: a racing first mint may insert it
                    McpHandleOwner.objects.create(owner=owner, kind=spec.kind, locked_at=now)
            except IntegrityError:
                lock.update(locked_at=now)
        live = McpHandle.objects.filter(owner=owner, kind=spec.kind, expires_at__gt=now)
        if live.count() >= spec.per_principal:
            return None
        return McpHandle.objects.create(
            handle_id=f"{spec.prefix}_{secrets.token_urlsafe(TOKEN_BYTES)}",
            kind=spec.kind,
            owner=owner,
            created_at=now,
            last_used_at=now,
            expires_at=min(now + spec.idle, now + spec.lifetime),
            ends_at=now + spec.lifetime,
            data=dict(data),
        )


def use(spec: KindSpec, handle_id: str, owner: str, now: datetime) -> McpHandle | None:
    """The live handle of that id, kind and owner, its idle lifetime moved on from ``now``
    (never past its absolute end); None for any other id, whoever holds it. Another's id
    and one nobody minted take one path, the same indexed lookup keyed by the caller; only
    the owner's own live handle goes on to the conditional write."""
    found = McpHandle.objects.filter(
        handle_id=handle_id, kind=spec.kind, owner=owner, expires_at__gt=now
    ).first()
    if found is None:
        return None
    found.last_used_at = now
    found.expires_at = min(now + spec.idle, found.ends_at)
    McpHandle.objects.filter(pk=found.pk, expires_at__gt=now).update(
        last_used_at=found.last_used_at, expires_at=found.expires_at
    )
    return found


def save_data(
    spec: KindSpec, handle_id: str, owner: str, data: Mapping[str, Any], now: datetime
) -> bool:
    """The owner's live handle's data replaced, in one conditional write: whether there was
    one (it may have ended since the use that found it)."""
    live = McpHandle.objects.filter(
        handle_id=handle_id, kind=spec.kind, owner=owner, expires_at__gt=now
    )
    return live.update(data=dict(data)) > 0


def end(spec: KindSpec, handle_id: str, owner: str, now: datetime) -> bool:
    """End the owner's live handle of that id: whether there was one."""
    live = McpHandle.objects.filter(
        handle_id=handle_id, kind=spec.kind, owner=owner, expires_at__gt=now
    )
    return live.delete()[0] > 0


def purge(now: datetime) -> int:
    """Delete every handle past its end: how many."""
    return McpHandle.objects.filter(expires_at__lte=now).delete()[0]
