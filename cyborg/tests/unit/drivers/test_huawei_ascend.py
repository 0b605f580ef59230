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
"""The Huawei Ascend driver: AI processors, whole."""

from cyborg.drivers import huawei_ascend
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('add_pci', '0000:0c:00.0', dict(vendor='19e5', product='d100',
                                         class_code='120000')),
        ('add_pci', '0000:82:00.0', dict(vendor='19e5', product='d801',
                                         class_code='120000')),
        # A Huawei NIC is not an Ascend processor.
        ('add_pci', '0000:3d:00.0', dict(vendor='19e5', product='1822',
                                         class_code='020000')),
    ]

    def test_processors(self):
        devices = self.discover(huawei_ascend.HuaweiAscendDriver())
        self.assertEqual(['Huawei Ascend 310', 'Huawei Ascend 910'],
                         sorted(d.model for d in devices))
        self.assertEqual({('AICHIP', '19e5')},
                         {(d.type, d.vendor) for d in devices})
        deps = self.deployables(devices)
        self.assertEqual(['0000:0c:00.0', '0000:82:00.0'], sorted(deps))
        self.assertEqual({'rc': 'CUSTOM_AICHIP',
                          'trait0': 'CUSTOM_AICHIP_ASCEND_910',
                          'trait1': 'CUSTOM_AICHIP_HUAWEI'},
                         self.attributes(deps['0000:82:00.0']))
        self.assertEqual(['0000:0c:00.0'],
                         self.addresses(deps['0000:0c:00.0']))
