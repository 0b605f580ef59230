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
"""The generic PCI driver and Nova's device_spec format."""

import json

from cyborg.drivers import base as drivers_base
from cyborg.drivers import generic_pci
from cyborg import exception
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('add_pci', '0000:81:00.0', dict(vendor='1d0f', product='efa1',
                                         class_code='020000')),
        ('add_pci', '0000:82:00.0', dict(vendor='1d0f', product='efa1',
                                         class_code='020000')),
        ('add_pci', '0000:c1:00.0', dict(vendor='15b3', product='101b',
                                         class_code='120000')),
        ('intel_nic', '0000:18:00.0', dict(ifname='ens785f0', vfs=2)),
        ('intel_nic', '0000:19:00.0', dict(ifname='ens786f0')),
    ]

    def _discover(self, *specs):
        self.conf.config(device_spec=[json.dumps(s) for s in specs],
                         group='pci')
        return self.discover(generic_pci.GenericPciDriver())

    def test_nothing_listed_nothing_reported(self):
        self.assertEqual([], self._discover())

    def test_by_ids_with_default_resource_class(self):
        devices = self._discover({'vendor_id': '1d0f', 'product_id': 'efa1'})
        deps = self.deployables(devices)
        self.assertEqual(['0000:81:00.0', '0000:82:00.0'], list(deps))
        # The replaced service's class, type and product trait; its vendor
        # trait and driver_name only name the vendors it knew.
        self.assertEqual({'rc': 'CUSTOM_PCI',
                          'trait0': 'CUSTOM_PCI_PRODUCT_ID_EFA1'},
                         self.attributes(deps['0000:81:00.0']))
        self.assertEqual('1D0F', deps['0000:81:00.0'].driver_name)
        self.assertEqual(['0000:81:00.0'],
                         self.addresses(deps['0000:81:00.0']))
        self.assertEqual(('GPU', '1d0f', '1d0f:efa1'),
                         (devices[0].type, devices[0].vendor,
                          devices[0].model))
        self.conf.config(placement_names='descriptive', group='agent')
        deps = self.deployables(self._discover({'vendor_id': '1d0f',
                                                'product_id': 'efa1'}))
        self.assertEqual({'rc': 'CUSTOM_PCI_1D0F_EFA1'},
                         self.attributes(deps['0000:81:00.0']))

    def test_resource_class_and_traits(self):
        deps = self.deployables(self._discover({
            'vendor_id': '0x15B3', 'product_id': '*',
            'resource_class': 'smartnic', 'traits': 'bluefield,HW_NIC_SRIOV'}))
        self.assertEqual({'rc': 'CUSTOM_SMARTNIC',
                          'trait0': 'CUSTOM_BLUEFIELD',
                          'trait1': 'HW_NIC_SRIOV'},
                         self.attributes(deps['0000:c1:00.0']))

    def test_standard_resource_class_is_kept(self):
        deps = self.deployables(self._discover({
            'address': '0000:c1:00.0', 'resource_class': 'fpga'}))
        self.assertEqual('FPGA', self.attributes(deps['0000:c1:00.0'])['rc'])

    def test_address_forms(self):
        for address, expected in (
                ('*:81:00.*', ['0000:81:00.0']),
                (':82:', ['0000:82:00.0']),
                ({'bus': '8[12]', 'function': '0'},
                 ['0000:81:00.0', '0000:82:00.0']),
                ({'domain': '0000', 'bus': 'c1', 'slot': '00'},
                 ['0000:c1:00.0'])):
            deps = self.deployables(self._discover({'address': address}))
            self.assertEqual(expected, list(deps), address)

    def test_vfs_offered_each_or_grouped_under_their_pf(self):
        spec = {'vendor_id': '8086', 'product_id': '154c',
                'physical_network': 'physnet2'}
        deps = self.deployables(self._discover(spec))
        self.assertEqual(['0000:18:02.0', '0000:18:02.1'], sorted(deps))
        self.assertEqual('INTEL', deps['0000:18:02.0'].driver_name)
        self.conf.config(group_virtual_functions=True, group='agent')
        deps = self.deployables(self._discover(spec))
        self.assertEqual(['0000:18:00.0'], list(deps))
        vfs = deps['0000:18:00.0']
        self.assertEqual(['0000:18:02.0', '0000:18:02.1'],
                         self.addresses(vfs))
        self.assertEqual('physnet2',
                         vfs.attach_handles[1].attach_info[
                             'physical_network'])

    def test_devname_and_pfs_with_vfs(self):
        # ens785f0's port has VFs, so only ens786f0 is offered whole.
        deps = self.deployables(self._discover({'devname': 'ens785f0'},
                                               {'devname': 'ens786f0'}))
        self.assertEqual(['0000:19:00.0'], list(deps))

    def test_invalid_specs_fail_the_driver_load(self):
        for spec in ('not json', '[1]', '{"vendor": "8086"}',
                     '{"vendor_id": "xyz"}', '{"address": 5}',
                     '{"address": "1:2:3:4"}',
                     '{"address": "0000:8*"}', '{"address": {"x": "1"}}',
                     '{"address": {"bus": "("}}', '{"traits": ["A"]}'):
            self.conf.config(device_spec=[spec], group='pci')
            error = self.assertRaises(exception.DriverLoadFailed,
                                      drivers_base.load,
                                      ['generic_pci_driver'])
            self.assertIn('[pci] device_spec', str(error))
