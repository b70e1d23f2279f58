#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it on every CI leg.
#   bash tests/run.sh                          # the whole suite on both legs (what .ci/run runs)
#   bash tests/run.sh -k stdio                 # extra arguments go to pytest, on each leg
#   LEGS=py313-django61 bash tests/run.sh -k stdio   # only the legs named
# A leg is one interpreter and one Django release in a virtualenv of its own; each runs ruff,
# `manage.py check` and pytest, then the ORM-writing tests (marker `orm`) again on a
# PostgreSQL this script starts; the run fails if any leg fails (every leg runs anyway):
#   py311-django52   Python 3.11, Django 5.2 LTS, in .venv (the README's venv)
#   py313-django61   Python 3.13, Django 6.1, in .venv-py313
# A leg's Django is its pin in requirements/base.txt (the pin follows the interpreter's
# version); a leg whose Django differs from that pin installs its own over it, and says so.
# tests/test_packaging.py reads the `leg` lines below: the classifiers in setup.cfg claim
# exactly the Python and Django versions they name.
set -euo pipefail
cd "$(dirname "$0")/.."

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

# One leg: NAME PYTHON_VERSION DJANGO_VERSION VENV [pytest arguments].
leg() {
    local name="$1" python_version="$2" django="$3" venv="$4" python status
    shift 4
    python="$(find_python "$python_version")"
    echo "== $name: $("$python" --version) from $python, Django $django, in $venv"
    prepare_venv "$venv" "$python" "$django"

    echo "== $name: ruff"
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check .

    echo "== $name: django system checks"
    "$venv/bin/python" manage.py check

    echo "== $name: pytest"
    set +e
    "$venv/bin/python" -m pytest "$@"
    status=$?
    set -e
    if [ "$status" -eq 5 ]; then
        echo "pytest collected no tests; an empty run is not a pass" >&2
        return 1
    fi
    if [ "$postgres" = "true" ]; then
        local orm_status=0
        run_orm_tests_on_postgres "$venv" "$@" || orm_status=$?
        if [ "$status" -eq 0 ]; then status=$orm_status; fi
    fi
    return "$status"
}

leg_py311_django52() {
    leg py311-django52 3.11 5.2.19 .venv "$@"
}

leg_py313_django61() {
    leg py313-django61 3.13 6.1.3 .venv-py313 "$@"
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

# PostgreSQL for the ORM tests' second run on each leg: start_postgres,
# run_orm_tests_on_postgres.
. tests/postgres.sh

install_debian_packages

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
export postgres

# Each leg in a subshell with its own `set -e`, so a failing step ends that leg, not the run.
failed=""
for name in ${LEGS:-py311-django52 py313-django61}; do
    started=$SECONDS
    set +e
    (
        set -e
        "leg_${name//-/_}" "$@"
    )
    status=$?
    set -e
    echo "== leg $name: exit $status, $((SECONDS - started)) s"
    [ "$status" -eq 0 ] || failed="$failed $name"
done
if [ -n "$failed" ]; then
    echo "tests/run.sh: failed legs:$failed" >&2
    exit 1
fi
