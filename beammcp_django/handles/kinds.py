"""A kind of handle, as a host declares it: its name and id prefix, how long one lives (idle
and absolute), how many one principal may hold, and the words the model reads of it.

    @mcp.site.register
    class WatchList(mcp.HandleKind):
        kind = "watch_list"
        prefix = "wl"
        idle = timedelta(hours=1)
        lifetime = timedelta(days=1)
        per_principal = 20

A tool that mints one says so (``mints = (WatchList,)``): its description then ends with the
kind's lifetime, derived from these attributes so it cannot drift. A tool that takes one
declares the argument with ``WatchList.argument("...")``: the id's shape is checked before
host code runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, ClassVar

from beammcp_django.protocol.catalog import ToolSpec

# The rule of ``checks/handles.py`` (``checks/ids.py`` gives it its id).
BAD_HANDLE_KIND = "bad_handle_kind"
# An id: the prefix, "_", then secrets.token_urlsafe(24), 32 characters (192 bits).
TOKEN_BYTES = 24
TOKEN_CHARS = 32
_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
_PREFIX = re.compile(r"[a-z][a-z0-9]{0,7}")


@dataclass(frozen=True)
class KindSpec:
    """A kind as the package enforces it."""

    kind: str
    prefix: str
    noun: str
    idle: timedelta
    lifetime: timedelta
    per_principal: int
    data_in_admin: bool

    @property
    def id_pattern(self) -> str:
        return f"^{self.prefix}_[A-Za-z0-9_-]{{{TOKEN_CHARS}}}$"

    def well_formed(self, handle_id: Any) -> bool:
        return isinstance(handle_id, str) and re.fullmatch(self.id_pattern, handle_id) is not None

    def lifetime_text(self) -> str:
        """What a minting tool's description says of the kind's lifetime."""
        plural = self.noun + "s"
        return (
            f"{plural[0].upper()}{plural[1:]} expire after {spoken(self.idle)} unused and "
            f"{spoken(self.lifetime)} after they are made; one caller may hold "
            f"{self.per_principal} at once."
        )


def spoken(span: timedelta) -> str:
    """A span in the largest whole unit that says it exactly: "1 hour", "90 minutes"."""
    seconds = int(span.total_seconds())
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


class HandleKind:
    """Declare a kind of handle: subclass, set ``kind`` and ``prefix``, register it."""

    kind: ClassVar[str]
    prefix: ClassVar[str]
    # What the model reads it called ("watch list"); the kind's name with spaces by default.
    noun: ClassVar[str | None] = None
    # A handle unused this long ends; none lives past ``lifetime`` after it was made.
    idle: ClassVar[timedelta] = timedelta(hours=1)
    lifetime: ClassVar[timedelta] = timedelta(days=1)
    # How many live handles of this kind one principal may hold.
    per_principal: ClassVar[int] = 100
    # Whether the admin shows a handle's data (never, unless the host says so).
    data_in_admin: ClassVar[bool] = False

    @classmethod
    def spec(cls) -> KindSpec:
        return KindSpec(
            kind=cls.kind,
            prefix=cls.prefix,
            noun=cls.noun or cls.kind.replace("_", " "),
            idle=cls.idle,
            lifetime=cls.lifetime,
            per_principal=cls.per_principal,
            data_in_admin=cls.data_in_admin,
        )

    @classmethod
    def argument(cls, description: str | None = None) -> dict[str, Any]:
        """The JSON Schema of an argument holding one of these ids: its shape, checked with
        the other arguments before host code runs."""
        schema: dict[str, Any] = {"type": "string", "pattern": cls.spec().id_pattern}
        schema["description"] = description or f"a {cls.spec().noun} id"
        return schema


def kind_problems(spec: KindSpec) -> list[str]:
    """What is wrong with a kind's declaration (``manage.py check``)."""
    problems = []
    if not isinstance(spec.kind, str) or not _NAME.fullmatch(spec.kind):
        problems.append("its kind is not 1 to 63 of a-z 0-9 _, starting with a letter")
    if not isinstance(spec.prefix, str) or not _PREFIX.fullmatch(spec.prefix):
        problems.append("its prefix is not 1 to 8 of a-z 0-9, starting with a letter")
    spans = [spec.idle, spec.lifetime]
    for name, span in zip(("idle", "lifetime"), spans, strict=True):
        if not isinstance(span, timedelta) or span.total_seconds() < 1:
            problems.append(f"its {name} is not a timedelta of at least a second")
    if all(isinstance(span, timedelta) for span in spans) and spec.idle > spec.lifetime:
        problems.append("its idle lifetime is longer than its lifetime")
    bound = spec.per_principal
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
        problems.append("its per_principal is not an integer >= 1")
    return problems


def kind_name(kind: Any) -> str | None:
    """A kind named by its name or by its ``HandleKind`` class."""
    name = kind if isinstance(kind, str) else getattr(kind, "kind", None)
    return name if isinstance(name, str) else None


def with_lifetimes(spec: ToolSpec, mints: Sequence[Any], kinds: Mapping[str, KindSpec]) -> ToolSpec:
    """A minting tool's spec, its description ending with the lifetime of each kind it mints
    (derived from the kind's declaration, so the model reads what the store enforces)."""
    texts = [kinds[name].lifetime_text() for name in map(kind_name, mints) if name in kinds]
    if not texts:
        return spec
    return replace(spec, description=" ".join(filter(None, [spec.description, *texts])))
