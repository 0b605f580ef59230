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
"""Device health read from simulated sysfs trees."""

from cyborg.drivers import base as drivers_base
from cyborg.drivers import health
from cyborg.drivers import intel_fpga
from cyborg.drivers import nvidia_gpu
from cyborg.drivers import pci
from cyborg.tests import base
from cyborg.tests import sysfs_tree

CARD = '0000:5e:00.0'
VF = '0000:5e:00.1'
DFL_FME_ERRORS = 'fpga_region/region0/dfl-fme.0/errors/'


class TestHealth(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(
            self.conf, [('intel_fpga', CARD, dict(vfs=1))])).tree
        self.monitor = health.Monitor()
        self.driver = intel_fpga.IntelFpgaDriver

    def check(self):
        devices = pci.scan(self.conf.conf.agent.sysfs_root)
        return self.monitor.check(
            devices[CARD], [devices[VF]],
            kernel_drivers=self.driver.kernel_drivers,
            error_files=self.driver.error_files)

    def test_nothing_shown_is_healthy(self):
        self.assertEqual(('healthy', []), self.check())

    def test_link_down(self):
        self.tree.write(CARD, 'current_link_width', '8')
        self.tree.write(CARD, 'current_link_speed', '8.0 GT/s PCIe')
        self.assertEqual(('healthy', []), self.check())
        self.tree.write(VF, 'current_link_speed', 'Unknown')
        self.assertEqual(('unhealthy', ['%s: PCI link down (width None, '
                                        'speed Unknown)' % VF]),
                         self.check())
        self.tree.write(CARD, 'current_link_width', '0')
        self.assertEqual(2, len(self.check()[1]))

    def test_kernel_driver(self):
        self.tree.bind(CARD, 'vfio-pci')
        self.assertEqual(('unhealthy', ['%s: kernel driver vfio-pci bound, '
                                        'needs dfl-pci or intel-fpga-pci'
                                        % CARD]), self.check())
        self.tree.bind(CARD, 'intel-fpga-pci')
        self.assertEqual(('healthy', []), self.check())
        # A driver that names none needs none.
        self.driver = drivers_base.Driver
        self.tree.bind(CARD, 'vfio-pci')
        self.assertEqual(('healthy', []), self.check())

    def test_gpu_healthy_under_any_kernel_driver(self):
        # libvirt binds a whole GPU that it passes through to vfio-pci
        # and back to its own driver, or to none.
        gpu = '0000:3b:00.0'
        self.tree.add_pci(gpu, '10de', '1eb8', '030200')
        devices = pci.scan(self.conf.conf.agent.sysfs_root)
        self.assertIsNone(devices[gpu].driver)
        for driver in (None, 'vfio-pci', 'nvidia'):
            if driver:
                self.tree.bind(gpu, driver)
                devices = pci.scan(self.conf.conf.agent.sysfs_root)
            self.assertEqual(('healthy', []), self.monitor.check(
                devices[gpu], [],
                kernel_drivers=nvidia_gpu.NvidiaGpuDriver.kernel_drivers))

    def test_aer_counters_that_rise(self):
        self.tree.write(CARD, 'aer_dev_fatal',
                        'Undefined 0\nDLP 2\nTOTAL_ERR_FATAL 2')
        self.tree.write(VF, 'aer_dev_correctable', 'TOTAL_ERR_COR 1')
        # The first reading is the baseline.
        self.assertEqual(('healthy', []), self.check())
        self.tree.write(CARD, 'aer_dev_fatal', 'DLP 3\nTOTAL_ERR_FATAL 3')
        self.tree.write(VF, 'aer_dev_nonfatal', 'TOTAL_ERR_NONFATAL 1')
        # Correctable errors are not read.
        self.tree.write(VF, 'aer_dev_correctable', 'TOTAL_ERR_COR 9')
        self.assertEqual(('unhealthy', [
            '%s: 1 new fatal AER error(s), 3 in all' % CARD]), self.check())
        self.tree.write(VF, 'aer_dev_nonfatal', 'TOTAL_ERR_NONFATAL 4')
        self.assertEqual(('unhealthy', [
            '%s: 3 new non-fatal AER error(s), 4 in all' % VF]),
            self.check())
        self.assertEqual(('healthy', []), self.check())

    def test_fpga_error_registers(self):
        self.tree.write(CARD, DFL_FME_ERRORS + 'pcie0_errors', '0x0')
        self.tree.write(CARD, DFL_FME_ERRORS + 'inject_errors', '0x1')
        self.assertEqual(('healthy', []), self.check())
        self.tree.write(CARD, DFL_FME_ERRORS + 'catfatal_errors', '0x800')
        self.assertEqual(('unhealthy', [
            '%s: error register %scatfatal_errors reads 0x800'
            % (CARD, DFL_FME_ERRORS)]), self.check())

    def test_aer_total(self):
        self.assertEqual(7, health.aer_total('A 1\nTOTAL_ERR_FATAL 7',
                                             'TOTAL_ERR_FATAL'))
        self.assertIsNone(health.aer_total(None, 'TOTAL_ERR_FATAL'))
        self.assertIsNone(health.aer_total('TOTAL_ERR_FATAL x',
                                           'TOTAL_ERR_FATAL'))
