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
"""The Xilinx FPGA driver against simulated XRT sysfs trees."""

import json

from cyborg.drivers import xilinx_fpga
from cyborg import exception
from cyborg.privsep import vendor_tool
from cyborg.tests.unit.drivers import driver_case

LOGIC = ('a7c0f3c1d7ad4e0b9d6f1a2b3c4d5e6f',
         '11112222333344445555666677778888')
IFACE = '862c7020-a250-293e-3203-6f19956669e5'
XCLBIN = '4a0a2b6a-ffe1-4fb4-9c41-b2ecb5b3d8b1'


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('xilinx_fpga', '0000:65:00.0', dict(logic_uuids=LOGIC,
                                             interface_uuids=(IFACE,),
                                             xclbin_uuid=XCLBIN)),
        ('xilinx_fpga', '0000:b3:00.0', dict(product='500c')),
        # A management function whose user function is missing.
        ('add_pci', '0000:d8:00.0', dict(vendor='10ee', product='5000',
                                         class_code='058000')),
    ]

    def setUp(self):
        super().setUp()
        self.driver = xilinx_fpga.XilinxFpgaDriver()

    def test_management_and_user_function_are_one_device(self):
        devices = self.discover(self.driver)
        self.assertEqual(2, len(devices))
        u250 = devices[0]
        self.assertEqual(('FPGA', '10ee', 'Xilinx Alveo U250'),
                         (u250.type, u250.vendor, u250.model))
        self.assertEqual({'domain': '0000', 'bus': '65', 'device': '00',
                          'function': '0'}, u250.controlpath_id.cpid_info)
        self.assertEqual({'vbnv': 'xilinx_u250_gen3x16_xdma_shell_3_1'},
                         json.loads(u250.vendor_board_info))
        # Named after the management function, as the replaced service
        # named it; instances get the user function.
        (dep,) = u250.deployables
        self.assertEqual(('0000:65:00.0', 'XILINX'),
                         (dep.name, dep.driver_name))
        self.assertEqual(['0000:65:00.1'], self.addresses(dep))
        self.assertEqual(
            {'CUSTOM_FPGA_XILINX', 'CUSTOM_FPGA_XILINX_U250',
             'CUSTOM_FPGA_PRODUCT_ID_5004',
             'CUSTOM_FPGA_REGION_' + IFACE.replace('-', '').upper(),
             'CUSTOM_FPGA_FUNCTION_ID_' + XCLBIN.replace('-', '').upper()},
            self.traits(dep))

    def test_empty_card_has_no_function_trait(self):
        dep = self.deployables(self.discover(self.driver))['0000:b3:00.0']
        self.assertNotIn('CUSTOM_FPGA_FUNCTION_ID',
                         ' '.join(self.traits(dep)))
        self.assertIn('CUSTOM_FPGA_XILINX_U280', self.traits(dep))

    def test_regions_list_every_shell_partition(self):
        region = self.driver.fpga_regions(self.scan())['0000:65:00.0']
        self.assertEqual(('Xilinx', 'U250', IFACE.replace('-', ''), LOGIC),
                         (region.vendor, region.board, region.region_type,
                          region.shell_ids))

    def test_xbmgmt_commands(self):
        self.conf.config(download_dir='/tmp', group='glance')
        self.conf.config(xbmgmt_path='/opt/xilinx/xrt/bin/xbmgmt',
                         group='fpga')
        region = self.driver.fpga_regions(self.scan())['0000:65:00.0']
        user = ['/opt/xilinx/xrt/bin/xbmgmt', 'program', '--device',
                '0000:65:00.0', '--user', '/tmp/a.xclbin', '--force']
        # A bind loads the user partition, whether the image has a
        # shell_id or not (the replaced service flashed the shell then).
        for image in ({'id': 'i', 'shell_id': LOGIC[0]}, {'id': 'i'},
                      {'id': 'i', 'shell_image': 'false'}):
            self.assertEqual(user, vendor_tool.argv(**self.driver.command(
                region, '/tmp/a.xclbin', image)))

    def test_shell_only_in_a_shell_update(self):
        self.conf.config(download_dir='/tmp', group='glance')
        self.conf.config(xbmgmt_path='/opt/xilinx/xrt/bin/xbmgmt',
                         group='fpga')
        region = self.driver.fpga_regions(self.scan())['0000:65:00.0']
        shell = {'id': 'i', 'shell_image': 'true'}
        error = self.assertRaises(exception.BitstreamRejected,
                                  self.driver.command, region,
                                  '/tmp/shell.xsabin', shell)
        self.assertIn('shell image', str(error))
        self.assertEqual(
            ['/opt/xilinx/xrt/bin/xbmgmt', 'program', '--device',
             '0000:65:00.0', '--shell', '/tmp/shell.xsabin', '--force'],
            vendor_tool.argv(**self.driver.command(
                region, '/tmp/shell.xsabin', shell, allow_shell=True)))
