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
"""The Intel NIC driver: VFs or whole ports, with their physical network."""

from cyborg.conf import nic_devices
from cyborg.drivers import base as drivers_base
from cyborg.drivers import intel_nic
from cyborg import exception
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('intel_nic', '0000:18:00.0', dict(ifname='ens785f0', vfs=2)),
        ('intel_nic', '0000:19:00.0', dict(ifname='ens786f0', vfs=1)),
        ('intel_nic', '0000:1a:00.0', dict(product='158b', ifname='ens787f0')),
        ('intel_nic', '0000:3b:00.0', dict(product='1592', ifname='eno1',
                                           vfs=1)),
    ]

    def _discover(self, *mappings):
        self.conf.config(physical_device_mappings=list(mappings),
                         group='nic')
        return self.discover(intel_nic.IntelNicDriver())

    def _nic_types(self, **options):
        """Set ``options`` in the replaced service's x710_static group."""
        self.conf.config(enabled_nic_types=['x710_static'],
                         group='nic_devices')
        nic_devices.register_type_opts(self.conf.conf)
        self.conf.config(group='x710_static', **options)

    def test_vfs_carry_the_physical_network(self):
        devices = self._discover('physnet1:ens785f0')
        deps = self.deployables(devices)
        # One deployable per VF, and the XXV710 port without VFs whole;
        # the E810 is not one of [nic] product_ids.
        self.assertEqual(['0000:18:02.0', '0000:18:02.1', '0000:19:02.0',
                          '0000:1a:00.0'], sorted(deps))
        mapped = deps['0000:18:02.1']
        self.assertEqual('CUSTOM_NIC', self.attributes(mapped)['rc'])
        self.assertEqual({'CUSTOM_VF', 'CUSTOM_PHYSNET1',
                          'CUSTOM_NIC_INTEL', 'CUSTOM_NIC_INTEL_X710',
                          'CUSTOM_PHYSNET_PHYSNET1'}, self.traits(mapped))
        self.assertEqual(['0000:18:02.1'], self.addresses(mapped))
        self.assertEqual('physnet1',
                         mapped.attach_handles[0].attach_info[
                             'physical_network'])
        unmapped = deps['0000:19:02.0']
        self.assertNotIn('physical_network',
                         unmapped.attach_handles[0].attach_info)
        self.assertEqual({('NIC', '0x8086')},
                         {(d.type, d.vendor) for d in devices})
        self.assertEqual({'intel'},
                         {d.driver_name for d in deps.values()})

    def test_port_without_vfs_is_offered_whole(self):
        dep = self.deployables(self._discover('physnet3:ens787f0'))[
            '0000:1a:00.0']
        self.assertEqual({'rc': 'CUSTOM_NIC'}, {
            k: v for k, v in self.attributes(dep).items() if k == 'rc'})
        self.assertEqual({'CUSTOM_PF', 'CUSTOM_PHYSNET3', 'CUSTOM_NIC_INTEL',
                          'CUSTOM_NIC_INTEL_XXV710',
                          'CUSTOM_PHYSNET_PHYSNET3'}, self.traits(dep))
        self.assertEqual(['0000:1a:00.0'], self.addresses(dep))

    def test_descriptive_names_and_grouped_vfs(self):
        self.conf.config(placement_names='descriptive',
                         group_virtual_functions=True, group='agent')
        deps = self.deployables(self._discover('physnet1:ens785f0'))
        self.assertEqual(['0000:18:00.0', '0000:19:00.0', '0000:1a:00.0'],
                         sorted(deps))
        vfs = deps['0000:18:00.0']
        self.assertEqual('CUSTOM_NIC_VF', self.attributes(vfs)['rc'])
        self.assertEqual({'CUSTOM_NIC_INTEL', 'CUSTOM_NIC_INTEL_X710',
                          'CUSTOM_PHYSNET_PHYSNET1'}, self.traits(vfs))
        self.assertEqual(['0000:18:02.0', '0000:18:02.1'],
                         self.addresses(vfs))
        self.assertEqual('CUSTOM_NIC_PF',
                         self.attributes(deps['0000:1a:00.0'])['rc'])

    def test_product_ids_widen_the_scope(self):
        self.conf.config(product_ids=['1592'], group='nic')
        self.assertEqual(['0000:3b:02.0'],
                         sorted(self.deployables(self._discover())))
        self.conf.config(product_ids=['*'], group='nic')
        driver = intel_nic.IntelNicDriver()
        self.assertEqual(5, len(self.deployables(self.discover(driver))))
        self.assertEqual({('8086', '*')}, driver.pci_ids)

    def test_device_addresses_restrict_ports_and_vfs(self):
        # A port's address offers its VFs, or itself; a VF's that VF.
        self._nic_types(device_addresses=['0000:18:02.1', '0000:19:00.0',
                                          '0000:1a:00.0'])
        self.assertEqual(['0000:18:02.1', '0000:19:02.0', '0000:1a:00.0'],
                         sorted(self.deployables(self._discover())))
        self._nic_types(device_addresses=['0000:18:00.0'])
        self.assertEqual(['0000:18:02.0', '0000:18:02.1'],
                         sorted(self.deployables(self._discover())))
        self._nic_types(device_addresses=['18:00.0'])
        error = self.assertRaises(exception.DriverLoadFailed,
                                  drivers_base.load, ['intel_nic_driver'])
        self.assertIn('[x710_static] device_addresses', str(error))

    def test_function_traits(self):
        self._nic_types(function_device_mappings=['GTPv1:ens785f0'])
        deps = self.deployables(self._discover())
        self.assertIn('CUSTOM_GTPV1', self.traits(deps['0000:18:02.0']))
        self.assertNotIn('CUSTOM_GTPV1', self.traits(deps['0000:19:02.0']))

    def test_bad_mappings_fail_the_driver_load(self):
        for mappings in (['physnet1'], ['physnet1:'], [':eth0'],
                         ['a:eth0', 'b:eth0']):
            self.conf.config(physical_device_mappings=mappings, group='nic')
            error = self.assertRaises(exception.DriverLoadFailed,
                                      drivers_base.load,
                                      ['intel_nic_driver'])
            self.assertIn('physical_device_mappings', str(error))

    def test_mappings_of_the_replaced_services_nic_types(self):
        # [nic_devices] enabled_nic_types names groups that hold them; the
        # [nic] option wins when both are set.
        self._nic_types(physical_device_mappings=['physnet2:ens786f0'])
        deps = self.deployables(self._discover())
        self.assertIn('CUSTOM_PHYSNET_PHYSNET2',
                      self.traits(deps['0000:19:02.0']))
        self.assertNotIn('CUSTOM_PHYSNET_PHYSNET2',
                         self.traits(deps['0000:18:02.0']))
        deps = self.deployables(self._discover('physnet1:ens785f0'))
        self.assertEqual(set(), {'CUSTOM_PHYSNET_PHYSNET2'} & self.traits(
            deps['0000:19:02.0']))
