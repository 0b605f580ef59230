#!/usr/bin/env bash
# Set up a virtualenv and run every check a change must pass: the style and
# layer checks (pep8), the security lint (bandit), a plain install of the
# wheel (tools/check-wheel.sh), then the unit, functional and load tests
# with pytest. The servers the functional tests use (MariaDB, PostgreSQL,
# RabbitMQ) and sudo are started or installed first where they are missing
# (tools/ensure-servers.sh, as .ci/run does).
#
#   tools/run-tests.sh              everything
#   tools/run-tests.sh -k profile   extra arguments go to pytest
#
# Everything is installed with openstack/requirements' upper-constraints
# (tools/upper-constraints.txt, or TOX_CONSTRAINTS_FILE as in tox), the
# versions devstack and the distributions install.
#
# Environment: CYBORG_TEST_VENV (default .venvs/test), PYTHON (python3),
# OS_TEST_DBAPI_ADMIN_CONNECTION and CYBORG_TEST_RABBIT_URL to point the
# functional tests at other database and RabbitMQ servers,
# CYBORG_TEST_NO_SKIP=1 to fail every test that would skip (the default
# when CI is set), CYBORG_TEST_WORKERS for the number of pytest processes
# (two more than the CPUs; 0 runs the tests in this one).
set -euo pipefail

cd "$(dirname "$0")/.."
venv=${CYBORG_TEST_VENV:-.venvs/test}
python=${PYTHON:-python3}
constraints=${TOX_CONSTRAINTS_FILE:-tools/upper-constraints.txt}

# A script run in the background from here on, its output in a file.
declare -A pids logs
start() {
    logs[$1]=$(mktemp)
    PYTHON=$python "$1" >"${logs[$1]}" 2>&1 &
    pids[$1]=$!
}

# Its output, once it has ended; the run stops if it failed.
finish() {
    local ok=true
    wait "${pids[$1]}" || ok=false
    cat "${logs[$1]}"
    rm -f "${logs[$1]}"
    if ! $ok; then
        echo "$1 failed (its output is above)" >&2
        exit 1
    fi
}

# The real clients the API tests drive, Nova, and openstack-cyborg 17.0.0
# for the upgrade tests, each in its own virtualenv, installed while this
# one is; and the wheel alone, in a virtualenv of its own from a copy of
# the tree, checked meanwhile too.
start tools/setup-client-venvs.sh
start tools/check-wheel.sh

if [ ! -x "$venv/bin/python" ]; then
    echo "== creating virtualenv $venv"
    "$python" -m venv "$venv"
fi
echo "== installing Cyborg and its test requirements into $venv"
"$venv/bin/python" -m pip install -q -U pip
"$venv/bin/python" -m pip install -q -c "$constraints" -r requirements.txt \
    -r test-requirements.txt
# The quickstart (tools/quickstart), a tool of this repository outside the
# openstack-cyborg wheel, holds the launchers of the other services and the
# Nova simulator that the functional tests use; the two requirements
# files above bring its own.
"$venv/bin/python" -m pip install -q --no-deps -e . -e tools/quickstart
"$venv/bin/python" -m pip check
finish tools/setup-client-venvs.sh

export PATH="$PWD/$venv/bin:$PATH"

echo "== pep8: flake8 (hacking), import-linter, bashate, doc8"
flake8
lint-imports
git ls-files '*.sh' '.ci/run' 'devstack/*' \
    | grep -v '\.\(rst\|md\|txt\|yaml\)$' \
    | xargs -r bashate -v --error E005,E042,E043
doc8 doc/source api-ref/source releasenotes/source README.md

echo "== bandit"
bandit -r cyborg -x cyborg/tests -q

echo "== the wheel alone: pip check, every service module imports"
finish tools/check-wheel.sh

# The MariaDB, PostgreSQL and RabbitMQ servers and sudo, as CI has them:
# started or installed where missing and possible.
if [ -n "${CI:-}" ]; then
    export CYBORG_ENSURE_SERVERS_STRICT=${CYBORG_ENSURE_SERVERS_STRICT:-1}
fi
tools/ensure-servers.sh

# RabbitMQ queues are named after RPC topics whatever the exchange, so two
# test runs on one broker would answer each other's calls: give this run a
# virtual host of its own when rabbitmqctl can make one.
if [ -z "${CYBORG_TEST_RABBIT_URL:-}" ] && command -v rabbitmqctl >/dev/null \
        && vhost="cyborg-test-$$" \
        && rabbitmqctl -q add_vhost "$vhost" >/dev/null 2>&1; then
    rabbitmqctl -q set_permissions -p "$vhost" guest '.*' '.*' '.*' \
        >/dev/null
    trap 'rabbitmqctl -q delete_vhost "$vhost" >/dev/null 2>&1' EXIT
    export CYBORG_TEST_RABBIT_URL="rabbit://guest:guest@127.0.0.1:5672/$vhost"
    echo "== RabbitMQ virtual host $vhost for this run"
fi

# In CI a missing server or client must fail the run, not skip the
# tests that need it (cyborg/tests/conftest.py).
if [ -n "${CI:-}" ]; then
    export CYBORG_TEST_NO_SKIP=${CYBORG_TEST_NO_SKIP:-1}
fi

# In parallel, with pytest-xdist: most tests wait on servers and processes,
# so two workers more than the CPUs; tests that must share a worker carry
# an xdist_group mark (doc/source/contributor/testing.rst).
workers=${CYBORG_TEST_WORKERS:-$(($(nproc) + 2))}
# In CI the slowest tests are listed too, to keep the run short, and the
# summary names each failed test on one line (with CI set, pytest would
# print each whole message there, and the end of a long one would hide the
# names above it).
ci_options=()
if [ -n "${CI:-}" ]; then
    ci_options=(--durations=30 --force-short-summary)
fi
echo "== unit, functional and load tests ($workers workers)"
pytest -p no:cacheprovider -ra -n "$workers" --dist loadgroup \
    "${ci_options[@]}" cyborg/tests "$@"
