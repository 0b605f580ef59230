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
"""The devstack plugin, run phase by phase in bash as devstack runs it.

The devstack functions it calls are recorded stand-ins
(``devstack/stubs.sh`` beside this file); ``cyborg-dbsync`` is real and
migrates a SQLite database. The tests check the calls, their order, and the
``cyborg.conf`` the plugin writes, loaded with the options the services
register.
"""

import configparser
import fnmatch
import getpass
import os
import pathlib
import sqlite3
import subprocess
import sys

import fixtures
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import opts as ksm_opts
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_log import log
from oslo_messaging import opts as messaging_opts
from oslo_policy import opts as policy_opts
import testtools

from cyborg.conf import opts as cyborg_opts
from cyborg.db import migration
from cyborg import privsep

REPO = pathlib.Path(__file__).resolve().parents[3]
PLUGIN_DIR = REPO / 'devstack'
STUB_DIR = pathlib.Path(__file__).resolve().parent / 'devstack'
STUB_BIN = STUB_DIR / 'bin'

SERVICE_HOST = '192.0.2.10'
KEYSTONE_URI = 'http://%s/identity' % SERVICE_HOST

# The groups where the plugin writes the cyborg user's password credentials.
CREDENTIAL_GROUPS = ('keystone_authtoken', 'placement', 'nova', 'glance',
                     'service_user')

STACK_STEPS = ('pre-install', 'install', 'post-config', 'extra',
               'test-config')


def named(calls, *names):
    """The calls of the functions or commands with these names."""
    return [call for call in calls if call[0] in names]


def read_ini(path):
    """The sections and options of an ini file, DEFAULT included, as is."""
    parser = configparser.RawConfigParser(default_section=None)
    parser.optionxform = str
    parser.read(path)
    return parser


def load_config(path):
    """Load a cyborg.conf with every option the services register."""
    conf = cfg.ConfigOpts()
    # Groups by name: registering Cyborg's OptGroup objects would share
    # them, and the auth options added below, with the process's CONF.
    for group, opts in cyborg_opts.list_opts():
        name = getattr(group, 'name', group)
        conf.register_opts(opts, group=None if name == 'DEFAULT' else name)
    log.register_options(conf)
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    for group, opts in policy_opts.list_opts():
        conf.register_opts(opts, group=group)
    for group, opts in ksm_opts.list_auth_token_opts():
        conf.register_opts(opts, group=group)
    for group, opts in privsep.list_opts():
        conf.register_opts(opts, group=group)
    password_opts = ks_loading.get_auth_plugin_conf_options('password')
    for group in CREDENTIAL_GROUPS:
        conf.register_opts(password_opts, group=group)
    conf(args=[], default_config_files=[str(path)])
    return conf


class TestDevstackPlugin(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.log = self.tmp / 'calls.log'
        self.data_dir = self.tmp / 'data'
        self.data_dir.mkdir()
        self.conf_dir = self.tmp / 'etc' / 'cyborg'
        self.conf_file = self.conf_dir / 'cyborg.conf'
        self.uwsgi_conf = self.conf_dir / 'cyborg-api-uwsgi.ini'
        self.tempest_conf = self.tmp / 'tempest.conf'
        (self.tmp / 'sudoers.d').mkdir()
        self.sudoers = self.tmp / 'sudoers.d' / 'cyborg-privsep'
        # What stackrc and local.conf give the plugin; nothing else of the
        # caller's environment gets through.
        self.env = {
            'PATH': '%s:%s' % (STUB_BIN, os.environ['PATH']),
            'STUB_LOG': str(self.log),
            'STUB_PYTHON': sys.executable,
            'DEST': str(self.tmp / 'opt' / 'stack'),
            'DATA_DIR': str(self.data_dir),
            'STACK_USER': getpass.getuser(),
            'GIT_BASE': 'https://opendev.org',
            'SERVICE_HOST': SERVICE_HOST,
            'SERVICE_PROTOCOL': 'http',
            'SERVICE_TIMEOUT': '60',
            'KEYSTONE_SERVICE_URI': KEYSTONE_URI,
            'SERVICE_PASSWORD': 'service-secret',
            'SERVICE_PROJECT_NAME': 'service',
            'SERVICE_DOMAIN_NAME': 'Default',
            'REGION_NAME': 'RegionOne',
            'ENABLE_DEBUG_LOG_LEVEL': 'True',
            'ENABLED_SERVICES': ('key,mysql,rabbit,placement-api,g-api,'
                                 'n-api,n-cond,n-sch,n-cpu,tempest'),
            'TEMPEST_CONFIG': str(self.tempest_conf),
            'CYBORG_DIR': str(REPO),
            'CYBORG_CONF_DIR': str(self.conf_dir),
            'CYBORG_HOST': 'compute-1',
            'CYBORG_SUDOERS_FILE': str(self.sudoers),
        }
        if 'PYTHONPATH' in os.environ:
            self.env['PYTHONPATH'] = os.environ['PYTHONPATH']

    def _run(self, *plugin_args):
        """Source the stand-ins and settings, then plugin.sh per phase."""
        script = ['set -eu -o pipefail',
                  'source %s/stubs.sh' % STUB_DIR,
                  'source %s/settings' % PLUGIN_DIR]
        script += ['source %s/plugin.sh %s' % (PLUGIN_DIR, args)
                   for args in plugin_args]
        self.log.write_text('')
        result = subprocess.run(
            ['bash', '-c', '\n'.join(script)], env=self.env,
            capture_output=True, text=True)
        if result.returncode:
            self.fail('devstack phases %s failed (%d):\n%s' % (
                plugin_args, result.returncode, result.stderr))
        return [tuple(line.split('\t'))
                for line in self.log.read_text().splitlines()]

    def stack(self):
        return self._run(*('stack %s' % step for step in STACK_STEPS))

    def unstack(self):
        return self._run('unstack')

    def clean(self):
        return self._run('clean')

    def assertCallsInOrder(self, expected, calls):
        """Each expected call was made, in this order, among others."""
        remaining = iter(calls)
        for call in expected:
            if call not in remaining:
                self.fail('call %s not found in order; calls were:\n%s' % (
                    call, '\n'.join(map(str, calls))))

    def assertCredentials(self, group):
        self.assertEqual('password', group.auth_type)
        self.assertEqual(KEYSTONE_URI, group.auth_url)
        self.assertEqual('cyborg', group.username)
        self.assertEqual('service-secret', group.password)
        self.assertEqual('service', group.project_name)
        self.assertEqual('Default', group.user_domain_name)
        self.assertEqual('Default', group.project_domain_name)

    def load_cyborg_conf(self):
        """Load cyborg.conf, checking that it sets only known options."""
        conf = load_config(self.conf_file)
        parser = read_ini(self.conf_file)
        for section in parser.sections():
            for name in parser.options(section):
                try:
                    group = conf if section == 'DEFAULT' else conf[section]
                    # Reading the value also checks its type.
                    getattr(group, name)
                except cfg.NoSuchOptError:
                    self.fail('cyborg.conf sets unknown option [%s] %s' % (
                        section, name))
        return conf

    def assertPrivsep(self, conf, calls):
        """The agent starts each privileged daemon as sudoers allows it."""
        helper = 'sudo %s/privsep-helper --config-file %s' % (
            STUB_BIN, self.conf_file)
        self.assertEqual(0o440, self.sudoers.stat().st_mode & 0o777)
        rules = [line for line in self.sudoers.read_text().splitlines()
                 if not line.startswith('#')]
        self.assertEqual(len(privsep.CONTEXTS), len(rules))
        self.assertCallsInOrder([
            ('sudo', 'visudo', '-c', '-q', '-f'),
        ], [call[:5] for call in calls])
        self.assertEqual([], named(calls, 'die'))
        # What oslo.privsep runs, with this configuration, for each
        # context, is what one rule allows, and not for another context.
        global_conf = self.useFixture(config_fixture.Config(cfg.CONF))
        sock = '/tmp/tmpab12cd/privsep.sock'
        for context, _caps in privsep.CONTEXTS:
            section = conf[context.cfg_section]
            self.assertEqual(helper, section.helper_command)
            # Each daemon keeps the capabilities of its context.
            self.assertNotIn('capabilities',
                             read_ini(self.conf_file)[context.cfg_section])
            global_conf.config(helper_command=section.helper_command,
                               group=context.cfg_section)
            sudo, *command = context.helper_command(sock)
            self.assertEqual('sudo', sudo)
            allowed = [rule for rule in rules if fnmatch.fnmatchcase(
                '%s ALL=(root) NOPASSWD: %s' % (
                    getpass.getuser(), ' '.join(command)), rule)]
            self.assertEqual(1, len(allowed), (command, rules))

    def test_all_in_one_node(self):
        conf_file, uwsgi_conf = str(self.conf_file), str(self.uwsgi_conf)
        calls = self.stack()

        self.assertCallsInOrder([
            ('setup_develop', str(REPO)),
            ('pip_install_gr', 'python-cyborgclient'),
            ('configure_keystone_authtoken_middleware', conf_file, 'cyborg'),
            ('write_uwsgi_config', uwsgi_conf, 'cyborg.wsgi.api:application',
             '/accelerator', '', 'cyborg-api'),
            ('create_service_user', 'cyborg', 'service'),
            ('get_or_create_service', 'cyborg', 'accelerator',
             'Accelerator lifecycle management'),
            ('get_or_create_endpoint', 'accelerator', 'RegionOne',
             'http://192.0.2.10/accelerator/v2'),
            ('recreate_database', 'cyborg'),
            ('cyborg-dbsync', '--config-file', conf_file, 'upgrade'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (STUB_BIN, conf_file)),
            ('run_process', 'cyborg-api',
             '%s/uwsgi --procname-prefix cyborg-api --ini %s' % (
                 STUB_BIN, uwsgi_conf)),
            ('wait_for_service', '60', 'http://192.0.2.10/accelerator'),
            ('run_process', 'cyborg-agent',
             '%s/cyborg-agent --config-file %s' % (STUB_BIN, conf_file)),
            ('iniset', str(self.tempest_conf), 'service_available', 'cyborg',
             'True'),
        ], calls)
        self.assertEqual([], named(calls, 'git_clone', 'die'))

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
        self.assertFalse(conf.oslo_policy.enforce_new_defaults)
        self.assertEqual(['fake_driver'], conf.agent.enabled_drivers)
        for name in CREDENTIAL_GROUPS:
            self.assertCredentials(conf[name])
        for name in ('placement', 'nova', 'glance'):
            self.assertEqual('RegionOne', conf[name].region_name)
            self.assertEqual(['internal', 'public'],
                             conf[name].valid_interfaces)
            # keystoneauth builds the plugin from the group as it is.
            auth = ks_loading.load_auth_from_conf_options(conf, name)
            self.assertEqual(KEYSTONE_URI, auth.auth_url)
        self.assertTrue(conf.service_user.send_service_user_token)
        self.assertPrivsep(conf, calls)

        # The real cyborg-dbsync read that file and migrated the database.
        with sqlite3.connect(self.data_dir / 'cyborg.sqlite') as db:
            self.assertEqual(
                [(migration.head(),)],
                db.execute('SELECT version_num FROM alembic_version')
                .fetchall())

        tempest = read_ini(self.tempest_conf)
        self.assertEqual('True', tempest['service_available']['cyborg'])
        self.assertEqual('False',
                         tempest['cyborg_policy']['enforce_new_defaults'])

        self.assertEqual(
            [('stop_process', 'cyborg-agent'), ('stop_process', 'cyborg-api'),
             ('stop_process', 'cyborg-cond')],
            named(self.unstack(), 'stop_process'))

        self.assertTrue(self.uwsgi_conf.exists())
        calls = self.clean()
        self.assertIn(('remove_uwsgi_config', uwsgi_conf, 'cyborg-api'),
                      calls)
        self.assertFalse(self.conf_dir.exists())
        self.assertFalse((self.data_dir / 'cyborg').exists())
        self.assertFalse(self.sudoers.exists())

    def test_compute_node_runs_only_the_agent(self):
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
        self.assertEqual([], named(
            calls, 'recreate_database', 'cyborg-dbsync', 'create_service_user',
            'get_or_create_service', 'get_or_create_endpoint',
            'write_uwsgi_config', 'wait_for_service', 'pip_install_gr', 'die'))
        agent = '%s/cyborg-agent --config-file %s' % (STUB_BIN, self.conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         named(calls, 'run_process'))
        self.assertFalse(self.tempest_conf.exists())

        conf = self.load_cyborg_conf()
        self.assertEqual(['intel_fpga_driver', 'nvidia_gpu_driver'],
                         conf.agent.enabled_drivers)
        self.assertPrivsep(conf, calls)
        self.assertNotIn('database', read_ini(self.conf_file))
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/',
            conf.transport_url)

        self.assertEqual([('stop_process', 'cyborg-agent')],
                         named(self.unstack(), 'stop_process'))

    def test_settings_from_local_conf(self):
        self.env.update(ENFORCE_SCOPE='True', CYBORG_INSTALL_CLIENT='False',
                        CYBORG_VALID_INTERFACES='public')
        calls = self.stack()

        self.assertEqual([], named(calls, 'pip_install_gr', 'git_clone'))
        conf = self.load_cyborg_conf()
        self.assertTrue(conf.oslo_policy.enforce_new_defaults)
        self.assertEqual(['public'], conf.placement.valid_interfaces)
        tempest = read_ini(self.tempest_conf)
        self.assertEqual('True',
                         tempest['cyborg_policy']['enforce_new_defaults'])

    def test_controller_without_agent_has_no_privsep(self):
        self.env.update(ENABLED_SERVICES='key,mysql,rabbit,placement-api,'
                                         'cyborg-api,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], named(calls, 'visudo', 'die'))
        self.assertFalse(self.sudoers.exists())
        ini = read_ini(self.conf_file)
        for context, _caps in privsep.CONTEXTS:
            self.assertNotIn(context.cfg_section, ini)

    def test_settings_of_openstack_cyborgs_plugin(self):
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
            named(calls, 'git_clone'))
        agent = '%s/cyborg-agent --config-file %s' % (STUB_BIN, conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         named(calls, 'run_process'))
        self.assertFalse(self.conf_file.exists())

        self.env.update(CYBORG_CLIENT_INSTALL='False')
        self.assertEqual([('setup_develop', str(REPO))],
                         named(self.stack(), 'git_clone', 'setup_develop'))
