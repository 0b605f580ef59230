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
"""The grenade plugin (``devstack/upgrade``), as grenade runs it.

Over an all-in-one node the devstack plugin made, with grenade's
functions as recorded stand-ins (``devstack/grenade/`` beside this file).
"""

import subprocess

from cyborg.tests.functional import devstack_plugin as plugin


class TestGrenadePlugin(plugin.PluginTestCase):
    """devstack/upgrade, as grenade runs it, over an all-in-one node."""

    def setUp(self):
        super().setUp()
        self.save_dir = self.tmp / 'save'
        self.save_dir.mkdir()
        self.env.update(
            GRENADE_DIR=str(plugin.GRENADE_STUBS),
            BASE_DEVSTACK_DIR=str(plugin.DEVSTACK_TREE),
            TARGET_DEVSTACK_DIR=str(plugin.DEVSTACK_TREE),
            BASE_DEVSTACK_BRANCH='stable/2026.2',
            TARGET_DEVSTACK_BRANCH='master',
            SAVE_DIR=str(self.save_dir))

    def run_script(self, name, fail=False):
        result = subprocess.run(
            ['bash', str(plugin.PLUGIN_DIR / 'upgrade' / name)], env=self.env,
            capture_output=True, text=True)
        if fail:
            self.assertNotEqual(0, result.returncode, result.stdout)
        elif result.returncode:
            self.fail('%s failed (%d):\n%s' % (name, result.returncode,
                                               result.stderr))
        return self.calls()

    def test_settings(self):
        calls = self._bash(['source %s/functions' % plugin.GRENADE_STUBS,
                            'source %s/upgrade/settings' % plugin.PLUGIN_DIR])
        self.assertEqual([
            ('register_project_for_upgrade', 'cyborg'),
            ('register_db_to_save', 'cyborg'),
            ('devstack_localrc', 'base', 'enable_plugin', 'cyborg',
             'https://opendev.org/openstack/cyborg', '17.0.0'),
            ('devstack_localrc', 'target', 'enable_plugin', 'cyborg',
             str(plugin.REPO), 'main'),
            ('devstack_localrc', 'base', 'enable_service', 'cyborg-api',
             'cyborg-cond', 'cyborg-agent'),
            ('devstack_localrc', 'target', 'enable_service', 'cyborg-api',
             'cyborg-cond', 'cyborg-agent'),
        ], calls)

    def test_shutdown_and_upgrade(self):
        self.stack()
        self.log.write_text('')
        calls = self.run_script('shutdown.sh')
        self.assertEqual([
            ('stop_process', 'cyborg-agent'), ('stop_process', 'cyborg-api'),
            ('stop_process', 'cyborg-cond'),
            ('ensure_services_stopped', 'cyborg-api', 'cyborg-cond',
             'cyborg-agent'),
        ], plugin.named(calls, 'stop_process', 'ensure_services_stopped'))

        config_before = self.conf_file.read_text()
        self.log.write_text('')
        calls = self.run_script('upgrade.sh')
        conf_file = str(self.conf_file)
        self.assertCallsInOrder([
            ('stack_install_service', 'cyborg'),
            ('setup_develop', str(plugin.REPO)),
            ('upgrade_project', 'cyborg', str(plugin.PLUGIN_DIR / 'upgrade'),
             'stable/2026.2', 'master'),
            ('cyborg-dbsync', '--config-file', conf_file, 'upgrade'),
            ('cyborg-status', '--config-file', conf_file, 'upgrade',
             'check'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (plugin.STUB_BIN,
                                                       conf_file)),
            ('run_process', 'cyborg-agent', self.agent_command(conf_file)),
            ('ensure_services_started', 'cyborg-api', 'cyborg-cond',
             'cyborg-agent'),
        ], calls)
        # The base side's configuration is kept, and saved.
        self.assertEqual(config_before, self.conf_file.read_text())
        self.assertEqual(config_before,
                         (self.save_dir / 'etc.cyborg' / 'cyborg.conf')
                         .read_text())
        self.assertEqual([], plugin.named(calls, 'recreate_database', 'die'))

        # Warnings do not stop an upgrade; errors do.
        self.env['STUB_STATUS_RC'] = '1'
        self.run_script('upgrade.sh')
        self.env['STUB_STATUS_RC'] = '2'
        self.log.write_text('')
        calls = self.run_script('upgrade.sh', fail=True)
        self.assertEqual([], plugin.named(calls, 'run_process'))
