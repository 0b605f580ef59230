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
"""The NVMe driver: whole drives, never those the host uses."""

import os

import fixtures

from cyborg.drivers import nvme_ssd
from cyborg.tests.unit.drivers import driver_case


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('nvme', '0000:01:00.0', dict(partitions=2)),
        ('nvme', '0000:02:00.0', dict(holders=('dm-0',))),
        ('nvme', '0000:03:00.0', dict(driver='vfio-pci', vendor='8086',
                                      product='0a54', model='INTEL P4510')),
        ('nvme', '0000:04:00.0', dict()),
    ]

    def setUp(self):
        super().setUp()
        # The host's mount table: the fourth drive is mounted whole.
        mounts = os.path.join(self.tree.root, 'mounts')
        with open(mounts, 'w') as f:
            f.write('/dev/nvme3n1 /data xfs rw 0 0\n'
                    'proc /proc proc rw 0 0\n')
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.drivers.nvme_ssd.MOUNTS', mounts))

    def test_drives(self):
        devices = self.discover(nvme_ssd.NvmeSsdDriver())
        # Recorded as the replaced service's SSD driver recorded them.
        self.assertEqual({'SSD'}, {d.type for d in devices})
        self.assertEqual('INTEL P4510', devices[2].model)
        deps = self.deployables(devices)
        self.assertEqual({'0000:01:00.0': True, '0000:02:00.0': True,
                          '0000:03:00.0': False, '0000:04:00.0': True},
                         {name: dep.attach_handles[0].in_use
                          for name, dep in deps.items()})
        free = deps['0000:03:00.0']
        self.assertEqual({'rc': 'CUSTOM_SSD', 'trait0': 'CUSTOM_NVME',
                          'trait1': 'CUSTOM_NVME_INTEL',
                          'trait2': 'CUSTOM_SSD_INTEL',
                          'trait3': 'CUSTOM_SSD_PRODUCT_ID_0A54'},
                         self.attributes(free))
        self.assertEqual('INTEL', free.driver_name)
        # A vendor the replaced service did not know: its id.
        self.assertEqual('144D', deps['0000:04:00.0'].driver_name)
        self.conf.config(placement_names='descriptive', group='agent')
        free = self.deployables(self.discover(nvme_ssd.NvmeSsdDriver()))[
            '0000:03:00.0']
        self.assertEqual({'rc': 'CUSTOM_NVME', 'trait0': 'CUSTOM_NVME',
                          'trait1': 'CUSTOM_NVME_INTEL'},
                         self.attributes(free))

    def test_unused_drive_bound_to_nvme(self):
        with open(nvme_ssd.MOUNTS, 'w') as f:
            f.write('')
        deps = self.deployables(self.discover(nvme_ssd.NvmeSsdDriver()))
        self.assertFalse(deps['0000:04:00.0'].attach_handles[0].in_use)
        self.assertIn('CUSTOM_NVME_SAMSUNG',
                      self.traits(deps['0000:04:00.0']))
