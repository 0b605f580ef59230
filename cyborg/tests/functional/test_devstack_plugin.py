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
"""The devstack plugin on each kind of node, and the settings it takes.

Run by :class:`cyborg.tests.functional.devstack_plugin.PluginTestCase`
over recorded stand-ins of devstack's functions. The tests check the
calls, their order, and the ``cyborg.conf`` the plugin writes.
"""

import os
import sqlite3

from keystoneauth1 import loading as ks_loading

from cyborg.db import migration
from cyborg import privsep
from cyborg.tests.functional import devstack_plugin as plugin


class TestDevstackPlugin(plugin.PluginTestCase):

    def test_all_in_one_node(self):
        conf_file, uwsgi_conf = str(self.conf_file), str(self.uwsgi_conf)
        calls = self.stack()

        self.assertCallsInOrder([
            ('setup_develop', str(plugin.REPO)),
            ('pip_install_gr', 'python-cyborgclient'),
            ('echo_summary', 'Configuring Cyborg'),
            ('configure_keystone_authtoken_middleware', conf_file, 'cyborg',
             'keystone_authtoken', 'accelerator'),
            ('write_uwsgi_config', uwsgi_conf, 'cyborg.wsgi.api:application',
             '/accelerator', '', 'cyborg-api'),
            ('create_service_user', 'cyborg'),
            ('get_or_create_service', 'cyborg', 'accelerator',
             'Accelerator lifecycle management'),
            ('get_or_create_endpoint', 'accelerator', 'RegionOne',
             'http://192.0.2.10/accelerator/v2'),
            # The database after local.conf's post-config sections merged.
            ('echo_summary', 'Starting Cyborg'),
            ('recreate_database', 'cyborg'),
            ('cyborg-dbsync', '--config-file', conf_file, 'upgrade'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (plugin.STUB_BIN,
                                                       conf_file)),
            ('run_process', 'cyborg-api',
             '%s/uwsgi --procname-prefix cyborg-api --ini %s' % (
                 plugin.STUB_BIN, uwsgi_conf)),
            ('wait_for_service', '60', 'http://192.0.2.10/accelerator'),
            ('run_process', 'cyborg-agent', self.agent_command(conf_file)),
            ('iniset', str(self.tempest_conf), 'service_available', 'cyborg',
             'True'),
        ], calls)
        self.assertEqual([], plugin.named(calls, 'git_clone', 'die'))

        conf = self.load_cyborg_conf()
        self.assertTrue(conf.debug)
        self.assertEqual('compute-1', conf.host)
        self.assertEqual(str(self.data_dir / 'cyborg'), conf.state_path)
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/',
            conf.transport_url)
        self.assertEqual('sqlite:///%s/cyborg.sqlite' % self.data_dir,
                         conf.database.connection)
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertEqual('accelerator', conf.keystone_authtoken.service_type)
        self.assertTrue(conf.oslo_policy.enforce_new_defaults)
        self.assertEqual(['fake_driver'], conf.agent.enabled_drivers)
        # One conductor worker per core (nproc's count).
        self.assertEqual(len(os.sched_getaffinity(0)),
                         conf.conductor.workers)
        for name in plugin.CREDENTIAL_GROUPS:
            self.assertCredentials(conf[name])
        for name in ('placement', 'nova', 'glance'):
            self.assertEqual('RegionOne', conf[name].region_name)
            self.assertEqual(['internal', 'public'],
                             conf[name].valid_interfaces)
            self.assertIsNone(conf[name].cafile)
            # keystoneauth builds the plugin from the group as it is.
            auth = ks_loading.load_auth_from_conf_options(conf, name)
            self.assertEqual(plugin.KEYSTONE_URI, auth.auth_url)
        self.assertTrue(conf.service_user.send_service_user_token)
        self.assertPrivsep(conf, calls)

        # The real cyborg-dbsync read that file and migrated the database.
        with sqlite3.connect(self.data_dir / 'cyborg.sqlite') as db:
            self.assertEqual(
                [(migration.head(),)],
                db.execute('SELECT version_num FROM alembic_version')
                .fetchall())

        tempest = plugin.read_ini(self.tempest_conf)
        self.assertEqual('True', tempest['service_available']['cyborg'])
        self.assertEqual('True',
                         tempest['cyborg_policy']['enforce_new_defaults'])
        self.assertNotIn('accelerator', tempest)

        self.assertEqual(
            [('stop_process', 'cyborg-agent'), ('stop_process', 'cyborg-api'),
             ('stop_process', 'cyborg-cond')],
            plugin.named(self.unstack(), 'stop_process'))

        self.assertTrue(self.uwsgi_conf.exists())
        calls = self.clean()
        self.assertIn(('remove_uwsgi_config', uwsgi_conf, 'cyborg-api'),
                      calls)
        self.assertFalse(self.conf_dir.exists())
        self.assertFalse((self.data_dir / 'cyborg').exists())
        self.assertFalse(self.sudoers.exists())

    def test_post_config_sections_reach_dbsync_and_services(self):
        # devstack merges [[post-config|$CYBORG_CONF]] between the phases,
        # expanding the variable's name: emulate merge_config_group.
        other_db = self.data_dir / 'merged.sqlite'
        calls = self._run(*plugin.stack_phases('pre-install', 'install',
                                               'post-config'))
        self.assertEqual([], plugin.named(calls, 'recreate_database',
                                          'cyborg-dbsync', 'run_process'))
        self._bash([
            'source %s/settings' % plugin.PLUGIN_DIR,
            'conf=$(eval "echo \\$CYBORG_CONF")',
            '[[ -n "$conf" ]]',
            'iniset "$conf" database connection sqlite:///%s' % other_db,
        ])
        calls = self._run(*plugin.stack_phases('extra'))
        self.assertCallsInOrder([
            ('recreate_database', 'cyborg'),
            ('cyborg-dbsync', '--config-file', str(self.conf_file),
             'upgrade'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (plugin.STUB_BIN,
                                                       self.conf_file)),
        ], calls)
        with sqlite3.connect(other_db) as db:
            self.assertEqual(
                [(migration.head(),)],
                db.execute('SELECT version_num FROM alembic_version')
                .fetchall())

    def test_agent_only_node(self):
        self.env.update(
            ENABLED_SERVICES='rabbit,n-cpu,cyborg-agent',
            LIBS_FROM_GIT='python-cyborgclient',
            CYBORG_ENABLED_DRIVERS='intel_fpga_driver,nvidia_gpu_driver')
        calls = self.stack()

        client_dir = '%s/opt/stack/python-cyborgclient' % self.tmp
        self.assertCallsInOrder([
            ('git_clone', 'https://opendev.org/openstack/python-cyborgclient',
             client_dir, 'master'),
            ('setup_develop', client_dir),
        ], calls)
        # No database, catalog, API or Tempest on a compute node.
        self.assertEqual([], plugin.named(
            calls, 'recreate_database', 'cyborg-dbsync', 'create_service_user',
            'get_or_create_service', 'get_or_create_endpoint',
            'write_uwsgi_config', 'wait_for_service', 'pip_install_gr',
            'configure_keystone_authtoken_middleware', 'die'))
        agent = self.agent_command(self.conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         plugin.named(calls, 'run_process'))
        self.assertFalse(self.tempest_conf.exists())

        conf = self.load_cyborg_conf()
        self.assertEqual(['intel_fpga_driver', 'nvidia_gpu_driver'],
                         conf.agent.enabled_drivers)
        self.assertPrivsep(conf, calls)
        ini = plugin.read_ini(self.conf_file)
        for section in ('database', 'keystone_authtoken', 'api'):
            self.assertNotIn(section, ini)
        self.assertCredentials(conf.service_user)
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/',
            conf.transport_url)

        self.assertEqual([('stop_process', 'cyborg-agent')],
                         plugin.named(self.unstack(), 'stop_process'))
        self.clean()
        self.assertFalse(self.conf_dir.exists())
        self.assertFalse(self.sudoers.exists())

    def test_conductor_only_node(self):
        # A second controller: the database server and Keystone run on the
        # first node.
        self.env.update(ENABLED_SERVICES='rabbit,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], plugin.named(
            calls, 'recreate_database', 'cyborg-dbsync', 'create_service_user',
            'get_or_create_service', 'get_or_create_endpoint',
            'write_uwsgi_config', 'wait_for_service', 'visudo', 'die'))
        conductor = '%s/cyborg-conductor --config-file %s' % (
            plugin.STUB_BIN, self.conf_file)
        self.assertEqual([('run_process', 'cyborg-cond', conductor)],
                         plugin.named(calls, 'run_process'))
        conf = self.load_cyborg_conf()
        self.assertEqual('sqlite:///%s/cyborg.sqlite' % self.data_dir,
                         conf.database.connection)
        self.assertNotIn('keystone_authtoken', plugin.read_ini(self.conf_file))
        self.assertFalse(self.sudoers.exists())
        self.assertFalse((self.data_dir / 'cyborg.sqlite').exists())

        self.assertEqual([('stop_process', 'cyborg-cond')],
                         plugin.named(self.unstack(), 'stop_process'))
        self.clean()
        self.assertFalse(self.conf_dir.exists())

    def test_api_node_without_the_database_server(self):
        self.env.update(ENABLED_SERVICES='key,rabbit,placement-api,'
                                         'cyborg-api,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], plugin.named(calls, 'recreate_database',
                                          'cyborg-dbsync', 'die'))
        self.assertIn(('create_service_user', 'cyborg'), calls)

    def test_services_disabled_in_local_conf_stay_disabled(self):
        # openstack-cyborg's multinode job: the subnode disables the API
        # and the conductor, and enables nothing of Cyborg's itself.
        self.env.update(ENABLED_SERVICES='rabbit,n-cpu',
                        DISABLED_SERVICES='cyborg-api,cyborg-cond')
        calls = self.stack()

        agent = self.agent_command(self.conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         plugin.named(calls, 'run_process'))

    def test_controller_without_agent_has_no_privsep(self):
        self.env.update(ENABLED_SERVICES='key,mysql,rabbit,placement-api,'
                                         'cyborg-api,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], plugin.named(calls, 'visudo', 'die'))
        self.assertFalse(self.sudoers.exists())
        self.assertFalse(self.privsep_conf.exists())
        self.assertFalse(self.privsep_helper.exists())
        ini = plugin.read_ini(self.conf_file)
        for context, _caps in privsep.CONTEXTS:
            self.assertNotIn(context.cfg_section, ini)

    def test_tls_proxy(self):
        bundle = str(self.tmp / 'ca-bundle.pem')
        self.env.update(ENABLED_SERVICES=plugin.ALL_IN_ONE + ',tls-proxy',
                        SSL_BUNDLE_FILE=bundle)
        calls = self.stack()

        self.assertIn(('get_or_create_endpoint', 'accelerator', 'RegionOne',
                       'https://192.0.2.10/accelerator/v2'), calls)
        self.assertIn(('wait_for_service', '60',
                       'https://192.0.2.10/accelerator'), calls)
        conf = self.load_cyborg_conf()
        for name in ('placement', 'nova', 'glance', 'service_user'):
            self.assertEqual(bundle, conf[name].cafile)

    def test_keystone_and_placement_are_required(self):
        for services, missing in (
                ('mysql,rabbit,placement-api', 'Keystone'),
                ('key,mysql,rabbit', 'Placement')):
            self.env.update(ENABLED_SERVICES=services)
            stderr = self._run('stack pre-install', fail=True)
            self.assertIn('cyborg-api needs %s on this node' % missing,
                          stderr)
            self.assertEqual([], plugin.named(self.calls(), 'setup_develop'))
        # Neither is needed where the API does not run.
        self.env.update(ENABLED_SERVICES='rabbit,cyborg-cond,cyborg-agent')
        self.assertEqual([], plugin.named(self._run('stack pre-install'),
                                          'die'))

    def test_enforce_new_defaults(self):
        cases = [
            # (environment, expected)
            ({}, 'True'),
            ({'ENFORCE_NEW_DEFAULTS': 'False'}, 'True'),
            ({'CYBORG_ENFORCE_NEW_DEFAULTS': 'False'}, 'True'),
            ({'ENFORCE_NEW_DEFAULTS': 'False',
              'CYBORG_ENFORCE_NEW_DEFAULTS': 'False'}, 'False'),
            ({'ENFORCE_NEW_DEFAULTS': 'False',
              'CYBORG_ENFORCE_SCOPE': 'False'}, 'False'),
            ({'ENFORCE_NEW_DEFAULTS': 'False',
              'CYBORG_ENFORCE_NEW_DEFAULTS': 'False',
              'CYBORG_ENFORCE_SCOPE': 'True'}, 'True'),
            # A devstack older than ENFORCE_NEW_DEFAULTS.
            ({'ENFORCE_NEW_DEFAULTS': None, 'ENFORCE_SCOPE': 'True',
              'CYBORG_ENFORCE_NEW_DEFAULTS': 'False'}, 'True'),
            ({'ENFORCE_NEW_DEFAULTS': None, 'ENFORCE_SCOPE': 'False',
              'CYBORG_ENFORCE_NEW_DEFAULTS': 'False'}, 'False'),
        ]
        base = dict(self.env)
        for env, expected in cases:
            self.env = dict(base)
            for name, value in env.items():
                if value is None:
                    del self.env[name]
                else:
                    self.env[name] = value
            self._run(*plugin.stack_phases('post-config', 'test-config'))
            ini = plugin.read_ini(self.conf_file)
            self.assertEqual(
                {'enforce_new_defaults': expected},
                dict(ini['oslo_policy']), env)
            self.assertEqual(
                expected,
                plugin.read_ini(self.tempest_conf)['cyborg_policy'][
                    'enforce_new_defaults'], env)

    def test_settings_from_local_conf(self):
        self.env.update(CYBORG_INSTALL_CLIENT='False',
                        CYBORG_VALID_INTERFACES='public',
                        CYBORG_AUTH_STRATEGY='noauth',
                        CYBORG_CONDUCTOR_WORKERS='3')
        calls = self.stack()

        self.assertEqual([], plugin.named(calls, 'pip_install_gr',
                                          'git_clone'))
        conf = self.load_cyborg_conf()
        self.assertEqual(3, conf.conductor.workers)
        self.assertEqual('noauth', conf.api.auth_strategy)
        self.assertEqual(['public'], conf.placement.valid_interfaces)


class TestOpenstackCyborgSettings(plugin.PluginTestCase):
    """What becomes of the settings of openstack-cyborg's plugin."""

    def test_conf_and_client_names(self):
        # A local.conf written for openstack-cyborg's plugin.
        conf_file = self.conf_dir / 'old-name.conf'
        self.env.update(ENABLED_SERVICES='rabbit,n-cpu,cyborg-agent',
                        LIBS_FROM_GIT='python-cyborgclient',
                        CYBORG_CONF=str(conf_file),
                        CYBORG_CLIENT_REPO='https://example.org/client',
                        CYBORG_CLIENT_BRANCH='stable/x')
        calls = self.stack()

        self.assertEqual(
            [('git_clone', 'https://example.org/client',
              '%s/opt/stack/python-cyborgclient' % self.tmp, 'stable/x')],
            plugin.named(calls, 'git_clone'))
        agent = self.agent_command(conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         plugin.named(calls, 'run_process'))
        self.assertFalse(self.conf_file.exists())

        self.env.update(CYBORG_CLIENT_INSTALL='False')
        self.assertEqual([('setup_develop', str(plugin.REPO))],
                         plugin.named(self.stack(), 'git_clone',
                                      'setup_develop'))

    def test_conf_file_is_an_alias_of_conf(self):
        conf_file = self.conf_dir / 'alias.conf'
        self.env.update(CYBORG_CONF_FILE=str(conf_file))
        self._bash([
            'source %s/settings' % plugin.PLUGIN_DIR,
            '[[ "$CYBORG_CONF" == %s ]]' % conf_file,
            '[[ "$CYBORG_CONF_FILE" == %s ]]' % conf_file,
        ])

    def test_accepted_settings(self):
        self.env.update(
            # The values of openstack-cyborg's jobs that ask for nothing.
            ENABLE_PCI_SIM='false', PCI_SIM_CREATE_TEST_FLAVORS='false',
            CYBORG_USE_UWSGI='True',
            TEMPEST_ACCELERATOR_MIN_MICROVERSION='2.0',
            TEMPEST_ACCELERATOR_MAX_MICROVERSION='2.3')
        calls = self.stack()

        self.assertEqual([], plugin.named(calls, 'die'))
        self.assertEqual({'min_microversion': '2.0',
                          'max_microversion': '2.3'},
                         dict(plugin.read_ini(
                             self.tempest_conf)['accelerator']))

    def test_refused_settings(self):
        replacement = {
            'pci': 'CYBORG_ENABLED_DRIVERS=fake_driver',
            'uwsgi': 'The API always runs under uWSGI',
            'port': 'The API has no port of its own',
            'nothing': 'It configured nothing Cyborg has',
        }
        for env, refused, instead in (
                ({'ENABLE_PCI_SIM': 'True'}, 'ENABLE_PCI_SIM=True', 'pci'),
                ({'PCI_SIM_BUILD': 'true'}, 'PCI_SIM_BUILD=true', 'pci'),
                ({'PCI_SIM_NUM_PFS': '2'}, 'PCI_SIM_NUM_PFS=2', 'pci'),
                ({'CYBORG_USE_UWSGI': 'False'}, 'CYBORG_USE_UWSGI=False',
                 'uwsgi'),
                ({'CYBORG_SERVICE_PORT': '6666'}, 'CYBORG_SERVICE_PORT',
                 'port'),
                ({'CYBORG_AUTOMATED_CLEAN_ENABLED': 'True'},
                 'CYBORG_AUTOMATED_CLEAN_ENABLED', 'nothing')):
            # Refused on every kind of node, before anything is installed.
            for services in (plugin.ALL_IN_ONE, 'rabbit,n-cpu,cyborg-agent'):
                self.env = dict(self.env, ENABLED_SERVICES=services)
                env_before = dict(self.env)
                self.env.update(env)
                stderr = self._run(*plugin.stack_phases(), fail=True)
                self.assertIn(
                    "%s: a setting of openstack-cyborg's devstack plugin"
                    % refused, stderr)
                self.assertIn(replacement[instead], stderr)
                self.assertEqual([], plugin.named(self.calls(),
                                                  'setup_develop'))
                self.env = env_before
