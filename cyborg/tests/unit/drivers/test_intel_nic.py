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
"""The Intel NIC driver: VFs with their physical network."""

from cyborg.conf import nic_devices
from cyborg.drivers import base as drivers_base
from cyborg.drivers import intel_nic
from cyborg import exception
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('intel_nic', '0000:18:00.0', dict(ifname='ens785f0', vfs=2)),
        ('intel_nic', '0000:19:00.0', dict(ifname='ens786f0', vfs=1)),
        ('intel_nic', '0000:3b:00.0', dict(product='1592', ifname='eno1')),
    ]

    def _discover(self, *mappings):
        self.conf.config(physical_device_mappings=list(mappings),
                         group='nic')
        return self.discover(intel_nic.IntelNicDriver())

    def test_vfs_carry_the_physical_network(self):
        devices = self._discover('physnet1:ens785f0')
        deps = self.deployables(devices)
        # The E810 port has no VFs: nothing of it is offered.
        self.assertEqual(['0000:18:00.0', '0000:19:00.0'], sorted(deps))
        mapped = deps['0000:18:00.0']
        self.assertEqual('CUSTOM_NIC_VF', self.attributes(mapped)['rc'])
        self.assertEqual({'CUSTOM_NIC_INTEL', 'CUSTOM_NIC_INTEL_X710',
                          'CUSTOM_PHYSNET_PHYSNET1'}, self.traits(mapped))
        self.assertEqual(['0000:18:02.0', '0000:18:02.1'],
                         self.addresses(mapped))
        self.assertEqual({'physnet1'},
                         {h.attach_info['physical_network']
                          for h in mapped.attach_handles})
        unmapped = deps['0000:19:00.0']
        self.assertNotIn('physical_network',
                         unmapped.attach_handles[0].attach_info)
        self.assertEqual('NIC', devices[0].type)

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
        self.conf.config(enabled_nic_types=['x710_static'],
                         group='nic_devices')
        nic_devices.register_type_opts(self.conf.conf)
        self.conf.config(physical_device_mappings=['physnet2:ens786f0'],
                         group='x710_static')
        deps = self.deployables(self._discover())
        self.assertIn('CUSTOM_PHYSNET_PHYSNET2',
                      self.traits(deps['0000:19:00.0']))
        self.assertNotIn('CUSTOM_PHYSNET_PHYSNET2',
                         self.traits(deps['0000:18:00.0']))
        deps = self.deployables(self._discover('physnet1:ens785f0'))
        self.assertEqual(set(), {'CUSTOM_PHYSNET_PHYSNET2'} & self.traits(
            deps['0000:19:00.0']))
