#!/usr/bin/env bash
# Set up Cyborg on this machine with everything under one state directory.
#
# Today it installs Cyborg into a virtualenv, writes a cyborg.conf and
# builds the database schema on SQLite. Re-running it is safe: it reuses
# the virtualenv and upgrades the schema in place.
#
# Environment: CYBORG_VENV (default .venvs/cyborg), CYBORG_STATE (default
# .state), PYTHON (python3).
set -euo pipefail

cd "$(dirname "$0")/.."
venv=${CYBORG_VENV:-.venvs/cyborg}
state=$(mkdir -p "${CYBORG_STATE:-.state}" && cd "${CYBORG_STATE:-.state}" \
    && pwd)
python=${PYTHON:-python3}
conf=$state/cyborg.conf

if [ ! -x "$venv/bin/python" ]; then
    echo "== creating virtualenv $venv"
    "$python" -m venv "$venv"
fi
echo "== installing Cyborg into $venv"
"$venv/bin/python" -m pip install -q -U pip
"$venv/bin/python" -m pip install -q -r requirements.txt
"$venv/bin/python" -m pip install -q --no-deps -e .

if [ ! -f "$conf" ]; then
    echo "== writing $conf"
    cat > "$conf" <<CONF
[DEFAULT]
state_path = $state
transport_url = fake://

[database]
connection = sqlite:///$state/cyborg.sqlite

[api]
auth_strategy = noauth
CONF
fi

echo "== building the database schema"
"$venv/bin/cyborg-dbsync" --config-file "$conf" upgrade

cat <<DONE

Cyborg is installed in $venv and configured in $conf.
The database is $state/cyborg.sqlite, at schema revision $(
    "$venv/bin/cyborg-dbsync" --config-file "$conf" version).
DONE
