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

# Debian packages the suite uses (root only): redis-server for the cross-worker subscriptions
# test, graphviz's `dot` for the connectome drawings, chromium and chromium-driver for the
# admin browser test. Without root, the tests that need a missing one are skipped.
packages=""
command -v redis-server >/dev/null 2>&1 || packages="$packages redis-server"
command -v dot >/dev/null 2>&1 || packages="$packages graphviz"
command -v chromium >/dev/null 2>&1 || packages="$packages chromium"
command -v chromedriver >/dev/null 2>&1 || packages="$packages chromium-driver"
if [ -n "$packages" ] && [ "$(id -u)" = "0" ]; then
    echo "== installing$packages"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages) >/dev/null 2>&1 \
        || echo "could not install$packages; the tests that need them will be skipped" >&2
fi

# PostgreSQL for the ORM tests' second run: start_postgres, run_orm_tests_on_postgres.
. tests/postgres.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== django system checks"
.venv/bin/python manage.py check

# In CI a PostgreSQL that cannot be started fails the run; elsewhere its tests are skipped.
postgres=false
if start_postgres; then
    postgres=true
elif [ "${CI:-}" = "true" ]; then
    echo "CI runs the ORM tests on PostgreSQL, and it could not be started" >&2
    exit 1
else
    echo "PostgreSQL unavailable: its tests are skipped, the ORM tests run on SQLite only" >&2
fi

echo "== pytest"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests; an empty run is not a pass" >&2
    exit 1
fi
if [ "$postgres" = "true" ]; then
    orm_status=0
    run_orm_tests_on_postgres "$@" || orm_status=$?
    if [ "$status" -eq 0 ]; then status=$orm_status; fi
fi
exit "$status"
