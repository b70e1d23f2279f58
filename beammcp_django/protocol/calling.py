"""The host call in progress, named for observers of what host code does while it runs.

The server sets ``host_call`` to the call's (method, catalog target) around each call to host
code when it observes calls, and resets it after. Context variables follow a call into the
worker thread that runs sync host code (the transports copy the caller's context) and into
the thread asgiref runs the async ORM's queries in, so an observer called from anywhere
inside the call (a database execute wrapper, a mail backend) can tell which call it serves.
Outside any host call it is None: the package's own work is never a host call's.
"""

from __future__ import annotations

from contextvars import ContextVar

host_call: ContextVar[tuple[str, str] | None] = ContextVar("beammcp_host_call", default=None)
