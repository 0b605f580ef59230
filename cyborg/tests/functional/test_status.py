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
"""``cyborg-status upgrade check`` as an operator runs it."""

import json
import subprocess
import sys

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import uuidutils
import testtools

from cyborg import context
from cyborg.db import api as db_api
from cyborg.db import migration
from cyborg.objects import host as host_obj
from cyborg.tests import db_utils

SUCCESS, WARNING, FAILURE = 0, 1, 2


class TestUpgradeCheck(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf = '%s/cyborg.conf' % self.state
        self.nova_conf = '%s/nova.conf' % self.state
        self._write_conf(drivers='fake_driver')
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite:///%s/cyborg.sqlite'
                         % self.state)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.ctx = context.get_admin_context()

    def _write_conf(self, drivers, nova_conf=None, placement_names=None):
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n[agent]\n'
                    'enabled_drivers = %s\n' % (self.state, drivers))
            if placement_names:
                f.write('placement_names = %s\n' % placement_names)
            if nova_conf:
                f.write('[nova]\nnova_conf = %s\n' % nova_conf)

    def _check(self, *extra):
        result = subprocess.run(
            [sys.executable, '-c',
             'import sys; from cyborg.cmd import status; '
             'sys.exit(status.main())', '--config-file', self.conf,
             *extra, 'upgrade', 'check', '--json'],
            capture_output=True, text=True)
        checks = {c['check']: c['details'] for c in
                  json.loads(result.stdout)['checks']}
        return result.returncode, checks

    def _migrate(self):
        migration.upgrade('head', engine=db_api.get_engine())

    def test_schema_behind_fails(self):
        code, checks = self._check()
        self.assertEqual(FAILURE, code)
        self.assertIn('cyborg-dbsync upgrade',
                      checks['Database schema'])
        self.assertIn('Skipped', checks['Device profiles'])

    def test_all_good(self):
        self._migrate()
        _, dep, _ = db_utils.create_device_tree(self.ctx)
        for key, value in (('rc', 'FPGA'), ('trait0', 'CUSTOM_FPGA_INTEL')):
            db_api.create(self.ctx, 'attribute', {
                'deployable_id': dep.id, 'key': key, 'value': value})
        db_utils.create_profile(self.ctx)
        code, checks = self._check()
        self.assertEqual(SUCCESS, code, checks)
        self.assertIn('Skipped',
                      checks['PCI whitelist coexistence'])

    def test_profile_nobody_can_serve_warns(self):
        self._migrate()
        db_utils.create_profile(self.ctx, name='lonely', groups=[
            {'resources:CUSTOM_NOPE': '1',
             'trait:CUSTOM_MISSING': 'required',
             'trait:CUSTOM_AVOIDED': 'forbidden'}])
        code, checks = self._check()
        self.assertEqual(WARNING, code)
        details = checks['Device profiles']
        self.assertIn('lonely', details)
        self.assertIn('CUSTOM_MISSING', details)
        self.assertIn('CUSTOM_NOPE', details)
        self.assertNotIn('CUSTOM_AVOIDED', details)

    def test_profiles_that_descriptive_names_would_break(self):
        # A profile written for 17.0.0, whose names the agents report by
        # default: the check tells what descriptive names would drop.
        self._migrate()
        _, dep, _ = db_utils.create_device_tree(self.ctx)
        for key, value in (('rc', 'CUSTOM_NIC'), ('trait0', 'CUSTOM_VF'),
                           ('trait1', 'CUSTOM_NVIDIA_1EB8'),
                           ('trait2', 'CUSTOM_FPGA_INTEL')):
            db_api.create(self.ctx, 'attribute', {
                'deployable_id': dep.id, 'key': key, 'value': value})
        db_utils.create_profile(self.ctx, name='old-nic', groups=[
            {'resources:CUSTOM_NIC': '1', 'trait:CUSTOM_VF': 'required'}])
        db_utils.create_profile(self.ctx, name='old-gpu', groups=[
            {'resources:CUSTOM_NIC': '1',
             'trait:CUSTOM_NVIDIA_1EB8': 'required'}])
        db_utils.create_profile(self.ctx, name='fpga', groups=[
            {'resources:CUSTOM_NIC': '1',
             'trait:CUSTOM_FPGA_INTEL': 'required'}])
        code, checks = self._check()
        self.assertEqual(SUCCESS, code, checks)
        details = checks['Device profiles']
        self.assertIn('old-nic: CUSTOM_NIC, CUSTOM_VF', details)
        self.assertIn('old-gpu: CUSTOM_NIC, CUSTOM_NVIDIA_1EB8', details)
        self.assertNotIn('CUSTOM_FPGA_INTEL', details)
        self.assertIn('--map CUSTOM_NIC=CUSTOM_NIC_VF '
                      '--map CUSTOM_NVIDIA_1EB8=CUSTOM_GPU_PRODUCT_ID_1EB8',
                      details)
        self.assertIn('the descriptive names of CUSTOM_VF depend on the '
                      'device', details)
        self._write_conf(drivers='fake_driver',
                         placement_names='descriptive')
        code, checks = self._check()
        self.assertEqual(WARNING, code, checks)
        self.assertIn('old-nic', checks['Device profiles'])

    def test_nova_whitelist_overlap_warns(self):
        self._migrate()
        with open(self.nova_conf, 'w') as f:
            f.write('[pci]\npassthrough_whitelist = '
                    '{"vendor_id": "8086", "product_id": "09c4"}\n'
                    'passthrough_whitelist = '
                    '[{"vendor_id": "15b3", "product_id": "1018"}]\n')
        self._write_conf(drivers='intel_fpga_driver,fake_driver',
                         nova_conf=self.nova_conf)
        code, checks = self._check()
        self.assertEqual(WARNING, code)
        details = checks['PCI whitelist coexistence']
        self.assertIn('intel_fpga_driver claims 8086:09c4', details)
        self.assertNotIn('15b3', details)

    def test_command_line_names_nova_conf(self):
        self._migrate()
        with open(self.nova_conf, 'w') as f:
            f.write('[pci]\ndevice_spec = {"vendor_id": "10de"}\n')
        self._write_conf(drivers='nvidia_gpu_driver')
        code, checks = self._check('--nova-conf', self.nova_conf)
        self.assertEqual(WARNING, code)
        self.assertIn('nvidia_gpu_driver claims 10de:*',
                      checks['PCI whitelist coexistence'])

    def test_unreadable_nova_whitelist_fails(self):
        self._migrate()
        with open(self.nova_conf, 'w') as f:
            f.write('[pci]\ndevice_spec = {not json\n')
        code, checks = self._check('--nova-conf', self.nova_conf)
        self.assertEqual(FAILURE, code)
        self.assertIn('Cannot read',
                      checks['PCI whitelist coexistence'])

    def test_hosts_with_a_cyborg17_agent_warn(self):
        self._migrate()
        code, checks = self._check()
        self.assertIn('No compute host',
                      checks['openstack-cyborg 17.0.0 agents'])
        host_obj.Host.set_cyborg17_agent(self.ctx, 'old.example.org',
                                         uuidutils.generate_uuid(),
                                         'old.example.org')
        host_obj.Host.set_compute_rp(self.ctx, 'new.example.org',
                                     uuidutils.generate_uuid(),
                                     'new.example.org')
        code, checks = self._check()
        self.assertEqual(WARNING, code, checks)
        details = checks['openstack-cyborg 17.0.0 agents']
        self.assertIn('old.example.org', details)
        self.assertNotIn('new.example.org', details)
        self.assertIn('upgrade cyborg-agent', details)
