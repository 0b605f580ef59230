#!/usr/bin/env bash
# Build the openstack-cyborg wheel from this tree and install it alone into
# a new virtualenv, as an operator's "pip install openstack-cyborg" would,
# with openstack/requirements' upper-constraints: its requirements must be
# consistent (pip check) and every service module must import. The wheel
# holds the service only: the quickstart and the launchers of the other
# services are tools/quickstart, which this does not install.
# (cyborg/tests/unit/test_packaging.py checks what the wheel holds; this
# install takes about half a minute, too long for a unit test.)
#
# Environment: PYTHON (python3), TOX_CONSTRAINTS_FILE.
set -euo pipefail

cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
constraints=$PWD/${TOX_CONSTRAINTS_FILE:-tools/upper-constraints.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# From a copy of the files git would commit: a build in this tree would
# reuse build/, where modules deleted since may linger. pbr reads the
# version from git, which the copy has not.
mkdir "$work/source"
git ls-files -z --cached --others --exclude-standard \
    | tar --null -T - --ignore-failed-read -cf - 2>/dev/null \
    | tar -xf - -C "$work/source"
version=$(git describe --tags 2>/dev/null \
    || sed -n 's/^version = //p' setup.cfg)
"$python" -m venv "$work/venv"
PBR_VERSION=${version#v} "$work/venv/bin/python" -m pip wheel -q --no-deps \
    -w "$work/dist" "$work/source"
"$work/venv/bin/python" -m pip install -q -c "$constraints" \
    "$work"/dist/*.whl
"$work/venv/bin/python" -m pip check
# Every module but the tests (which need the test requirements), the
# migration scripts (alembic runs them) and cyborg.wsgi.api (it builds the
# application from the configuration as a WSGI server imports it), after
# the choice of threads that every entry point makes first.
cd "$work"
"$work/venv/bin/python" - <<'PYTHON'
import importlib
import pkgutil

import cyborg
from cyborg.common import process

process.use_native_threads()
for info in pkgutil.walk_packages(cyborg.__path__, 'cyborg.'):
    if not info.name.startswith(('cyborg.tests', 'cyborg.db.migrations.',
                                 'cyborg.wsgi.api')):
        importlib.import_module(info.name)
print('the wheel installs alone; its service modules import')
PYTHON
