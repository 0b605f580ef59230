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
"""A service's first state, made once per virtualenv and copied after.

The real Keystone and Nova that use it are started by the functional
tests; here a build writes files and counts its calls.
"""

import os

import fixtures
import testtools

from cyborg_quickstart import prebuilt


class TestCopyInto(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.venv = self.useFixture(fixtures.TempDir()).path
        self.builds = []

    def build(self, directory):
        self.builds.append(directory)
        with open(os.path.join(directory, 'db'), 'w') as f:
            f.write('built %d' % len(self.builds))
        os.mkdir(os.path.join(directory, 'keys'))
        with open(os.path.join(directory, 'keys', '0'), 'w') as f:
            f.write('key')
        with open(os.path.join(directory, 'left'), 'w') as f:
            f.write('not asked for')

    def copy(self):
        state = self.useFixture(fixtures.TempDir()).path
        prebuilt.copy_into(state, self.venv, 'svc', self.build,
                           ('db', 'keys'))
        return state, sorted(os.listdir(state))

    def kept(self):
        """What the virtualenv keeps, without the locks."""
        return [name for name in os.listdir(os.path.join(
            self.venv, prebuilt.DIRECTORY)) if not name.endswith('.lock')]

    def read(self, state, *path):
        with open(os.path.join(state, *path)) as f:
            return f.read()

    def test_built_once_copied_after(self):
        first, names = self.copy()
        self.assertEqual(['db', 'keys'], names)
        second, _ = self.copy()
        self.assertEqual(1, len(self.builds))
        for state in (first, second):
            self.assertEqual('built 1', self.read(state, 'db'))
            self.assertEqual('key', self.read(state, 'keys', '0'))
        # Built in a directory of its own, kept in the virtualenv.
        self.assertNotIn(self.builds[0], (first, second))
        self.assertEqual(['svc-'], [name[:4] for name in self.kept()])

    def test_built_again_for_other_packages(self):
        self.copy()
        with open(os.path.join(self.venv, prebuilt.INSTALLED), 'w') as f:
            f.write('keystone==31.0.0\n')
        state, _ = self.copy()
        self.assertEqual('built 2', self.read(state, 'db'))
        self.copy()
        self.assertEqual(2, len(self.builds))
        # The first build, of other packages, is gone.
        self.assertEqual(1, len(self.kept()))

    def test_failed_build_leaves_nothing(self):
        def fail(directory):
            self.build(directory)
            raise RuntimeError('db_sync failed')

        state = self.useFixture(fixtures.TempDir()).path
        self.assertRaises(RuntimeError, prebuilt.copy_into, state, self.venv,
                          'svc', fail, ('db',))
        self.assertEqual([], os.listdir(state))
        self.assertEqual([], self.kept())
        # The next caller builds.
        state, _ = self.copy()
        self.assertEqual('built 2', self.read(state, 'db'))
