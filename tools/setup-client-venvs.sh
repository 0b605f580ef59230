#!/usr/bin/env bash
# Install the real clients and services that the functional tests drive
# into their own virtualenvs, because their requirements conflict with each
# other's and with Cyborg's:
#
#   .venvs/osc-10.3.1  python-openstackclient 10.3.1 + python-cyborgclient 3.0.0
#   .venvs/osc-10.5.0  python-openstackclient 10.5.0 (in-tree accelerator
#                      commands)
#   .venvs/keystone    Keystone, served by cheroot (cyborg/demo/keystone.py)
#   .venvs/tempest     tempest + cyborg-tempest-plugin
#
# Re-running it is cheap: an existing virtualenv with the right packages is
# left as it is. Environment: PYTHON (python3), CYBORG_CLIENT_VENVS
# (default .venvs).
set -euo pipefail

cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
root=${CYBORG_CLIENT_VENVS:-.venvs}

install_client() {
    local venv=$1
    shift
    # The list of packages is written last, once they are all installed.
    if [ -x "$venv/bin/python" ] \
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

install_client "$root/osc-10.3.1" python-openstackclient==10.3.1 \
    python-cyborgclient==3.0.0
install_client "$root/osc-10.5.0" python-openstackclient==10.5.0
install_client "$root/keystone" keystone==30.0.0 cheroot==11.1.2
install_client "$root/tempest" tempest==47.0.0 cyborg-tempest-plugin==2.8.0
