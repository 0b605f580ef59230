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
"""PCI enumeration: both backends, simulated trees."""

import os

import testtools

from cyborg.drivers import pci
from cyborg.tests import base
from cyborg.tests import sysfs_tree


class TestSimulatedTree(base.TestCase):

    def setUp(self):
        super().setUp()
        self.host = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('add_pci', '0000:3b:00.0', dict(
                vendor='8086', product='37c8', class_code='0b4000',
                driver='c6xx', numa_node=1)),
            ('add_pci', '0000:00:1f.0', dict(
                vendor='8086', product='a1c1', class_code='060100',
                numa_node=-1)),
        ]))
        self.vfs = self.host.tree.add_vfs('0000:3b:00.0', '37c9', 3,
                                          driver='vfio-pci')

    def test_scan(self):
        devices = pci.scan(self.conf.conf.agent.sysfs_root)
        self.assertEqual(['0000:00:1f.0', '0000:3b:00.0', '0000:3b:00.1',
                          '0000:3b:00.2', '0000:3b:00.3'], list(devices))
        pf = devices['0000:3b:00.0']
        self.assertEqual(('8086', '37c8', '0b4000', 'c6xx', 1),
                         (pf.vendor_id, pf.product_id, pf.class_code,
                          pf.driver, pf.numa_node))
        self.assertEqual(tuple(self.vfs), pf.virtfns)
        self.assertIsNone(pf.physfn)
        vf = devices['0000:3b:00.2']
        self.assertEqual(('37c9', 'vfio-pci', '0000:3b:00.0', ()),
                         (vf.product_id, vf.driver, vf.physfn, vf.virtfns))
        self.assertEqual('3', pf.read('sriov_numvfs'))
        self.assertIsNone(pf.read('nope'))
        self.assertTrue(pf.class_is('0b40'))
        bridge = devices['0000:00:1f.0']
        self.assertIsNone(bridge.driver)
        self.assertIsNone(bridge.numa_node)

    def test_removed_device_disappears(self):
        self.host.tree.remove_pci('0000:00:1f.0')
        self.assertNotIn('0000:00:1f.0',
                         pci.scan(self.conf.conf.agent.sysfs_root))

    def test_missing_tree_has_no_devices(self):
        self.assertEqual({}, pci.scan(os.path.join(
            self.conf.conf.agent.sysfs_root, 'nothing')))


class TestRealHost(base.TestCase):
    """The two backends agree about this machine's own devices."""

    @testtools.skipUnless(os.listdir('/sys/bus/pci/devices')
                          if os.path.isdir('/sys/bus/pci/devices') else [],
                          'this machine shows no PCI devices')
    def test_udev_and_sysfs_walk_agree(self):
        from_udev = pci.scan_udev()
        self.assertEqual(from_udev, pci.scan_sysfs('/sys'))
        self.assertEqual(from_udev, pci.scan('/sys'))
        self.assertEqual(sorted(os.listdir('/sys/bus/pci/devices')),
                         list(from_udev))
