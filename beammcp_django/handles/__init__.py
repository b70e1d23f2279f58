"""Server-minted handles: state a tool keeps across calls without a protocol session (the
2026-07-28 tools page, "Stateful Tools"). A creation tool mints an opaque id of a declared
kind (``kinds.HandleKind``) and returns it; later calls pass it back as an ordinary argument
and host code looks it up through ``context.handles`` (``book.py``), which checks the
caller against the handle on every call and answers an expired, ended, malformed or another
principal's id with the same tool error. The rows live in the database (``store.py``)."""
