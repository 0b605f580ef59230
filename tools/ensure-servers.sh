#!/usr/bin/env bash
# Make sure what the functional tests use is there: the MariaDB,
# PostgreSQL and RabbitMQ servers on 127.0.0.1, each started with its
# init script when its port does not answer (their init scripts' status
# is not to be trusted here: a port that answers is), and the packages
# some tests run from (sudo, haproxy, galera-4, rsync). Run by
# tools/run-tests.sh and .ci/run, so that a fresh machine runs the whole
# suite and skips nothing.
#
# Installing a package needs root and apt-get; starting a server needs its
# init script. Without them the script says what is missing and goes
# on: the tests that need it skip (or fail, with CYBORG_TEST_NO_SKIP).
# CYBORG_ENSURE_SERVERS_STRICT=1 (as in CI) makes a server that does
# not answer an error.
set -euo pipefail

strict=${CYBORG_ENSURE_SERVERS_STRICT:-}

answers() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

for server in mariadb:3306 postgresql:5432 rabbitmq-server:5672; do
    name=${server%:*}
    port=${server#*:}
    answers "$port" && continue
    echo "== starting $name (nothing answers on port $port)"
    service "$name" start >/dev/null 2>&1 || true
    for _ in $(seq 60); do
        answers "$port" && break
        sleep 1
    done
    if ! answers "$port"; then
        echo "$name does not answer on port $port" >&2
        if [ -n "$strict" ]; then
            exit 1
        fi
    fi
done

# The packages the tests run from: sudo (the sudoers test), and Galera,
# rsync (its state transfers) and HAProxy (the topology test).
missing=()
for need in sudo:sudo haproxy:haproxy rsync:rsync \
        /usr/lib/galera/libgalera_smm.so:galera-4; do
    path=${need%:*}
    if ! command -v "$path" >/dev/null && [ ! -e "$path" ]; then
        missing+=("${need#*:}")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "== installing ${missing[*]}"
        apt-get update -q >/dev/null &&
            apt-get install -y -q "${missing[@]}" >/dev/null
    else
        echo "${missing[*]} missing and cannot be installed here (needs" \
            "root and apt-get): the tests that need them will skip" >&2
        if [ -n "$strict" ]; then
            exit 1
        fi
    fi
fi
