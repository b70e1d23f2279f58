"""The official MCP Python SDK serving the HTTP peer's tools over stdio, for ``bench/stdio.py``.

The server object is ``bench.sdk_peer.server`` (the same ``MCPServer``, the same four tools:
``echo`` a plain function the SDK runs in a worker thread, ``echo_async`` a coroutine), run
with the SDK's own stdio transport, ``MCPServer.run("stdio")``: newline-delimited JSON-RPC on
stdin and stdout, on anyio's default asyncio backend (no uvloop, as ours). The SDK's stdio
loop serves either era, chosen by a connection's first request: ``initialize`` opens a
2025-11-25 (handshake) connection, a request carrying the ``_meta`` envelope opens a
2026-07-28 one. Run it from the repository root as a module, never as a script (``bench/`` on
``sys.path`` would let ``bench/http.py`` shadow the standard library's ``http``)::

    .venv/bin/python -m bench.sdk_stdio_peer
"""

from __future__ import annotations

from bench.sdk_peer import server

if __name__ == "__main__":
    server.run("stdio")
