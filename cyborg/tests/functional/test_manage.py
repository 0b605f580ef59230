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
"""``cyborg-manage device-profile migrate`` as an operator runs it."""

import subprocess
import sys

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
import testtools

from cyborg import context
from cyborg.db import api as db_api
from cyborg.db import migration
from cyborg.objects import accelerator_request
from cyborg.objects import device_profile
from cyborg.tests import db_utils


class TestMigrateCommand(testtools.TestCase):

    def setUp(self):
        super().setUp()
        state = self.useFixture(fixtures.TempDir()).path
        self.conf = '%s/cyborg.conf' % state
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n' % state)
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite:///%s/cyborg.sqlite' % state)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        migration.upgrade('head', engine=db_api.get_engine())
        self.ctx = context.get_admin_context()
        self.profile = db_utils.create_profile(self.ctx, groups=[
            {'resources:CUSTOM_ACCELERATOR_FPGA': '1',
             'trait:CUSTOM_FPGA_INTEL': 'required'}])
        self.arq = db_utils.create_arqs(self.ctx, self.profile)[0]

    def _manage(self, *args):
        return subprocess.run(
            [sys.executable, '-c',
             'import sys; from cyborg.cmd import manage; '
             'sys.exit(manage.main())', '--config-file', self.conf,
             'device-profile', 'migrate', *args],
            capture_output=True, text=True)

    def _groups(self):
        return device_profile.DeviceProfile.get_by_uuid(
            self.ctx, self.profile.uuid).groups

    def test_dry_run_reports_and_writes_nothing(self):
        result = self._manage('--map', 'custom-accelerator-fpga=FPGA')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('resources:CUSTOM_ACCELERATOR_FPGA -> resources:FPGA',
                      result.stdout)
        self.assertIn('--apply', result.stdout)
        self.assertIn('resources:CUSTOM_ACCELERATOR_FPGA',
                      self._groups()[0])

    def test_apply_rewrites_profiles_not_arqs(self):
        result = self._manage('--map', 'CUSTOM_ACCELERATOR_FPGA=FPGA',
                              '--map', 'CUSTOM_FPGA_INTEL=CUSTOM_FPGA_X',
                              '--apply')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('1 device profile(s) changed', result.stdout)
        self.assertEqual([{'resources:FPGA': '1',
                           'trait:CUSTOM_FPGA_X': 'required'}],
                         self._groups())
        arq = accelerator_request.AcceleratorRequest.get_by_uuid(
            self.ctx, self.arq.uuid)
        self.assertIn('resources:CUSTOM_ACCELERATOR_FPGA',
                      arq.device_profile_group)

    def test_bad_map_is_refused(self):
        result = self._manage('--map', 'no-equals-sign')
        self.assertEqual(2, result.returncode)
        self.assertIn('expected OLD=NEW', result.stderr)
        self.assertNotIn('Traceback', result.stderr)
