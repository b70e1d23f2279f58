"""The header of a report from a script that runs ``bench/http.py``'s machinery with servers or
loads of its own (``serve_paths.py``, ``stages.py``): that script's header, naming the script
actually run as the command."""

from __future__ import annotations

from bench.http import run_header


def header(script: str, method: str) -> str:
    """``bench/http.py``'s first lines (when, which commit, the servers' command line) for a
    run of ``bench/<script>`` that measured with ``method``."""
    return run_header(method).replace("bench/http.py", f"bench/{script}", 1)
