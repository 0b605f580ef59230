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
"""Reports under another name of a host's compute node, refused.

A device is not recorded under two names of one compute node: the name
that recorded the compute node, or the name 17.0.0 recorded the device
under, whose provider hangs under it (``cyborg/db/host_names.py``).
"""

import fixtures
from oslo_utils import uuidutils

from cyborg.common import pci_address
from cyborg.conductor import inventory
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg import exception
from cyborg.objects import driver_report
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests.unit.conductor import test_inventory


class _Placement:
    """A Placement client that knows one compute node's tree."""

    def __init__(self, tree):
        self.tree = tree
        self.asked = []

    def providers_in_tree(self, uuid):
        self.asked.append(uuid)
        return [{'uuid': rp_uuid} for rp_uuid in self.tree]


class TestOneRowPerDevice(base.TestCase):
    """A device is not recorded under two names of its compute node."""

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger())
        self.compute = uuidutils.generate_uuid()
        self.placement = _Placement([self.compute])
        host_db.set_compute_rp(self.admin_context, test_inventory.HOST,
                               self.compute)

    def apply(self, hostname, *devices):
        return inventory.apply_report(
            self.admin_context,
            driver_report.HostReport(hostname=hostname,
                                     devices=list(devices)),
            test_inventory.OWNER, self.placement)

    def devices(self):
        return sorted((d.hostname, d.uuid) for d in db_api.get_all(
            self.admin_context, 'device'))

    def test_name_that_recorded_the_compute_node(self):
        # The agent of the host reported under another name of the same
        # compute node before.
        host_db.set_compute_rp(self.admin_context, 'old', self.compute)
        self.apply('old', test_inventory.fpga('0000:5e:00.0'))
        before = self.devices()

        e = self.assertRaises(exception.HostNameConflict, self.apply,
                              test_inventory.HOST,
                              test_inventory.fpga('0000:5e:00.0'),
                              test_inventory.fpga('0000:86:00.0'))
        self.assertEqual(
            'Host host1 reports device 0000:5e:00.0, which is recorded '
            'under host name old for the same compute node; the report is '
            'refused so that the device is not recorded twice. Set [agent] '
            'resource_provider_name to old on that host and restart its '
            'cyborg-agent.', str(e))
        self.assertIn('Report of host host1 refused: Host host1 reports '
                      'device 0000:5e:00.0', self.log.output)
        # Nothing written, the other device neither; every name has its
        # compute node recorded, so Placement was not needed.
        self.assertEqual(before, self.devices())
        self.assertEqual([], self.placement.asked)

    def _legacy(self, hostname, address):
        """A device 17.0.0 recorded; its deployable's provider uuid."""
        _device, deployable, _handles = db_utils.create_device_tree(
            self.admin_context, hostname=hostname, pci_address=address)
        rp_uuid = uuidutils.generate_uuid()
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'rp_uuid': rp_uuid})
        return rp_uuid

    def test_name_of_a_provider_of_the_compute_node(self):
        # Rows that 17.0.0 recorded under another name: no compute node
        # recorded, but a deployable whose provider hangs under it.
        self.placement.tree.append(self._legacy('legacy.example.org',
                                                '0000:5e:00.0'))
        before = self.devices()
        e = self.assertRaises(exception.HostNameConflict, self.apply,
                              test_inventory.HOST,
                              test_inventory.fpga('0000:5e:00.0'))
        self.assertIn('under host name legacy.example.org', str(e))
        self.assertEqual(before, self.devices())
        self.assertEqual([self.compute], self.placement.asked)

    def test_same_address_on_another_compute_node(self):
        # Hosts of one model have their cards at the same addresses.
        self._legacy('legacy', '0000:5e:00.0')
        host_db.set_compute_rp(self.admin_context, 'host2',
                               uuidutils.generate_uuid())
        self.apply('host2', test_inventory.fpga('0000:5e:00.0'))
        self.apply(test_inventory.HOST, test_inventory.fpga('0000:5e:00.0'))
        self.assertEqual([test_inventory.HOST, 'host2', 'legacy'],
                         sorted(h for h, _uuid in self.devices()))

    def test_placement_asked_only_when_needed(self):
        # While a name of 17.0.0 has no compute node recorded, for a
        # report that adds a device.
        self._legacy('legacy', '0000:86:00.0')
        self.apply(test_inventory.HOST, test_inventory.fpga('0000:5e:00.0'))
        self.apply(test_inventory.HOST, test_inventory.fpga(
            '0000:5e:00.0', traits=('CUSTOM_OTHER',)))
        self.apply(test_inventory.HOST)
        self.assertEqual([self.compute], self.placement.asked)
        # Nor for a host whose compute node is not known.
        self.apply('host2', test_inventory.fpga('0000:5e:00.0'))
        self.assertEqual([self.compute], self.placement.asked)
        # Once its agent reported under it, never.
        host_db.set_compute_rp(self.admin_context, 'legacy',
                               uuidutils.generate_uuid())
        host_db.set_compute_rp(self.admin_context, 'host2',
                               uuidutils.generate_uuid())
        self.apply(test_inventory.HOST, test_inventory.fpga('0000:af:00.0'))
        self.assertEqual([self.compute], self.placement.asked)
        self.assertIn('0000:af:00.0', {
            pci_address.join(c.cpid_info) for c in db_api.get_all(
                self.admin_context, 'controlpath_id')})
