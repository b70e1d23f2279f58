#!/usr/bin/env bash
# Serve the conformance harness on 127.0.0.1:PORT as two workers sharing 2025-11-25 sessions:
#   bash conformance/serve_shared.sh 8765
# In the foreground until stopped (SIGTERM or SIGINT stops all of it): a redis-server of its
# own (the session store, BEAMMCP["SESSION_CACHE"], and the Channels layer), two `serve.sh`
# workers on ports of their own, and nginx on PORT sending each request to the next worker
# (round robin), so a session's requests alternate between the two. Needs Debian's
# redis-server and nginx (tests/run.sh installs both).
set -euo pipefail

PORT="${1:?usage: conformance/serve_shared.sh PORT}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${CONFORMANCE_PYTHON:-$ROOT/.venv/bin/python}"
cd "$ROOT"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
for binary in redis-server "$NGINX"; do
    if ! command -v "$binary" >/dev/null 2>&1; then
        echo "serve_shared.sh: $binary not found (apt-get install -y redis-server nginx)" >&2
        exit 1
    fi
done

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK="$(mktemp -d)"
PIDS=()
stop_all() {
    local pid
    # Redis (started first) last: the workers use it until they end.
    for pid in "${PIDS[@]:1}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]:1}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ "${#PIDS[@]}" -gt 0 ]; then
        kill -TERM "${PIDS[0]}" 2>/dev/null || true
        wait "${PIDS[0]}" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap stop_all EXIT
trap 'exit 0' TERM INT

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
    >"$WORK/redis.log" 2>&1 &
PIDS+=($!)

# Each worker allows the public origin (nginx's port), not its own.
export CONFORMANCE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export CONFORMANCE_PUBLIC_PORT="$PORT"
# One tasks database for both servers, and one task worker (serve.sh's note).
export DJANGO_SETTINGS_MODULE=conformance.settings
export CONFORMANCE_DB="$WORK/harness.sqlite3"
"$PYTHON" -m django migrate --no-input -v 0
"$PYTHON" -m django db_worker --interval 0.1 --no-startup-delay --worker-id "shared-$$" &
PIDS+=($!)
UPSTREAMS=""
WORKER_PORTS=()
for worker in 1 2; do
    WORKER_PORT="$(free_port)"
    WORKER_PORTS+=("$WORKER_PORT")
    # serve.sh's own PID, not a pipeline's last command's: stop_all must stop serve.sh (which
    # stops its server), and a pipe into sed would leave both running.
    bash conformance/serve.sh "$WORKER_PORT" > >(sed -u "s/^/[worker $worker] /") 2>&1 &
    PIDS+=($!)
    UPSTREAMS="$UPSTREAMS        server 127.0.0.1:$WORKER_PORT;
"
done

# nginx only once both workers listen: a worker still starting refuses nginx's connection,
# which then sends everything to the other for its fail_timeout, and the run tests one.
for WORKER_PORT in "${WORKER_PORTS[@]}"; do
    for _ in $(seq 1 600); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$WORKER_PORT") 2>/dev/null; then
            continue 2
        fi
        sleep 0.1
    done
    echo "serve_shared.sh: the worker on port $WORKER_PORT did not listen within 60 s" >&2
    exit 1
done

USER_LINE=""
if [ "$(id -u)" = "0" ]; then
    USER_LINE="user root;"
fi
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<CONF
$USER_LINE
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    upstream workers {
$UPSTREAMS    }
    server {
        listen 127.0.0.1:$PORT;
        location / {
            proxy_pass http://workers;
            proxy_http_version 1.1;
            proxy_set_header Host \$http_host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 600s;
            client_max_body_size 2m;
        }
    }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
PIDS+=($!)
echo "serve_shared.sh: nginx on 127.0.0.1:$PORT, two workers on Redis 127.0.0.1:$REDIS_PORT"
wait
