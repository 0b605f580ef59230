#!/bin/bash
#
# devstack/upgrade/shutdown.sh
# Grenade runs this to stop the base side's Cyborg services before the
# upgrade. Those services are devstack's systemd units of the same names
# whichever plugin started them.

set -o errexit

source $GRENADE_DIR/grenaderc
source $GRENADE_DIR/functions

# The base devstack's functions, as the base cloud was built with them.
source $BASE_DEVSTACK_DIR/functions
source $BASE_DEVSTACK_DIR/stackrc # needed for status directory
source $BASE_DEVSTACK_DIR/lib/tls
source $BASE_DEVSTACK_DIR/lib/apache

CYBORG_DEVSTACK_DIR=$(cd "$(dirname "$0")/.." && pwd)
source $CYBORG_DEVSTACK_DIR/settings
source $CYBORG_DEVSTACK_DIR/lib/cyborg

set -o xtrace

stop_cyborg

# Sanity check that the services are actually down.
ensure_services_stopped $(cyborg_enabled_services)
