#!/usr/bin/env bash
# Install the real clients and services that the functional tests drive,
# and the existing service whose database the upgrade tests convert, into
# their own virtualenvs, because their requirements conflict with each
# other's and with Cyborg's:
#
#   .venvs/osc-10.3.1  python-openstackclient 10.3.1 + python-cyborgclient 3.0.0
#   .venvs/osc-10.5.0  python-openstackclient 10.5.0 (in-tree accelerator
#                      commands)
#   .venvs/nova-34.0.0 nova 34.0.0: its nova.accelerator.cyborg client, and
#                      its services that boot servers with accelerators
#                      (cyborg_quickstart.nova; about two minutes to
#                      install), with what the quickstart's files run there
#                      import (tools/quickstart/cyborg_quickstart/nova_venv/
#                      requirements.txt)
#   .venvs/openstack-cyborg-17.0.0
#                      openstack-cyborg 17.0.0 + PyMySQL, its dependencies
#                      pinned by tools/openstack-cyborg-17.0.0-constraints.txt
#   .venvs/keystone    Keystone, served by cheroot (cyborg_quickstart.keystone)
#   .venvs/glance      Glance on SQLite with its file store, served by
#                      cheroot (cyborg_quickstart.glance)
#   .venvs/tempest     tempest + cyborg-tempest-plugin
#   .venvs/neutron-29.0.0
#                      neutron 29.0.0 (ML2, no agents, on MariaDB), served
#                      by cheroot (cyborg_quickstart.neutron), with the
#                      quickstart's mechanism driver's requirements
#                      (tools/quickstart/cyborg_quickstart/neutron_venv/
#                      requirements.txt: pyroute2, which its schema
#                      migrations import, is not among Neutron's)
#
# The virtualenvs are installed side by side, each by a pip of its own, and
# each one's output is printed once it is done; the script fails if any
# install does. Re-running it is cheap: an existing virtualenv with the
# right packages is left as it is. Naming virtualenvs installs only those:
# tools/setup-client-venvs.sh keystone osc-10.5.0 (tools/quickstart.sh
# does). Runs at once install each virtualenv once: each waits for the
# other's install of it (flock on VENV.lock), then finds it ready, so
# .ci/run installs them while the quickstart starts. Environment: PYTHON
# (python3), CYBORG_CLIENT_VENVS (default .venvs).
set -euo pipefail

cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
root=${CYBORG_CLIENT_VENVS:-.venvs}
wanted=" $* "

# install_client VENV COMMAND PACKAGE... [PIP OPTIONS]: VENV is ready once
# it has COMMAND and the first PACKAGE. It installs in the background, its
# output in a file of its own until the end of this script prints it.
pids=()
logs=()
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
install_client() {
    local venv=$1
    if [ "$wanted" != "  " ] && [[ $wanted != *" ${venv##*/} "* ]]; then
        return
    fi
    mkdir -p "$root"
    logs+=("$logdir/${venv##*/}.log")
    install_one "$@" >"${logs[-1]}" 2>&1 &
    pids+=($!)
}

install_one() {
    local venv=$1 command=$2 lock
    shift 2
    # Held until this background job ends.
    exec {lock}>"$venv.lock"
    flock "$lock"
    # The list of packages is written last, once they are all installed.
    if [ -x "$venv/bin/$command" ] \
        && "$venv/bin/python" -m pip show -q "${1%%==*}" >/dev/null 2>&1 \
        && [ "$(cat "$venv/.cyborg-clients" 2>/dev/null)" = "$*" ]; then
        echo "== $venv is ready ($*)"
        return
    fi
    echo "== installing $* into $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q -U pip
    "$venv/bin/python" -m pip install -q "$@" 2>&1 \
        | { grep -v "^WARNING: Location" || true; }
    echo "$*" > "$venv/.cyborg-clients"
}

# quickstart_requirements DIR: the requirements of the quickstart's files
# that run in another service's virtualenv, one a line.
quickstart_requirements() {
    grep -v '^[[:space:]]*\(#\|$\)' \
        "tools/quickstart/cyborg_quickstart/$1/requirements.txt"
}
mapfile -t nova_requirements < <(quickstart_requirements nova_venv)
mapfile -t neutron_requirements < <(quickstart_requirements neutron_venv)

install_client "$root/osc-10.3.1" openstack python-openstackclient==10.3.1 \
    python-cyborgclient==3.0.0
install_client "$root/osc-10.5.0" openstack python-openstackclient==10.5.0
install_client "$root/nova-34.0.0" python "${nova_requirements[@]}"
install_client "$root/openstack-cyborg-17.0.0" cyborg-dbsync \
    openstack-cyborg==17.0.0 PyMySQL \
    -c tools/openstack-cyborg-17.0.0-constraints.txt
install_client "$root/keystone" keystone-manage keystone==30.0.0 \
    cheroot==11.1.2
install_client "$root/glance" glance-manage glance==33.0.0 cheroot \
    -c tools/upper-constraints.txt
install_client "$root/tempest" tempest tempest==47.0.0 \
    cyborg-tempest-plugin==2.8.0
install_client "$root/neutron-29.0.0" neutron-db-manage \
    "${neutron_requirements[@]}" -c tools/upper-constraints.txt

# Wait for every install; print what each said, in the order started.
failed=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "${logs[$i]}"
done
exit $failed
