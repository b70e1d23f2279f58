# Sourced by tests/run.sh, and by hand to get the suite's PostgreSQL for a benchmark or a
# single test file:
#   . tests/postgres.sh && start_postgres && echo "$BEAMMCP_TEST_POSTGRES_URL"
#   DATABASE_URL="$BEAMMCP_TEST_POSTGRES_URL" .venv/bin/python -m pytest -m orm tests/connectome
# tests/run.sh runs the ORM-writing tests (marker `orm`) a second time with DATABASE_URL set
# so: what the sample settings read, so the test process and every server process it starts
# use it.
# Bash; run from the repository root.

# PostgreSQL for the ORM-writing tests' second run (docs/deployment.md, "Database"). Debian's
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
        printf "listen_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n" "$data" \
            | as_owner tee -a "$data/postgresql.conf" >/dev/null
    fi
    port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$data/postgresql.conf" | tail -n 1)
    if ! as_owner "$bindir/pg_ctl" status -D "$data" >/dev/null 2>&1; then
        # Not running: keep its port if it is still free, else take a free one.
        if [ -z "$port" ] || ! python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null; then
            port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
            echo "port = $port" | as_owner tee -a "$data/postgresql.conf" >/dev/null
        fi
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
