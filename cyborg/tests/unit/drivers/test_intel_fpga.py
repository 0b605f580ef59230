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
"""The Intel FPGA driver against simulated OPAE sysfs trees."""

import json

from cyborg.drivers import intel_fpga
from cyborg import exception
from cyborg.privsep import vendor_tool
from cyborg.tests.unit.drivers import driver_case

IFID = '9926ab6d-6c92-5a68-aabc-a7d84c545738'
IFID_HEX = IFID.replace('-', '')
AFU = 'd8424dc4a4a3c413f89e433683f9040b'


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('intel_fpga', '0000:5e:00.0', dict(product='09c4', layout='dfl')),
        ('intel_fpga', '0000:86:00.0', dict(product='0b30', layout='intel',
                                            vfs=2, afu_id=AFU)),
        ('intel_qat', '0000:3d:00.0', dict(vfs=1)),
    ]

    def setUp(self):
        super().setUp()
        self.driver = intel_fpga.IntelFpgaDriver()

    def test_cards(self):
        devices = self.discover(self.driver)
        self.assertEqual(['0000:5e:00.0', '0000:86:00.0'],
                         ['%(domain)s:%(bus)s:%(device)s.%(function)s'
                          % d.controlpath_id.cpid_info for d in devices])
        self.assertEqual({('FPGA', '0x8086')},
                         {(d.type, d.vendor) for d in devices})
        self.assertEqual(['Intel PAC Arria 10 GX', 'Intel PAC N3000'],
                         [d.model for d in devices])
        self.assertEqual({'vendor_id': '8086', 'product_id': '09c4',
                          'class_code': '120000', 'numa_node': 0},
                         json.loads(devices[0].std_board_info))

    def test_pac_without_vfs_or_afu(self):
        dep = self.deployables(self.discover(self.driver))['0000:5e:00.0']
        self.assertEqual('FPGA', self.attributes(dep)['rc'])
        # The replaced service's trait of the empty port's all-zero id too.
        self.assertEqual({'CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_PAC_ARRIA10',
                          'CUSTOM_FPGA_REGION_' + IFID_HEX.upper(),
                          'CUSTOM_FPGA_REGION_INTEL_' + IFID_HEX.upper(),
                          'CUSTOM_FPGA_FUNCTION_ID_INTEL_' + '0' * 32},
                         self.traits(dep))
        self.assertEqual(['0000:5e:00.0'], self.addresses(dep))
        self.assertEqual(1, dep.num_accelerators)
        self.assertEqual('intel', dep.driver_name)
        self.assertIsNone(dep.bitstream_id)

    def test_n3000_with_vfs_and_afu(self):
        deps = self.deployables(self.discover(self.driver))
        self.assertEqual(['0000:5e:00.0', '0000:86:00.0'], sorted(deps))
        dep = deps['0000:86:00.0']
        self.assertEqual(['0000:86:00.1', '0000:86:00.2'],
                         self.addresses(dep))
        descriptive = {'CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_N3000',
                       'CUSTOM_FPGA_REGION_' + IFID_HEX.upper(),
                       'CUSTOM_FPGA_FUNCTION_ID_' + AFU.upper()}
        self.assertEqual(descriptive | {
            'CUSTOM_FPGA_REGION_INTEL_' + IFID_HEX.upper(),
            'CUSTOM_FPGA_FUNCTION_ID_INTEL_' + AFU.upper()},
            self.traits(dep))
        self.conf.config(placement_names='descriptive', group='agent')
        dep = self.deployables(self.discover(self.driver))['0000:86:00.0']
        self.assertEqual(descriptive, self.traits(dep))

    def test_regions(self):
        regions = self.driver.fpga_regions(self.scan())
        self.assertEqual(['0000:5e:00.0', '0000:86:00.0'], sorted(regions))
        region = regions['0000:86:00.0']
        self.assertEqual(('Intel', 'N3000', IFID_HEX, (IFID_HEX,)),
                         (region.vendor, region.board, region.region_type,
                          region.shell_ids))

    def test_fpgaconf_command(self):
        region = self.driver.fpga_regions(self.scan())['0000:86:00.0']
        self.conf.config(fpgaconf_path='/opt/opae/bin/fpgaconf',
                         group='fpga')
        self.conf.config(download_dir='/tmp', group='glance')
        self.assertEqual(
            ['/opt/opae/bin/fpgaconf', '-S', '0x0000', '-B', '0x86', '-D',
             '0x00', '-F', '0x0', '/tmp/gbs'],
            vendor_tool.argv(**self.driver.command(
                region, '/tmp/gbs', {'id': 'img', 'shell_id': IFID})))

    def test_shell_images_are_refused(self):
        region = self.driver.fpga_regions(self.scan())['0000:86:00.0']
        error = self.assertRaises(exception.BitstreamRejected,
                                  self.driver.command, region, '/tmp/gbs',
                                  {'id': 'img', 'board': 'PAC_ARRIA10',
                                   'shell_id': None})
        self.assertIn('partial bitstreams only', str(error))

    def test_images_without_metadata_are_loaded(self):
        # Made for the replaced service, which loaded every image.
        region = self.driver.fpga_regions(self.scan())['0000:86:00.0']
        self.assertEqual('/tmp/gbs', self.driver.command(
            region, '/tmp/gbs', {'id': 'img'})['bitstream'])

    def test_images_declaring_a_shell_are_refused(self):
        region = self.driver.fpga_regions(self.scan())['0000:86:00.0']
        for allow_shell in (False, True):
            self.assertRaises(exception.BitstreamRejected,
                              self.driver.command, region, '/tmp/gbs',
                              {'id': 'img', 'shell_id': IFID,
                               'shell_image': 'true'},
                              allow_shell=allow_shell)
