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
"""The Intel QAT driver: physical and virtual functions."""

from cyborg.drivers import intel_qat
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('intel_qat', '0000:3d:00.0', dict(product='37c8', vfs=3)),
        ('intel_qat', '0000:6b:00.0', dict(product='4940',
                                           services='sym;asym')),
        ('intel_nic', '0000:18:00.0', dict(vfs=2)),
    ]

    def test_pf_and_vfs(self):
        devices = self.discover(intel_qat.IntelQatDriver())
        self.assertEqual(['Intel QAT C62X', 'Intel QAT 4XXX'],
                         [d.model for d in devices])
        self.assertEqual({('QAT', '0x8086')},
                         {(d.type, d.vendor) for d in devices})
        # One deployable per VF, as the replaced service made them.
        vfs = ['0000:3d:00.1', '0000:3d:00.2', '0000:3d:00.3']
        deps = self.deployables(devices[:1])
        self.assertEqual(vfs, list(deps))
        for vf in vfs:
            self.assertEqual([vf], self.addresses(deps[vf]))
            self.assertEqual({'rc': 'CUSTOM_QAT', 'trait0': 'CUSTOM_QAT',
                              'trait1': 'CUSTOM_QAT_C62X'},
                             self.attributes(deps[vf]))
            self.assertEqual('intel', deps[vf].driver_name)

    def test_vfs_grouped_on_request(self):
        self.conf.config(group_virtual_functions=True, group='agent')
        deps = self.deployables(self.discover(intel_qat.IntelQatDriver()))
        c62x = deps['0000:3d:00.0']
        self.assertEqual(['0000:3d:00.0', '0000:6b:00.0'], list(deps))
        self.assertEqual(['0000:3d:00.1', '0000:3d:00.2', '0000:3d:00.3'],
                         self.addresses(c62x))

    def test_pf_without_vfs_and_services(self):
        deps = self.deployables(self.discover(intel_qat.IntelQatDriver()))
        gen4 = deps['0000:6b:00.0']
        self.assertEqual(['0000:6b:00.0'], self.addresses(gen4))
        self.assertEqual({'CUSTOM_QAT', 'CUSTOM_QAT_4XXX',
                          'CUSTOM_QAT_SERVICE_SYM',
                          'CUSTOM_QAT_SERVICE_ASYM'}, self.traits(gen4))
