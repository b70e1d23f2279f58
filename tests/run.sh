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

# PostgreSQL for the ORM-writing tests' second run (docs/deployment-database.md). Debian's
# server (the `postgresql` package, installed when missing and run as root) in a cluster of
# the suite's own: initdb into a directory under /var/tmp, owned by the `postgres` user when
# run as root (the server refuses to run as root), listening on 127.0.0.1 only, on a port
# free when the cluster was made. Idempotent: a cluster already made is reused, one already
# running is left running. Creates the role `beammcp` (password `beammcp`, CREATEDB: the
# tests create their databases) and a database named after this checkout, then exports
# BEAMMCP_TEST_POSTGRES_URL. Returns non-zero, saying why, when any step fails.
start_postgres() {
    local bindir owner data port database
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ ! -x "$bindir/initdb" ] && [ "$(id -u)" = "0" ]; then
        echo "== installing postgresql"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) \
            >/dev/null 2>&1 || { echo "could not install postgresql" >&2; return 1; }
        bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    fi
    if [ ! -x "$bindir/initdb" ]; then
        echo "Debian's postgresql is not installed (run as root to install it)" >&2
        return 1
    fi
    owner=$(id -un)
    if [ "$(id -u)" = "0" ]; then owner=postgres; fi
    data=${BEAMMCP_TEST_POSTGRES_DIR:-/var/tmp/beammcp-test-postgres-$(id -un)}
    as_owner() {
        if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
    }
    if [ ! -s "$data/PG_VERSION" ]; then
        rm -rf "$data" && mkdir -p "$data" && chown "$owner" "$data" && chmod 700 "$data" \
            || { echo "could not make $data" >&2; return 1; }
        # Local socket connections are trusted: the socket lives in the 0700 data directory.
        as_owner "$bindir/initdb" -D "$data" -U postgres -E UTF8 --locale=C.UTF-8 \
            --auth-local=trust --auth-host=scram-sha-256 >"$data.initdb.log" 2>&1 \
            || { echo "initdb failed:" >&2; cat "$data.initdb.log" >&2; return 1; }
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        printf "port = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n" \
            "$port" "$data" | as_owner tee -a "$data/postgresql.conf" >/dev/null
    fi
    port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$data/postgresql.conf" | tail -n 1)
    if ! as_owner "$bindir/pg_ctl" status -D "$data" >/dev/null 2>&1; then
        as_owner "$bindir/pg_ctl" start -D "$data" -l "$data/server.log" -w -t 60 >/dev/null \
            || { echo "PostgreSQL did not start:" >&2; tail -n 20 "$data/server.log" >&2; return 1; }
    fi
    # One database per checkout: two checkouts on one machine share the cluster, not the
    # database (pytest-django's test database is named after it).
    database="beammcp_$(pwd | sha256sum | cut -c 1-10)"
    as_owner "$bindir/psql" -h "$data" -p "$port" -U postgres -d postgres -qAtX \
        -v ON_ERROR_STOP=1 -v database="$database" >/dev/null <<'SQL' \
        || { echo "could not create the test role and database" >&2; return 1; }
SELECT 'CREATE ROLE beammcp LOGIN CREATEDB PASSWORD ''beammcp'''
    WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'beammcp') \gexec
SELECT format('CREATE DATABASE %I OWNER beammcp', :'database')
    WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'database') \gexec
SQL
    export BEAMMCP_TEST_POSTGRES_URL="postgres://beammcp:beammcp@127.0.0.1:$port/$database"
    echo "== PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') at 127.0.0.1:$port ($data)"
}

# The ORM-writing tests (marker `orm`) once more, on PostgreSQL: DATABASE_URL is what the
# sample settings read, so the test process and every server process it starts use it.
run_orm_tests_on_postgres() {
    local status
    echo "== pytest -m orm, on PostgreSQL"
    set +e
    DATABASE_URL="$BEAMMCP_TEST_POSTGRES_URL" .venv/bin/python -m pytest -m orm "$@"
    status=$?
    set -e
    # With no arguments the marker must select tests; with a -k of the caller's it may not.
    if [ "$status" -eq 5 ] && [ "$#" -gt 0 ]; then status=0; fi
    return "$status"
}

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
