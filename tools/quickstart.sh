#!/usr/bin/env bash
# Run a whole Cyborg on this machine and boot three simulated instances.
#
#   tools/quickstart.sh [start] [--rabbit URL [--db URL]] [--no-demo]
#                       [--keystone] [--nova [--neutron-db URL]]
#                                           (re)start, then run the demo
#   tools/quickstart.sh demo                run the demo again
#   tools/quickstart.sh status | stop
#
# Every command also takes --state DIR and the port of each service:
# --api-port (6666), --placement-port (8778), --glance-port (9292) and
# --nova-port (8774, where the simulator receives Nova's events, or the
# real Nova's API), --keystone-port (5000) and --neutron-port (9696),
# before or after the command. Later commands reuse the ports "start"
# chose.
#
# "start" installs Cyborg and the quickstart (tools/quickstart, which
# brings openstack-placement) into a virtualenv, then
# starts on 127.0.0.1, with every file under one state directory: the real
# Placement on SQLite (port 8778), the real Glance (.venvs/glance, SQLite
# and its file store) holding the demo FPGA bitstream (9292) and Cyborg's
# API (6666, noauth), conductor and
# agent. By default these three run in one cyborg-all-in-one process on
# the fake:// transport and SQLite; with --rabbit they run as cyborg-api,
# cyborg-conductor and cyborg-agent on RabbitMQ (and --db picks another
# database). The agent serves a simulated host: two Intel FPGAs with VFs,
# an NVIDIA GPU with vGPU types, a QAT card, a card for the generic PCI
# driver and the fake driver's device.
# Then the Nova boot simulator (cyborg-nova-sim, events on port 8774) boots
# an FPGA, a vGPU and a fake-device instance, prints their <hostdev>
# elements and deletes them. The services keep running until "stop".
# Running it again is safe: it stops what runs and starts afresh on the
# same databases, keeping the instances, servers and device profiles that
# users made.
#
# --keystone also runs the real Keystone (.venvs/keystone): Cyborg,
# Placement and Glance check its tokens, <state>/clouds.yaml holds a
# cloud per user and <state>/tempest.conf lets Tempest
# (tools/setup-client-venvs.sh tempest) test the services. --nova (with
# --rabbit) runs the real Nova (.venvs/nova-34.0.0) instead of the
# simulator, behind Keystone with --keystone; its demo boots with
# openstack server create. Nova's Neutron is a stand-in (no networks but
# the shared demo-net, nothing bound) unless --neutron-db names an
# existing MySQL/MariaDB database (mysql+pymysql://root@127.0.0.1/neutron):
# then the real Neutron 29 (.venvs/neutron-29.0.0, ML2, no agents) runs on
# it with the shared flat network demo-net on physnet1, and the simulated
# host has an Intel X710 port whose VFs ports of vnic_type
# accelerator-direct get.
# tools/setup-client-venvs.sh installs what they need, and the CLI.
#
# Environment: CYBORG_VENV (default .venvs/cyborg), CYBORG_STATE (default
# .state), PYTHON (python3).
set -euo pipefail

cd "$(dirname "$0")/.."
venv=${CYBORG_VENV:-.venvs/cyborg}
state=$(mkdir -p "${CYBORG_STATE:-.state}" && cd "${CYBORG_STATE:-.state}" \
    && pwd)
python=${PYTHON:-python3}

command=start
case "${1:-}" in
    start|demo|status|stop)
        command=$1
        shift
        ;;
esac

if [ "$command" = start ]; then
    if [ ! -x "$venv/bin/python" ]; then
        echo "== creating virtualenv $venv"
        "$python" -m venv "$venv"
    fi
    echo "== installing Cyborg and its quickstart into $venv"
    "$venv/bin/python" -m pip install -q -U pip
    # With the versions devstack installs: openstack/requirements'
    # upper-constraints. The quickstart is a tool of this repository, not
    # part of the openstack-cyborg wheel; it brings openstack-placement,
    # which it serves.
    "$venv/bin/python" -m pip install -q \
        -c "${TOX_CONSTRAINTS_FILE:-tools/upper-constraints.txt}" \
        -r requirements.txt -e . -e tools/quickstart
    # Glance, the real services the options ask for, and the openstack
    # CLI.
    clients=(glance)
    for option in "$@"; do
        case "$option" in
            --keystone) clients+=(keystone osc-10.5.0) ;;
            --nova) clients+=(nova-34.0.0 osc-10.5.0) ;;
            --neutron-db) clients+=(neutron-29.0.0) ;;
        esac
    done
    CYBORG_CLIENT_VENVS=.venvs tools/setup-client-venvs.sh "${clients[@]}"
elif [ ! -x "$venv/bin/python" ]; then
    echo "quickstart: run tools/quickstart.sh first" >&2
    exit 1
elif ! "$venv/bin/python" -c 'import cyborg_quickstart' 2>/dev/null; then
    # A virtualenv made when the quickstart was part of Cyborg's package.
    "$venv/bin/python" -m pip install -q \
        -c "${TOX_CONSTRAINTS_FILE:-tools/upper-constraints.txt}" \
        -e tools/quickstart
fi

"$venv/bin/python" -m cyborg_quickstart.quickstart --state "$state" \
    "$command" "$@"

