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
"""The plan of a host's report: what is added, kept, held or vanished.

A host's agent reports its whole inventory (devices, their control path,
deployables, attributes and attach handles); :func:`apply` makes the
host's rows equal to it in one transaction, writing only what differs.
The rules live here, in the conductor, and work on one plain model of
the host's tree (:mod:`cyborg.common.host_inventory`):

* :mod:`.report` turns the agent's wire objects into that model and
  checks it;
* :mod:`.functions` gives each PCI function to one device only;
* :mod:`.matching` (and :mod:`.handles` for attach handles) matches the
  report against the host's rows and says what to write.

The database layer loads the rows and writes the plan as it is
(:func:`cyborg.db.inventory.apply`), in the transaction it plans in.
"""

from oslo_log import log as logging

from cyborg.conductor.inventory_plan import functions
from cyborg.conductor.inventory_plan import matching
from cyborg.conductor.inventory_plan import report as report_plan
from cyborg.objects import host as host_obj

LOG = logging.getLogger(__name__)


def apply(context, hostname, devices, compute_node=None):
    """Make the host's rows equal to its agent's report, in one transaction.

    The report is applied as a keyed diff: a device is known by its
    control path PCI address, a deployable by its name on the host, an
    attribute by its deployable and key, an attach handle by its
    deployable, type and attach info. Rows that did not change are not
    written, so they keep their ids and uuids and their handles keep
    ``in_use``; operators' device ``status`` is never touched. Rows that
    accelerator requests hold are never deleted: a device that is no
    longer reported but holds one is kept with its whole tree and marked
    ``vanished_at`` until a later report finds it free; a handle reported
    for the function of a held handle that is no longer reported (under
    another deployable, or with other attach info) is in use meanwhile.
    A PCI function that two devices report is given to one of them only
    (see :mod:`.functions`).

    A root deployable has no ``parent_id`` nor ``root_id``; a child points
    at its parent and at the root of its tree.

    :param devices: the report: one :class:`~cyborg.common.host_inventory.
        ReportedDevice` per device (see :func:`.report.devices_of`).
    :param compute_node: given when the report may add a device: see
        :func:`cyborg.db.host_names.check`.
    :returns: an :class:`~cyborg.common.host_inventory.InventoryDiff`,
        whose ``devices_added`` and ``devices_removed`` are
        :class:`~cyborg.objects.device.Device` objects.
    :raises InvalidHostReport: the report contradicts itself; nothing
        was written.
    :raises HostNameConflict: see ``compute_node``; nothing was written.
    :raises InventoryChanged: a concurrent bind took a handle being
        removed; nothing was written.
    """
    wanted = report_plan.wanted(hostname, devices)

    def plan(rows):
        result = matching.plan(rows, functions.one_owner(hostname, wanted,
                                                         rows))
        _log(hostname, result)
        return result

    return host_obj.Host.apply_inventory(context, hostname, plan,
                                         set(wanted), compute_node)


def _log(hostname, plan):
    """Tell what the plan keeps for accelerator requests, or finds again."""
    for uuid, address in plan.reappeared:
        LOG.info('Device %(device)s (%(address)s) of host %(host)s is '
                 'reported again',
                 {'device': uuid, 'address': address, 'host': hostname})
    for kept in plan.kept_handles:
        LOG.warning('Host %(host)s no longer reports attach handle '
                    '%(handle)s of %(dep)s, but accelerator request '
                    '%(arq)s holds it; it is kept until released',
                    {'host': hostname, 'handle': kept.uuid,
                     'dep': kept.deployable, 'arq': kept.arq_uuid})
    for device in plan.vanishing:
        LOG.warning('Device %(device)s of host %(host)s is no longer '
                    'reported, but accelerator requests %(arqs)s hold it; '
                    'it is kept until they are released',
                    {'device': device.uuid, 'host': hostname,
                     'arqs': ', '.join(device.arq_uuids)})
