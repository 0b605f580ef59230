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
"""Store an agent's host report, under the host's inventory lease.

The lease (a row of the ``hosts`` table) makes sure that of several
conductors only one reconciles a host at a time; the report itself is
applied as a keyed diff as :mod:`cyborg.conductor.inventory_plan` plans it,
then the health it gives by :mod:`cyborg.conductor.health`.

A host is known by the name of its compute node resource provider, which
its agent reports under (:func:`cyborg.agent.service.compute_node_names`).
A report that would record a device a second time, under another name of
the same compute node, is refused.
"""

import contextlib

from oslo_log import log as logging
from oslo_utils import uuidutils

from cyborg.clients import placement
from cyborg.common import pci_address
from cyborg.conductor import health
from cyborg.conductor import inventory_plan
from cyborg.conductor.inventory_plan import report as report_plan
from cyborg.conductor import notifications
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import host as host_obj

CONF = cyborg.conf.CONF
LOG = logging.getLogger(__name__)


@contextlib.contextmanager
def host_lease(context, hostname, owner):
    """Hold the inventory lease of ``hostname`` for a ``with`` block.

    Every workflow that changes a host's inventory, in the database or in
    Placement, runs inside it. The lease lasts ``[conductor]
    host_lease_seconds`` and is released when the block ends, however it
    ends.

    :param owner: who takes it, for people reading the logs (e.g. the
        conductor's host name and process). Each taking is recorded under
        a name of its own, so that two threads of one conductor exclude
        each other too.
    :raises HostLeaseHeld: another conductor, or another thread of this
        one, holds the lease; the caller should give up and let a later
        report or pass retry.
    """
    taker = '%s/%s' % (owner, uuidutils.generate_uuid(dashed=False)[:12])
    if not host_obj.Host.acquire_lease(context, hostname, taker,
                                       CONF.conductor.host_lease_seconds):
        holder = host_obj.Host.get_by_hostname(context, hostname).lease_owner
        # The holder may have released it since: "None" would say nothing.
        raise exception.HostLeaseHeld(
            host=hostname, owner=holder or _('another conductor'))
    try:
        yield
    finally:
        if not host_obj.Host.release_lease(context, hostname, taker):
            LOG.warning('The inventory lease of host %(host)s expired '
                        'while %(owner)s worked on it; another conductor '
                        'may have worked on it at the same time. Raise '
                        '[conductor] host_lease_seconds.',
                        {'host': hostname, 'owner': taker})


def apply_report(context, host_report, owner, client=None):
    """Make the database hold what ``host_report`` says about its host.

    :param host_report: a :class:`cyborg.objects.driver_report.HostReport`.
    :param client: a :class:`cyborg.clients.placement.PlacementClient`
        (by default one made from ``[placement]``), asked only when the
        report adds a device while devices are recorded under names whose
        compute node is not known.
    :returns: a :class:`cyborg.common.host_inventory.InventoryDiff` for the
        Placement sync that follows.
    :raises HostLeaseHeld: another conductor is reconciling the host; the
        agent sends its report again on its next pass.
    :raises InvalidHostReport: the report contradicts itself.
    :raises HostNameConflict: the report adds a device recorded under
        another name of the host's compute node.
    :raises PlacementUnavailable: Placement is needed (see ``client``)
        and cannot be reached; nothing was written.
    """
    hostname = host_report.hostname
    devices = report_plan.devices_of(hostname, host_report)
    with host_lease(context, hostname, owner):
        try:
            diff = inventory_plan.apply(
                context, hostname, devices,
                _compute_node(context, hostname, devices, client))
        except exception.HostNameConflict as e:
            LOG.error('Report of host %(host)s refused: %(error)s',
                      {'host': hostname, 'error': e})
            raise
        health_changed = health.apply_report(context, hostname, host_report)
        host_obj.Host.set_reported(context, hostname)
    LOG.info('Inventory of host %(host)s: %(diff)s',
             {'host': hostname, 'diff': diff})
    notifications.devices_changed(context, hostname, diff.devices_added,
                                  diff.devices_removed)
    health.notify(context, health_changed)
    return diff


def _compute_node(context, hostname, devices, client):
    """The host's compute node, where the report adds a device.

    A device the report adds may be recorded already under another name
    of the same compute node: openstack-cyborg 17.0.0 recorded it under
    the name its agent found in Placement, and the host's agent may find
    another if its configuration changed. A name that an agent reported
    under has its compute node recorded; Placement ties any other name to
    the compute node by the device's providers, so it is asked only while
    such names are left.

    :returns: the uuid of the host's compute node provider and a set of
        the uuids of the providers of its tree (empty when Placement was
        not asked), as :func:`.inventory_plan.apply` takes them; None when
        the report adds no device or the host's compute node is not known.
    """
    # A report that holds no address is refused by inventory_plan.apply.
    reported = {pci_address.address_of(device['cpid_info'])
                for device in devices} - {None}
    if reported <= host_obj.Host.device_addresses(context, hostname):
        return None
    host = host_obj.Host.placed(context, hostname)
    if host is None:
        return None
    tree = set()
    if host_obj.Host.unplaced_hostnames(context):
        client = client or placement.PlacementClient()
        tree = {rp['uuid'] for rp in client.providers_in_tree(
            host.compute_rp_uuid)}
    return host.compute_rp_uuid, tree
