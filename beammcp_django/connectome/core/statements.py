"""What one SQL statement does to which tables, read from its text alone.

The observed graph's query hook asks this of every statement a host call runs. The reading
is shallow on purpose (it runs per query; its answers are cached per statement text): the
statement's first keyword says what it does, and every table named after ``FROM``,
``JOIN``, ``INTO`` or ``UPDATE`` is what it touches. ``SELECT`` (and ``WITH`` or
``VALUES``) reads them all; ``INSERT INTO t`` and ``UPDATE t`` write ``t`` and read the rest;
``DELETE FROM t`` deletes from ``t`` and reads the rest; transaction control (``SAVEPOINT``,
``RELEASE``, ``BEGIN``, ``COMMIT``, ``ROLLBACK``, ``SET``) touches nothing. Any other
statement (DDL, ``PRAGMA``, a stored procedure) is raw SQL whose tables are not known.
Parameters are never read: the ORM passes them apart from the text.
"""

from __future__ import annotations

import re

READ = "read"
WRITE = "write"
DELETE = "delete"
# A statement whose effect on tables is not known (the caller names it raw SQL).
UNKNOWN = "unknown"

_TRANSACTION_CONTROL = frozenset(
    {"SAVEPOINT", "RELEASE", "BEGIN", "COMMIT", "ROLLBACK", "SET", "START", "END"}
)
_NAME = r'(?:"(?:[^"]|"")+"|`[^`]+`|\[[^\]]+\]|[A-Za-z_][\w$]*)'
_TABLE = re.compile(rf"\b(FROM|JOIN|INTO|UPDATE)\s+({_NAME}(?:\s*\.\s*{_NAME})*)", re.IGNORECASE)
_FIRST_WORD = re.compile(r"\s*\(*\s*([A-Za-z]+)")
_PART = re.compile(_NAME)
# Functions whose argument syntax has a FROM of its own (EXTRACT(YEAR FROM "t"."c")).
_FROM_IN_FUNCTIONS = re.compile(r"\b(?:EXTRACT|TRIM|SUBSTRING|OVERLAY)\s*\([^()]*\)", re.IGNORECASE)


def _unquote(qualified: str) -> str:
    """A table's own name: the last part of a qualified name, quotes taken off."""
    last = _PART.findall(qualified)[-1]
    if last[0] == '"':
        return last[1:-1].replace('""', '"')
    if last[0] in "`[":
        return last[1:-1]
    return last


Touch = tuple[str, str | None]  # (READ | WRITE | DELETE | UNKNOWN, table or None)


def classify(sql: str) -> tuple[Touch, ...]:
    """What ``sql`` does: (READ, WRITE or DELETE, table) per table it names, or one
    (UNKNOWN, None) for a statement this reading does not know; nothing for transaction
    control."""
    first = _FIRST_WORD.match(sql)
    word = first.group(1).upper() if first else ""
    if word in _TRANSACTION_CONTROL:
        return ()
    text = _FROM_IN_FUNCTIONS.sub("", sql) if "(" in sql else sql
    named = [(keyword.upper(), _unquote(name)) for keyword, name in _TABLE.findall(text)]
    if word in ("SELECT", "WITH", "VALUES"):
        target_keyword, action = None, READ
    elif word == "INSERT" or word == "REPLACE":
        target_keyword, action = "INTO", WRITE
    elif word == "UPDATE":
        target_keyword, action = "UPDATE", WRITE
    elif word == "DELETE":
        target_keyword, action = "FROM", DELETE
    else:
        return ((UNKNOWN, None),)
    touches: dict[Touch, None] = {}
    target_seen = False
    for keyword, table in named:
        if keyword in ("INTO", "UPDATE") and keyword != target_keyword:
            continue  # SELECT ... FOR UPDATE, INSERT ... ON CONFLICT DO UPDATE
        if not target_seen and keyword == target_keyword:
            target_seen = True
            touches[(action, table)] = None
        else:
            touches[(READ, table)] = None
    if target_keyword is not None and not target_seen:
        return ((UNKNOWN, None),)
    return tuple(touches)
