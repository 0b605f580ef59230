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
"""``cyborg-dbsync`` as an operator runs it, on a SQLite file."""

import subprocess
import sys

import fixtures
import testtools

from cyborg.db import migration


class TestDBSync(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf = '%s/cyborg.conf' % self.state
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n' % self.state)

    def _dbsync(self, *args, check=True):
        return subprocess.run(
            [sys.executable, '-c',
             'import sys; from cyborg.cmd import dbsync; '
             'sys.exit(dbsync.main())', '--config-file', self.conf, *args],
            capture_output=True, text=True, check=check)

    def test_upgrade_version_stamp(self):
        def output(*args):
            return self._dbsync(*args).stdout.strip()

        self.assertEqual('None (empty database)', output('version'))
        self.assertIn(migration.head(), output('upgrade'))
        self.assertEqual(migration.head(), output('version'))
        output('upgrade')  # again: nothing to do, no error
        output('stamp', '0001')
        self.assertEqual('0001', output('version'))

    def test_unknown_revision_fails_cleanly(self):
        result = self._dbsync('upgrade', '--revision', 'nope', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn("cyborg-dbsync: Can't locate revision", result.stderr)
        self.assertNotIn('Traceback', result.stderr)

    def test_commands_of_openstack_cyborg_17(self):
        # What 17.0.0's guides and deployment tools run.
        result = self._dbsync('online_data_migrations', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('run cyborg-dbsync upgrade first', result.stderr)
        created = self._dbsync('create_schema').stdout
        self.assertIn('created at revision %s' % migration.head(), created)
        result = self._dbsync('create_schema', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('use cyborg-dbsync upgrade', result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        self.assertIn('Nothing to migrate',
                      self._dbsync('online_data_migrations').stdout)
        self._dbsync('stamp', '--revision', '0001')
        self.assertEqual('0001', self._dbsync('version').stdout.strip())
        result = self._dbsync('stamp', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('stamp takes one revision', result.stderr)
