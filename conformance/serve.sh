#!/usr/bin/env bash
# Serve the conformance harness in the foreground on 127.0.0.1:PORT, at /mcp.
#   bash conformance/serve.sh 8765
# The same ASGI wiring a project gets (conformance.asgi:application, built by
# beammcp_django.asgi.get_asgi_application), under the main command (manage.py mcp_serve:
# uvicorn with the package's bounded parser), from the repository's .venv (or the
# interpreter $CONFORMANCE_PYTHON names: the test suite passes its own).
# The tasks fixtures' tasks run in two django-tasks-db workers (manage.py db_worker) beside
# the server, on a SQLite database made and migrated for the run; with $CONFORMANCE_DB set,
# the caller made that database and runs the workers (serve_shared.sh, for its two servers).
set -euo pipefail

PORT="${1:?usage: conformance/serve.sh PORT}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${CONFORMANCE_PYTHON:-$ROOT/.venv/bin/python}"
cd "$ROOT"

if [ ! -x "$PYTHON" ]; then
    echo "serve.sh: $PYTHON not found; create the venv first (bash tests/run.sh does)" >&2
    exit 1
fi

export DJANGO_SETTINGS_MODULE=conformance.settings
export CONFORMANCE_PORT="$PORT"

PIDS=()
WORK=""
stop_all() {
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "$WORK" ]; then
        rm -rf "$WORK"
    fi
}
trap stop_all EXIT
trap 'exit 0' TERM INT

if [ -z "${CONFORMANCE_DB:-}" ]; then
    WORK="$(mktemp -d)"
    export CONFORMANCE_DB="$WORK/harness.sqlite3"
    "$PYTHON" -m django migrate --no-input -v 0 >&2
    for worker in 1 2; do
        "$PYTHON" -m django db_worker --interval 0.1 --no-startup-delay \
            --worker-id "conformance-$worker-$$" >&2 &
        PIDS+=($!)
    done
fi

# A malformed catalog or setting fails here with the check's message, not mid-run.
"$PYTHON" -m django check --fail-level ERROR >&2

"$PYTHON" -m django mcp_serve --host 127.0.0.1 --port "$PORT" --timeout-graceful-shutdown 5 &
PIDS+=($!)
wait "${PIDS[-1]}"
