"""The effect vocabulary: what host code does to the world, as nodes of the connectome.

An effect is a node of kind ``effect`` at level ``boundary``, named
``<server>/effect/<effect>[/<subject>]`` by the ordinary node-id rules; a function reaches it
by an edge of kind ``effect``. The canonical bytes do not change: kinds are strings, and a
graph without effects is written exactly as before.

| effect | subject | what it stands for |
|---|---|---|
| ``model.read`` | ``app_label.Model`` | rows of a model's table read |
| ``model.write`` | ``app_label.Model`` | rows created or updated |
| ``model.delete`` | ``app_label.Model`` | rows deleted |
| ``sql`` | database alias | raw SQL: a cursor, a table no model owns |
| ``network`` | host name, or ``*`` | an outbound connection |
| ``mail`` | none | mail handed to the email backend |
| ``file.write`` | none | a file opened for writing, written, moved or removed |
| ``subprocess`` | none | a process started |
| ``cache.write`` | cache alias | the cache written |

What each annotation of a tool promises about them is ``CONTRADICTS`` (``audit.py`` holds a
tool's reach against it).
"""

from __future__ import annotations

from typing import NamedTuple

from beammcp_django.connectome.core.canonical import node_id, node_parts

KIND = "effect"
LEVEL = "boundary"
EDGE_KIND = "effect"

MODEL_READ = "model.read"
MODEL_WRITE = "model.write"
MODEL_DELETE = "model.delete"
SQL = "sql"
NETWORK = "network"
MAIL = "mail"
FILE_WRITE = "file.write"
SUBPROCESS = "subprocess"
CACHE_WRITE = "cache.write"
# A server-minted handle of a kind (the subject) made, used (looked up, touched) or ended
# through ``context.handles`` (``beammcp_django/handles``).
HANDLE_MINT = "handle.mint"
HANDLE_USE = "handle.use"
HANDLE_END = "handle.end"

EFFECTS = (
    MODEL_READ,
    MODEL_WRITE,
    MODEL_DELETE,
    SQL,
    NETWORK,
    MAIL,
    FILE_WRITE,
    SUBPROCESS,
    CACHE_WRITE,
    HANDLE_MINT,
    HANDLE_USE,
    HANDLE_END,
)
# A network effect whose host static reading could not tell.
ANY_HOST = "*"

# Which effects each annotation, as declared, says the tool does not have. ``read_only``:
# "does not modify its environment" (raw SQL may write; a process may do anything);
# ``destructive=False``: performs no destructive update (only meaningful when not read-only);
# ``open_world=False``: interacts with no external entity (the network, mail's recipients).
CONTRADICTS: dict[tuple[str, bool], frozenset[str]] = {
    ("read_only", True): frozenset(
        {
            MODEL_WRITE,
            MODEL_DELETE,
            SQL,
            MAIL,
            FILE_WRITE,
            SUBPROCESS,
            CACHE_WRITE,
            HANDLE_MINT,
            HANDLE_END,
        }
    ),
    ("destructive", False): frozenset({MODEL_DELETE}),
    ("open_world", False): frozenset({NETWORK, MAIL}),
}


class Effect(NamedTuple):
    """One effect and its subject ("" for the effects that have none). A tuple: the run-time
    hooks hash one per query, and a tuple hashes in C."""

    name: str
    subject: str = ""

    def node(self, server: str) -> str:
        return node_id(server, "effect", self.name, *((self.subject,) if self.subject else ()))


def effect_of(identity: str) -> Effect | None:
    """The effect a node id names, or None for a node that is not an effect."""
    parts = node_parts(identity)
    if len(parts) < 3 or parts[1] != "effect" or parts[2] not in EFFECTS:
        return None
    return Effect(parts[2], "/".join(parts[3:]))
