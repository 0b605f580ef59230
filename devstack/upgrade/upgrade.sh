#!/bin/bash
#
# devstack/upgrade/upgrade.sh
# Grenade runs this to upgrade Cyborg: it installs this tree over the base
# side's openstack-cyborg, keeps the base side's configuration as it is
# (only what a release's from-<release>/upgrade-cyborg script changes),
# migrates the database and starts the services again.

echo "****************************************************************"
echo "Begin $0"
echo "****************************************************************"

# Clean up any resources that may be in use
cleanup() {
    set +o errexit

    echo "****************************************************************"
    echo "ERROR: Abort $0"
    echo "****************************************************************"

    # Kill ourselves to signal any calling process
    trap 2; kill -2 $$
}

trap cleanup SIGHUP SIGINT SIGTERM

# Keep track of the directory of this script.
RUN_DIR=$(cd "$(dirname "$0")" && pwd)

source $GRENADE_DIR/grenaderc
source $GRENADE_DIR/functions

# Exit on the first error so that errors don't compound.
set -o errexit

source $TARGET_DEVSTACK_DIR/stackrc
source $TARGET_DEVSTACK_DIR/lib/apache
source $TARGET_DEVSTACK_DIR/lib/tls

CYBORG_DEVSTACK_DIR=$(dirname "$RUN_DIR")
source $CYBORG_DEVSTACK_DIR/settings
source $CYBORG_DEVSTACK_DIR/lib/cyborg

set -o xtrace

# Save the base side's configuration for posterity.
[[ -d $SAVE_DIR/etc.cyborg ]] || cp -pr $CYBORG_CONF_DIR $SAVE_DIR/etc.cyborg

# install_cyborg
stack_install_service cyborg

# The upgrade steps a release needs, if any (from-<release>/upgrade-cyborg).
upgrade_project cyborg $RUN_DIR $BASE_DEVSTACK_BRANCH $TARGET_DEVSTACK_BRANCH

# Migrate the database, where the stack created it, then check the
# deployment: cyborg-status exits 1 on warnings, which do not stop an
# upgrade, and 2 or more on errors, which do.
if cyborg_creates_database; then
    $CYBORG_BIN_DIR/cyborg-dbsync --config-file $CYBORG_CONF upgrade || \
        die $LINENO "DB migration error"
    status_rc=0
    $CYBORG_BIN_DIR/cyborg-status --config-file $CYBORG_CONF upgrade check \
        || status_rc=$?
    if [[ $status_rc -gt 1 ]]; then
        die $LINENO "cyborg-status upgrade check failed ($status_rc)"
    fi
fi

start_cyborg

# Don't succeed unless the services come up.
ensure_services_started $(cyborg_enabled_services)

set +o xtrace
echo "****************************************************************"
echo "SUCCESS: End $0"
echo "****************************************************************"
