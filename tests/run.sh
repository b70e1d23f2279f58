#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
#   bash tests/run.sh            # the whole suite
#   bash tests/run.sh -k stdio   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install --quiet -r requirements/test.txt 2>&1 | grep -v "^WARNING: Location" || true

# redis-server for the cross-worker subscriptions test (Debian's package; root only).
if ! command -v redis-server >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    echo "== installing redis-server"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >/dev/null 2>&1 \
        || echo "redis-server could not be installed; the cross-worker test will be skipped" >&2
fi

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== django system checks"
.venv/bin/python manage.py check

echo "== pytest"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests; an empty run is not a pass" >&2
    exit 1
fi
exit "$status"
