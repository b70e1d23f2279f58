"""The merged store: each process flushes its observed counts to ``ObservedEdge`` rows.

A process is named once (host name, process id, start time and a random tag; a new name
after a fork) and
writes only rows carrying its name, with its cumulative counts: a flush is idempotent, a
failed flush is made good by the next one, and two processes never overwrite each other.
Flushes run on an interval in a daemon thread and at exit, and on demand (``flush``).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, close_old_connections, connection, transaction
from django.db.models import Max, Min, Sum

from beammcp_django.connectome.core.observed import EdgeLabel, Observation
from beammcp_django.models import ObservedEdge
from beammcp_django.runtime.database_outages import DATABASE_DOWN, is_outage
from beammcp_django.signals import observed_flushed
from beammcp_django.transports.outages import DATABASE, outages

logger = logging.getLogger("beammcp_django")


def edge_key(label: EdgeLabel) -> str:
    """The unique key of an edge in the store: SHA-256 of its three parts."""
    return hashlib.sha256("\x00".join(label).encode("utf-8", "surrogatepass")).hexdigest()


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def process_label(node: str) -> str:
    """A process's name (``ProcessStore.node``: host, pid, start, tag) as a reader reads it:
    ``vm, pid 18489, since 2026-12-06 16:36 UTC``; a name of another shape as it is."""
    parts = node.split(":")
    if len(parts) < 4 or not parts[-3].isdigit() or not parts[-2].isdigit():
        return node
    host, pid, started = ":".join(parts[:-3]), parts[-3], int(parts[-2])
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(started))
    return f"{host}, pid {pid}, since {when} UTC"


class ProcessStore:
    """This process's writer: its name and what it last wrote, so unchanged rows are skipped."""

    def __init__(self) -> None:
        # Re-entrant: on_commit runs _remember at once when no transaction is open.
        self._lock = threading.RLock()
        self._pid = -1
        self._node = ""
        self._written: dict[EdgeLabel, int] = {}

    @property
    def node(self) -> str:
        pid = os.getpid()
        if pid != self._pid:  # first use, or a forked child: a name of its own
            self._pid = pid
            # The tag: containers sharing the host's network share its host name, each in a
            # PID namespace of its own, so two workers started together can agree on the rest
            # and would overwrite each other's rows.
            tag = secrets.token_hex(4)
            self._node = f"{socket.gethostname()}:{pid}:{int(time.time())}:{tag}"
            self._written = {}
        return self._node

    def flush(self, edges: Mapping[EdgeLabel, Observation]) -> int:
        """Write the rows whose counts changed since the last flush; how many were written."""
        with self._lock:
            node = self.node
            changed = {
                label: seen
                for label, seen in edges.items()
                if self._written.get(label) != seen.count
            }
            if not changed:
                return 0
            now = datetime.now(tz=UTC)
            with transaction.atomic():
                for label, seen in changed.items():
                    source, target, kind = label
                    ObservedEdge.objects.update_or_create(
                        node=node,
                        edge_key=edge_key(label),
                        defaults={
                            "source": source,
                            "target": target,
                            "kind": kind,
                            "count": seen.count,
                            "first_seen": _moment(seen.first_seen),
                            "last_seen": _moment(seen.last_seen),
                            "flushed_at": now,
                        },
                    )
            # Remembered once the rows are durable: inside a request's transaction that
            # rolls back, the next flush must write them again.
            written = {label: seen.count for label, seen in changed.items()}
            transaction.on_commit(lambda: self._remember(written))
        observed_flushed.send(sender=ProcessStore, node=node, edges=len(changed))
        return len(changed)

    def _remember(self, written: dict[EdgeLabel, int]) -> None:
        with self._lock:
            self._written.update(written)


process_store = ProcessStore()


def merged_counts() -> dict[EdgeLabel, Observation]:
    """Every process's rows summed per edge: the merged picture."""
    rows = (
        ObservedEdge.objects.values("source", "target", "kind")
        .annotate(total=Sum("count"), first=Min("first_seen"), last=Max("last_seen"))
        .order_by()
    )
    return {
        (row["source"], row["target"], row["kind"]): Observation(
            row["total"], row["first"].timestamp(), row["last"].timestamp()
        )
        for row in rows
    }


class Flusher:
    """A daemon thread flushing every ``interval`` seconds, and once more at exit.

    ``collect`` returns the edges to write; a failure (a missing table, a locked database) is
    logged in one line and the next flush writes the same cumulative counts again. The same
    failure again is logged at debug only, until a flush succeeds or fails otherwise: a project
    that never ran ``migrate`` would otherwise log it on every interval, forever.
    """

    def __init__(self, collect: Any, interval: float | None) -> None:
        self._collect = collect
        self._interval = interval
        self._started = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._last_failure: str | None = None

    def start(self) -> None:
        """Flush on the interval and at exit; with no interval, only on demand."""
        with self._lock:
            if self._started or self._interval is None:
                return
            self._started = True
        atexit.register(self.flush_quietly)
        threading.Thread(target=self._run, name="beammcp-connectome-flush", daemon=True).start()

    def stop(self) -> None:
        """No more flushes on the interval or at exit (settings changed, or shutting down)."""
        self._stopped.set()
        atexit.unregister(self.flush_quietly)

    def close(self) -> None:
        """The last flush of a process that ends without running ``atexit`` (``mcp_stdio``
        leaves with ``os._exit``): flush once more, then stop. Nothing without an interval."""
        with self._lock:
            if not self._started:
                return
        self.stop()
        self.flush_quietly()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            self.flush_quietly()

    def flush(self) -> int:
        """Flush now, on the caller's thread and connection (on demand)."""
        return process_store.flush(self._collect())

    def flush_quietly(self) -> int:
        """Flush from the daemon thread or at exit: log a failure in one line (whatever it is,
        the thread lives on), then close the connection this thread opened (it is not a
        request, nothing else would close it). The database not answering is an outage of
        the one part the tasks meet too, logged once as it starts and once as it ends
        (``runtime.database_outages``); the counts stay in memory for the next flush."""
        try:
            close_old_connections()
            written = self.flush()
        except Exception as error:
            if isinstance(error, DATABASE_DOWN) and is_outage(error) and _store_table_exists():
                outages.down(DATABASE, error)  # not the missing migration: the database
                return 0
            failure = failure_description(error)
            if failure != self._last_failure:
                self._last_failure = failure
                logger.warning("%s", failure)
            else:
                logger.debug("%s", failure)
            return 0
        finally:
            connection.close()
        self._last_failure = None
        if written:  # it reached the database (a flush with nothing new touches none)
            outages.up(DATABASE)
        return written


def failure_description(error: Exception) -> str:
    """What a failed flush says: for the missing table of a project that has not run
    ``migrate``, what to do about it; for anything else, the error in one line."""
    if isinstance(error, DatabaseError) and not _store_table_exists():
        return (
            f"MCP connectome: the table {ObservedEdge._meta.db_table} does not exist, so "
            "observed call counts cannot be written: run `python manage.py migrate` (the "
            "counts are kept in this process and written by the first flush after it)"
        )
    return f"MCP connectome flush failed (retried at the next one): {type(error).__name__}: {error}"


def _store_table_exists() -> bool:
    """Whether the store's table is there; True when even that cannot be asked (a database
    that is down is not a missing migration)."""
    try:
        with connection.cursor() as cursor:
            tables = connection.introspection.table_names(cursor)
    except Exception:
        return True
    return ObservedEdge._meta.db_table in tables
