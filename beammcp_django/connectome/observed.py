"""The observed collector: which catalog entries the calls actually reached, and how often.

A process-local table, in the spirit of the BEAM's ETS: each thread counts in a table of its
own (no lock on the hot path; a lock only when a thread makes its first count), and a snapshot
merges them. It records edge identity and counts only (method, target, first and last seen),
never an argument, a result or a message byte. The server feeds it once per call that reached
host code; ``bench/collector.py`` measures what that costs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

# (method, target): "tools/call" and a tool name, "resources/read" and a URI, "prompts/get"
# and a prompt name. Node ids are made from these only when a snapshot is read.
EdgeKey = tuple[str, str]


@dataclass(frozen=True)
class Observation:
    count: int
    first_seen: float
    last_seen: float


class Collector:
    def __init__(self) -> None:
        self._local = threading.local()
        self._tables: list[dict[EdgeKey, list[float]]] = []
        self._register = threading.Lock()

    def _table(self) -> dict[EdgeKey, list[float]]:
        table: dict[EdgeKey, list[float]] = {}
        with self._register:
            self._tables.append(table)
        self._local.table = table
        return table

    def record(self, method: str, target: str) -> None:
        """Count one call of ``method`` on ``target`` (the hot path: a dict lookup and two
        stores in this thread's own table)."""
        try:
            table = self._local.table
        except AttributeError:
            table = self._table()
        now = time.time()
        entry = table.get((method, target))
        if entry is None:
            table[(method, target)] = [1, now, now]
        else:
            entry[0] += 1
            entry[2] = now

    def snapshot(self) -> dict[EdgeKey, Observation]:
        """Every thread's counts merged (cumulative since the process started)."""
        with self._register:
            tables = list(self._tables)
        merged: dict[EdgeKey, Observation] = {}
        for table in tables:
            for key, (count, first, last) in list(table.items()):
                seen = merged.get(key)
                if seen is None:
                    merged[key] = Observation(int(count), first, last)
                else:
                    merged[key] = Observation(
                        seen.count + int(count),
                        min(seen.first_seen, first),
                        max(seen.last_seen, last),
                    )
        return merged


# The process's collector: the servers this process builds feed it (BEAMMCP["CONNECTOME_OBSERVE"]).
process_collector = Collector()
