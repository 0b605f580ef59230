# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Entry points of the ``cyborg`` namespace for oslo-config-generator."""

from oslo_config import cfg
import oslo_messaging

import cyborg.conf
from cyborg.conf import agent
from cyborg.conf import api
from cyborg.conf import audit
from cyborg.conf import conductor
from cyborg.conf import database
from cyborg.conf import default
from cyborg.conf import fpga
from cyborg.conf import glance
from cyborg.conf import gpu_devices
from cyborg.conf import metrics
from cyborg.conf import nic
from cyborg.conf import nic_devices
from cyborg.conf import nova
from cyborg.conf import pci
from cyborg.conf import placement
from cyborg.conf import service_user
from cyborg.conf import sys_admin
from cyborg.conf import tls
from cyborg.conf import upgrade_levels

# The exchange the RPC topics of every Cyborg service live in.
CONTROL_EXCHANGE = 'cyborg'

# Every group module; one added here must also be registered in
# cyborg/conf/__init__.py (the unit tests check both).
GROUP_MODULES = (
    default,
    agent,
    api,
    audit,
    conductor,
    database,
    fpga,
    glance,
    gpu_devices,
    metrics,
    nic,
    nic_devices,
    nova,
    pci,
    placement,
    service_user,
    sys_admin,
    tls,
    upgrade_levels,
)


def _group_name(group):
    return getattr(group, 'name', group) or 'DEFAULT'


def list_opts():
    """Return [(group, [opts])] for every group, one entry per group.

    [DEFAULT] comes first, then the other groups by name. A group is given
    as its ``OptGroup`` when a module defines one, so that the sample shows
    the group's help text.
    """
    groups = {}
    for module in GROUP_MODULES:
        listing = module.list_opts()
        if isinstance(listing, dict):
            listing = listing.items()
        for group, opts in listing:
            name = _group_name(group)
            entry = groups.setdefault(name, [name, [], set()])
            if isinstance(group, cfg.OptGroup):
                entry[0] = group
            for opt in opts:
                if opt.dest not in entry[2]:
                    entry[2].add(opt.dest)
                    entry[1].append(opt)
    names = sorted(groups, key=lambda name: (name != 'DEFAULT', name))
    return [(groups[name][0], groups[name][1]) for name in names]


def warn_deprecated(conf):
    """Log a warning for each option set that is deprecated for removal.

    oslo.config warns when such an option is read; most of them (see
    :mod:`cyborg.conf.ignored`) are never read otherwise.
    """
    for group, group_opts in list_opts():
        name = _group_name(group)
        values = conf if name == 'DEFAULT' else conf[name]
        for opt in group_opts:
            if opt.deprecated_for_removal:
                values[opt.dest]  # oslo.config warns as it reads a set one


def set_defaults(conf=None):
    """Set Cyborg's defaults for options that libraries define.

    Called by oslo-config-generator before it lists options; services call
    it before they parse their configuration.
    """
    if conf is None:
        conf = cyborg.conf.CONF
    oslo_messaging.set_transport_defaults(control_exchange=CONTROL_EXCHANGE)
    database.register_opts(conf)
