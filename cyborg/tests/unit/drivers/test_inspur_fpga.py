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
"""The Inspur FPGA driver: Inspur accelerator cards, whole."""

from cyborg.drivers import inspur_fpga
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('add_pci', '0000:3b:00.0', dict(vendor='1bd4', product='a115',
                                         class_code='120000')),
        # An Inspur NVMe drive and another maker's accelerator: not taken.
        ('nvme', '0000:5e:00.0', dict(vendor='1bd4', product='1003')),
        ('add_pci', '0000:af:00.0', dict(vendor='1c2c', product='1000',
                                         class_code='120000')),
    ]

    def test_cards(self):
        devices = self.discover(inspur_fpga.InspurFpgaDriver())
        (device,) = devices
        self.assertEqual(('FPGA', '1bd4', 'Inspur FPGA a115'),
                         (device.type, device.vendor, device.model))
        self.assertEqual('0000:3b:00.0',
                         '%(domain)s:%(bus)s:%(device)s.%(function)s'
                         % device.controlpath_id.cpid_info)
        (dep,) = device.deployables
        self.assertEqual('0000:3b:00.0', dep.name)
        self.assertEqual(['0000:3b:00.0'], self.addresses(dep))
        self.assertEqual({'rc': 'FPGA', 'trait0': 'CUSTOM_FPGA_INSPUR',
                          'trait1': 'CUSTOM_FPGA_PRODUCT_ID_A115'},
                         self.attributes(dep))
        self.assertEqual({}, inspur_fpga.InspurFpgaDriver().fpga_regions(
            self.scan()))
