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
"""A simulated host outlives its services, as a real one does."""

import os

import fixtures
import testtools

from cyborg.tests import sysfs

HOST = [('intel_fpga', '0000:5e:00.0', {'vfs': 1})]


class TestKeepOrBuild(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'sysfs')

    def test_kept_with_what_happened_to_it(self):
        afu_files = sysfs.keep_or_build(self.root, HOST)
        afu_file = afu_files['0000:5e:00.0']
        with open(afu_file, 'w') as f:
            f.write('loaded\n')
        self.assertEqual(afu_files, sysfs.keep_or_build(self.root, HOST))
        with open(afu_file) as f:
            self.assertEqual('loaded\n', f.read())

    def test_built_again_for_another_host(self):
        afu_file = sysfs.keep_or_build(self.root, HOST)['0000:5e:00.0']
        with open(afu_file, 'w') as f:
            f.write('loaded\n')
        other = HOST + [('intel_qat', '0000:3d:00.0', {'vfs': 1})]
        sysfs.keep_or_build(self.root, other)
        with open(afu_file) as f:
            self.assertNotEqual('loaded\n', f.read())
        self.assertTrue(os.path.exists(os.path.join(
            self.root, 'bus', 'pci', 'devices', '0000:3d:00.0')))
