#!/usr/bin/env bash
# Print what cyborg-agent would report of this host, as JSON and as a
# table: each device's vendor and product, PCI address, NUMA node, IOMMU
# group and kernel driver, and each deployable's resource class, traits
# and attach handles (tools/hardware_report.py). It runs the agent's own
# discovery, read-only: no Placement, no RPC, no write, no root where
# sysfs is world-readable.
#
#   tools/hardware-report.sh                       every driver, this host
#   tools/hardware-report.sh --sysfs-root DIR      a simulated sysfs tree
#   tools/hardware-report.sh --drivers enabled --config-file /etc/cyborg/cyborg.conf
#   tools/hardware-report.sh --drivers nvidia_gpu_driver --format json
#
# Cyborg runs from a virtualenv: CYBORG_VENV (default .venvs/cyborg, the
# quickstart's) when it has Cyborg; else one made here, on the
# python3 (PYTHON) packages when they hold Cyborg's requirements (nothing
# is downloaded then), or with the requirements installed under
# tools/upper-constraints.txt.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${CYBORG_VENV:-$repo/.venvs/cyborg}
python=${PYTHON:-python3}

if ! "$venv/bin/python" -c 'import cyborg.drivers.pci' 2>/dev/null; then
    needs='import oslo_config, oslo_versionedobjects, pyudev, stevedore, pbr'
    if "$python" -c "$needs" 2>/dev/null; then
        echo "== making $venv on $python's packages" >&2
        "$python" -m venv --system-site-packages "$venv"
        "$venv/bin/python" -m pip install -q --no-deps \
            --no-build-isolation -e "$repo" >&2
    else
        echo "== installing Cyborg and its requirements into $venv" >&2
        [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
        "$venv/bin/python" -m pip install -q \
            -c "${TOX_CONSTRAINTS_FILE:-$repo/tools/upper-constraints.txt}" \
            -r "$repo/requirements.txt" -e "$repo" >&2
    fi
fi

exec "$venv/bin/python" "$repo/tools/hardware_report.py" "$@"
