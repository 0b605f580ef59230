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
"""``tools/hardware-report.sh`` on a simulated host.

The host is the shape a real one showed (:data:`cyborg.tests.sysfs.
H200_VM`: an H200 in a VM, no NUMA node, no IOMMU) plus a GPU on NUMA
node 1 in IOMMU group 7, so both shapes are read. The script runs in
this virtualenv (``CYBORG_VENV``), as it would in the quickstart's.
"""

import json
import os
import subprocess  # nosec B404
import sys

import fixtures
import testtools

from cyborg.tests import sysfs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
SCRIPT = os.path.join(REPO, 'tools', 'hardware-report.sh')

H200 = '0000:00:05.0'
T4 = '0000:3b:00.0'


class TestHardwareReport(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        sysfs.build(self.root, sysfs.H200_VM + [
            ('nvidia_gpu', T4, dict(numa_node=1, iommu_group=7))])

    def run_script(self, *args):
        done = subprocess.run(  # nosec B603
            [SCRIPT, '--sysfs-root', self.root] + list(args),
            capture_output=True, text=True, timeout=120, check=True,
            env=dict(os.environ, CYBORG_VENV=sys.prefix))
        return done.stdout

    def test_json(self):
        data = json.loads(self.run_script('--format', 'json'))
        self.assertEqual(self.root, data['sysfs_root'])
        self.assertEqual(4, data['pci_functions'])
        self.assertNotIn('fake_driver', data['drivers'])
        self.assertEqual('reported 2 device(s)',
                         data['drivers']['nvidia_gpu_driver'])
        self.assertFalse([name for name, result in data['drivers'].items()
                          if result.startswith('failed')])
        devices = {dev['pci_address']: dev for dev in data['devices']}
        self.assertEqual([H200, T4], sorted(devices))
        h200 = devices[H200]
        self.assertEqual(
            {'vendor_product': '10de:2335', 'subsystem': '10de:18bf',
             'class': '030200', 'kernel_driver': 'nvidia',
             'numa_node': None, 'iommu_group': None, 'type': 'GPU',
             'model': 'NVIDIA H200', 'health': 'healthy',
             'driver': 'nvidia_gpu_driver'},
            {key: h200[key] for key in (
                'vendor_product', 'subsystem', 'class', 'kernel_driver',
                'numa_node', 'iommu_group', 'type', 'model', 'health',
                'driver')})
        (dep,) = h200['deployables']
        self.assertEqual('PGPU', dep['resource_class'])
        self.assertIn('CUSTOM_GPU_NVIDIA', dep['traits'])
        self.assertEqual([{'type': 'PCI', 'pci_address': H200,
                           'attach_info': {'domain': '0000', 'bus': '00',
                                           'device': '05',
                                           'function': '0'}}],
                         dep['attach_handles'])
        self.assertEqual((1, 7), (devices[T4]['numa_node'],
                                  devices[T4]['iommu_group']))
        # The virtio functions, which no driver takes, are listed too.
        self.assertEqual(['0000:00:02.0', '0000:00:03.0'],
                         [f['pci_address'] for f in data['other_functions']])

    def test_table(self):
        lines = self.run_script('--format', 'table',
                                '--drivers', 'nvidia_gpu_driver').splitlines()
        self.assertTrue(lines[0].startswith('PCI ADDRESS'))
        h200 = [line for line in lines if line.startswith(H200)]
        self.assertEqual(1, len(h200))
        for text in ('10de:2335', 'NVIDIA H200', 'PGPU', 'PCI:' + H200):
            self.assertIn(text, h200[0])
        self.assertIn('driver nvidia_gpu_driver: reported 2 device(s)',
                      lines)
