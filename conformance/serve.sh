#!/usr/bin/env bash
# Serve the conformance harness in the foreground on 127.0.0.1:PORT, at /mcp.
#   bash conformance/serve.sh 8765
# The same ASGI wiring a project gets (conformance.asgi:application, built by
# beammcp_django.asgi.get_asgi_application), under the main command (manage.py mcp_serve:
# uvicorn with the package's bounded parser), from the repository's .venv (or the
# interpreter $CONFORMANCE_PYTHON names: the test suite passes its own).
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

# A malformed catalog or setting fails here with the check's message, not mid-run.
"$PYTHON" -m django check --fail-level ERROR >&2

exec "$PYTHON" -m django mcp_serve --host 127.0.0.1 --port "$PORT" --timeout-graceful-shutdown 5
