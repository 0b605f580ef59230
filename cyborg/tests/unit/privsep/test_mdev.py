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
"""The sysfs daemon's mdev entrypoints refuse what they should not write."""

from cyborg.privsep import mdev
from cyborg.tests import base
from cyborg.tests import sysfs_tree

GPU = '0000:3b:00.0'
MDEV = 'b1d7d1f2-5a9e-4d8e-9f0a-1c2b3d4e5f60'
CREATE = 'mdev_supported_types/nvidia-222/create'


class TestMdevEntrypoints(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4}))])).tree

    def test_create_writes_the_canonical_uuid(self):
        mdev.create(self.tree.root, GPU, 'nvidia-222', MDEV.upper())
        self.assertEqual(MDEV, self.tree.read(GPU, CREATE))

    def test_create_refuses_malformed_arguments(self):
        for args in ((GPU, '../../../../etc', MDEV),
                     ('0000:3b:00.0/..', 'nvidia-222', MDEV),
                     (GPU, 'nvidia-222', 'not-a-uuid'),
                     (GPU, 'nvidia-222', '../' + MDEV)):
            self.assertRaises(ValueError, mdev.create, self.tree.root, *args)
        self.assertEqual('', self.tree.read(GPU, CREATE))

    def test_only_the_configured_root(self):
        error = self.assertRaises(ValueError, mdev.create, '/', GPU,
                                  'nvidia-222', MDEV)
        self.assertIn('is not [agent] sysfs_root', str(error))
        self.assertRaises(ValueError, mdev.remove, '/', MDEV)

    def test_remove(self):
        self.assertRaises(FileNotFoundError, mdev.remove, self.tree.root,
                          MDEV)
        self.tree.mdev(MDEV, GPU, 'nvidia-222')
        mdev.remove(self.tree.root, MDEV)
        self.assertEqual('1', self.tree.read(GPU, MDEV + '/remove'))
        self.assertRaises(ValueError, mdev.remove, self.tree.root,
                          '../' + MDEV)
