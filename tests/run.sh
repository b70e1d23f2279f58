#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it on every CI leg.
#   bash tests/run.sh                          # the whole suite on both legs (what .ci/run runs)
#   bash tests/run.sh -k stdio                 # extra arguments go to pytest, on each leg
#   bash tests/run.sh tests/stdio              # one folder, on each leg
#   LEGS=py311-django52 bash tests/run.sh -k stdio   # only the legs named
#   PYTEST_WORKERS=1 bash tests/run.sh         # no parallel workers (pytest-xdist off)
#
# Cost (2-core machine, see the closing table each run prints): about 15 minutes idle, about
# 25 on a machine 1.6x slower or busier. The first run as root installs Debian's packages
# (redis-server, nginx, chromium and chromium-driver, graphviz, PostgreSQL), a second Python
# (Debian's python3.13 where pyenv has none), a virtualenv per leg from PyPI, and Node 22 with
# the official conformance suite and the MCP Inspector from npm (conformance/install.sh, into
# conformance/.tools). Without root the tests that need a missing package are skipped (in CI
# they fail).
#
# A leg is one interpreter and one Django release in a virtualenv of its own (the `leg` lines
# below; tests/test_packaging.py reads them: the classifiers in setup.cfg claim exactly the
# Python and Django versions they name):
#   py313-django61   Python 3.13, Django 6.1, in .venv-py313    (the full leg)
#   py311-django52   Python 3.11, Django 5.2 LTS, in .venv      (the README's venv)
# A leg's Django is its pin in requirements/base.txt (the pin follows the interpreter's
# version); a leg whose Django differs from that pin installs its own over it, and says so.
#
# The first leg that runs is the full leg: every test. Each later leg runs the tests that can
# fail on one interpreter or Django release and not the other, which is all of them but those
# marked `one_leg` (pyproject.toml's markers), whose outcome does not depend on the leg:
#   - real clients and peers: tests/interop (the official SDK, the Inspector CLI; not
#     test_toolkit_docs.py, which checks settings), tests/conformance (the official suite),
#     the browser tests (tests/admin/test_admin_browser.py, tests/http/test_mcphttp_cors.py's
#     two pages), the nginx deployment (tests/deployment/test_nginx_deployment.py);
#   - the load test (tests/threat/test_load.py);
#   - the README's first command (tests/test_readme_first_command.py) and the quickstart
#     (tests/quickstart), each a fresh venv on the `python3` a fresh machine's PATH gives,
#     whatever the leg;
#   - what reads only the repository: ruff, the docs' figures and citations
#     (tests/test_docs_figures.py, tests/threat/test_threat_model_page.py).
# Everything version-gated stays on every leg: the Tasks framework (django.tasks on Django
# 6.0+, the django-tasks backport and its RQ backend on 5.2), the system checks, the ORM on
# SQLite and on PostgreSQL, the packaging. The property-based tests run on every leg, the
# later legs with Hypothesis's smaller profile (tests/conftest.py).
#
# First, side by side: Debian's packages, each leg's venv, the Node tools; then PostgreSQL.
# Then each leg runs `manage.py check` and pytest in PYTEST_WORKERS processes (pytest-xdist,
# default 4: most of a test's time is a server process starting or a client waiting; a
# module's tests stay on one worker, tests/conftest.py); the full leg then runs the tests
# marked `alone` (they load the whole machine, or time what other workers would slow; each is
# `one_leg` too) one at a time; then the ORM tests (marker `orm`) again on PostgreSQL. A pass
# fails on any process its tests left running. The run fails if any leg fails (every leg runs
# anyway), and ends with a table of every step's wall time; pytest lists its 30 slowest tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bytecode cached as Python does by default (some machines turn it off): otherwise every pytest
# worker rewrites and compiles every test module again, 10 s instead of 5 s a collection.
unset PYTHONDONTWRITEBYTECODE

STEPS="$(mktemp)"
RUN_STARTED=$EPOCHREALTIME
trap 'rm -f "$STEPS"' EXIT

# step NAME COMMAND...: runs the command in a subshell with `set -e`, records its wall time and
# exit status for the table, returns that status. `set -e` holds in the command only when the
# step itself is a statement of its own (bash ignores it inside `if`, `&&` and `||`): a command
# that needs it, as prepare_venv does, is never stepped inside those.
step() {
    local name="$1" started=$EPOCHREALTIME status errexit=""
    shift
    if [[ $- == *e* ]]; then errexit=yes; fi
    set +e
    (
        set -e
        "$@"
    )
    status=$?
    if [ -n "$errexit" ]; then set -e; fi
    record "$name" "$started" "$status"
    return "$status"
}

# record NAME STARTED STATUS: one line of the table.
record() {
    printf '%s\t%s\t%s\n' "$1" "$(seconds_since "$2")" "$3" >>"$STEPS"
}

seconds_since() {
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

print_steps() {
    echo "== steps, wall time (tests/run.sh)"
    awk -F '\t' '{ printf "  %-50s %8.1f s  exit %s\n", $1, $2, $3 }' "$STEPS"
    printf '  %-50s %8.1f s\n' "whole run" "$(seconds_since "$RUN_STARTED")"
}

# pip, without this machine's notes on absent local index locations, keeping pip's status.
pip_quietly() {
    set +e
    "$@" 2>&1 | grep -v "^WARNING: Location"
    local status=${PIPESTATUS[0]}
    set -e
    return "$status"
}

# The interpreter for Python X.Y: pyenv's (on every machine of this kind pyenv holds 3.11 and
# 3.13), else one on PATH, else, as root, Debian's package (Debian 13 ships python3.13; Debian
# 12 ships only 3.11). Prints its path.
find_python() {
    local version="$1" candidate
    local pyenv_root="${PYENV_ROOT:-${HOME:-/root}/.pyenv}"
    local -a found=()
    shopt -s nullglob
    found=("$pyenv_root"/versions/"$version".*/bin/python"$version")
    shopt -u nullglob
    if [ "${#found[@]}" -gt 0 ]; then
        printf '%s\n' "${found[@]}" | sort -V | tail -n 1
        return 0
    fi
    if candidate="$(command -v "python$version")"; then
        echo "$candidate"
        return 0
    fi
    if [ "$(id -u)" = "0" ]; then
        echo "== installing Debian's python$version" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            "python$version" "python$version-venv") >/dev/null 2>&1 || true
        if candidate="$(command -v "python$version")"; then
            echo "$candidate"
            return 0
        fi
    fi
    echo "tests/run.sh: no Python $version (not under $pyenv_root, not on PATH, not in" \
        "this system's packages); install it, e.g. pyenv install $version" >&2
    return 1
}

# A virtualenv on that interpreter with requirements/test.txt, and Django at the leg's version.
prepare_venv() {
    local venv="$1" python="$2" django="$3" want have
    want="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    if [ -x "$venv/bin/python" ]; then
        have="$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        if [ "$have" != "$want" ]; then
            echo "tests/run.sh: $venv runs Python $have, this leg needs $want;" \
                "remove $venv and run again" >&2
            return 1
        fi
    else
        "$python" -m venv "$venv"
    fi
    pip_quietly "$venv/bin/python" -m pip install --quiet --upgrade pip
    pip_quietly "$venv/bin/python" -m pip install --quiet -r requirements/test.txt
    have="$("$venv/bin/python" -c 'import django; print(django.__version__)')"
    if [ "$have" != "$django" ]; then
        echo "== $venv: Django $django in place of requirements/base.txt's $have"
        pip_quietly "$venv/bin/python" -m pip install --quiet "Django==$django"
    fi
}

# pytest in the leg's venv: PYTEST_WORKERS processes unless told `serial`. Exit 5 (nothing
# selected) is a failure for the leg's main pass with no arguments of the caller's, and a pass
# for the passes that select a part of it (`alone`, `orm`), which may be empty. The pass's
# temporary files go to a folder of its own (TMPDIR), so that what it leaves running is known.
run_pytest() {
    local venv="$1" mode="$2" status
    shift 2
    local -a parallel=()
    if [ "$mode" != "serial" ] && [ "${PYTEST_WORKERS:-4}" -gt 1 ]; then
        parallel=(-n "${PYTEST_WORKERS:-4}")
    fi
    local scratch
    scratch="$(mktemp -d)"
    set +e
    TMPDIR="$scratch" "$venv/bin/python" -m pytest "${parallel[@]}" --durations=30 "$@"
    status=$?
    set -e
    if [ "$status" -eq 5 ] && [ "$mode" != "main" ]; then status=0; fi
    if [ "$status" -eq 5 ]; then
        echo "pytest collected no tests; an empty run is not a pass" >&2
    fi
    stop_strays "$scratch" || status=1
    rm -rf "$scratch"
    return "$status"
}

# The processes a pytest pass left running once it ended (a server, a worker, a browser that
# a test or a script failed to stop): those whose environment holds the pass's TMPDIR, which
# every process it started inherits. They are named and killed, and the pass fails.
stop_strays() {
    local scratch="$1" environ pid pids=""
    for environ in $(grep -lzxF -- "TMPDIR=$scratch" /proc/[0-9]*/environ 2>/dev/null); do
        pid="${environ#/proc/}"
        pid="${pid%/environ}"
        [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] || pids="$pids $pid"
    done
    [ -z "$pids" ] && return 0
    echo "tests/run.sh: the tests left these processes running:" >&2
    ps -o pid=,args= -p "${pids# }" >&2 || true
    kill -KILL $pids 2>/dev/null || true
    return 1
}

# leg NAME PYTHON_VERSION DJANGO_VERSION VENV: declares a leg.
declare -A LEG_PYTHON LEG_DJANGO LEG_VENV
leg() {
    LEG_PYTHON[$1]="$2"
    LEG_DJANGO[$1]="$3"
    LEG_VENV[$1]="$4"
}
leg py313-django61 3.13 6.1.3 .venv-py313
leg py311-django52 3.11 5.2.19 .venv

# run_leg NAME [pytest arguments]: the leg's checks and tests, in its venv (prepared).
# BEAMMCP_TEST_LEG says whether it is the full leg or a later one (tests/conftest.py).
run_leg() {
    local name="$1" venv="${LEG_VENV[$1]}" status=0 main_mode=main
    shift
    if [ "$#" -gt 0 ]; then main_mode=part; fi
    echo "== $name ($BEAMMCP_TEST_LEG leg): $("$venv/bin/python" --version)," \
        "Django ${LEG_DJANGO[$name]}, in $venv"
    if [ "$BEAMMCP_TEST_LEG" = "full" ]; then
        echo "== $name: ruff"
        step "$name: ruff" bash -c "'$venv/bin/ruff' check . && '$venv/bin/ruff' format --check ."
    fi
    echo "== $name: django system checks"
    step "$name: manage.py check" "$venv/bin/python" manage.py check

    echo "== $name: pytest"
    step "$name: pytest" run_pytest "$venv" "$main_mode" -m "not alone" "$@" || status=$?
    if [ "$BEAMMCP_TEST_LEG" = "full" ]; then
        echo "== $name: pytest, the tests that run alone"
        step "$name: pytest, alone" run_pytest "$venv" serial -m alone "$@" || status=$?
    fi
    if [ "$postgres" = "true" ]; then
        echo "== $name: pytest -m orm, on PostgreSQL"
        DATABASE_URL="$BEAMMCP_TEST_POSTGRES_URL" step "$name: pytest -m orm, PostgreSQL" \
            run_pytest "$venv" part -m "orm and not alone" "$@" || status=$?
    fi
    return "$status"
}

# background NAME COMMAND...: a step started in the background, its output kept for when it
# ends (wait_background).
BACKGROUND=()
background() {
    local name="$1" log
    shift
    log="$(mktemp)"
    step "$name" "$@" >"$log" 2>&1 &
    BACKGROUND+=("$!|$name|$log")
}

# wait_background: waits for every background step, prints its output; fails if one failed.
wait_background() {
    local entry pid name log status failed=0
    for entry in "${BACKGROUND[@]}"; do
        IFS="|" read -r pid name log <<<"$entry"
        status=0
        wait "$pid" || status=$?
        echo "== $name: exit $status"
        cat "$log"
        rm -f "$log"
        if [ "$status" -ne 0 ]; then failed=1; fi
    done
    BACKGROUND=()
    return "$failed"
}

# Debian packages the suite uses (root only): redis-server for the cross-worker subscriptions
# test, graphviz's `dot` for the connectome drawings, chromium and chromium-driver for the
# admin browser test, nginx for the deployment page's test. Without root, the tests that need a
# missing one are skipped.
install_debian_packages() {
    local packages=""
    command -v redis-server >/dev/null 2>&1 || packages="$packages redis-server"
    command -v dot >/dev/null 2>&1 || packages="$packages graphviz"
    command -v chromium >/dev/null 2>&1 || packages="$packages chromium"
    command -v chromedriver >/dev/null 2>&1 || packages="$packages chromium-driver"
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || packages="$packages nginx"
    if [ -n "$packages" ] && [ "$(id -u)" = "0" ]; then
        echo "== installing$packages"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages) \
            >/dev/null 2>&1 \
            || echo "could not install$packages; the tests that need them will be skipped" >&2
    fi
}

# PostgreSQL for the ORM tests' second run on each leg: start_postgres.
. tests/postgres.sh

LEGS="${LEGS:-py313-django61 py311-django52}"
for name in $LEGS; do
    if [ -z "${LEG_VENV[$name]:-}" ]; then
        echo "tests/run.sh: no leg named $name (the legs: ${!LEG_VENV[*]})" >&2
        exit 2
    fi
done

# Set-up, side by side: the interpreters first (finding one may install Debian's), then
# Debian's packages, each leg's venv and the Node tools at once.
declare -A LEG_INTERPRETER
for name in $LEGS; do
    LEG_INTERPRETER[$name]="$(find_python "${LEG_PYTHON[$name]}")"
done
background "debian packages" install_debian_packages
for name in $LEGS; do
    background "$name: venv" prepare_venv "${LEG_VENV[$name]}" "${LEG_INTERPRETER[$name]}" \
        "${LEG_DJANGO[$name]}"
done
background "node tools" bash conformance/install.sh
set +e
wait_background
setup_status=$?
set -e

# In CI a PostgreSQL that cannot be started fails the run; elsewhere its tests are skipped.
postgres=false
started=$EPOCHREALTIME
if start_postgres; then
    record "postgresql" "$started" 0
    postgres=true
elif [ "${CI:-}" = "true" ]; then
    echo "CI runs the ORM tests on PostgreSQL, and it could not be started" >&2
    setup_status=1
else
    echo "PostgreSQL unavailable: its tests are skipped, the ORM tests run on SQLite only" >&2
fi
export postgres
if [ "$setup_status" -ne 0 ]; then
    print_steps
    echo "tests/run.sh: the set-up failed (above)" >&2
    exit 1
fi

# Each leg in a subshell with its own `set -e`, so a failing step ends that leg, not the run.
failed=""
BEAMMCP_TEST_LEG=full
for name in $LEGS; do
    export BEAMMCP_TEST_LEG
    started=$EPOCHREALTIME
    set +e
    (
        set -e
        run_leg "$name" "$@"
    )
    status=$?
    set -e
    record "leg $name, in all" "$started" "$status"
    echo "== leg $name ($BEAMMCP_TEST_LEG): exit $status, $(seconds_since "$started") s"
    [ "$status" -eq 0 ] || failed="$failed $name"
    BEAMMCP_TEST_LEG=versions
done
print_steps
if [ -n "$failed" ]; then
    echo "tests/run.sh: failed legs:$failed" >&2
    exit 1
fi
