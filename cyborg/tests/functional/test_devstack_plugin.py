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

The devstack and grenade functions it calls are recorded stand-ins
(``devstack/stubs.sh`` and ``devstack/grenade/`` beside this file);
``cyborg-dbsync`` is real and migrates a SQLite database. The tests check
the calls, their order, and the ``cyborg.conf`` the plugin writes, loaded
with the options the services register. One test installs the sudoers
rules the plugin writes into the real sudo and asks it what they allow.
"""

import configparser
import fnmatch
import getpass
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid

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
GRENADE_STUBS = STUB_DIR / 'grenade'
DEVSTACK_TREE = STUB_DIR / 'tree'

SERVICE_HOST = '192.0.2.10'
KEYSTONE_URI = 'http://%s/identity' % SERVICE_HOST

# The groups where the plugin writes the cyborg user's password credentials.
CREDENTIAL_GROUPS = ('keystone_authtoken', 'placement', 'nova', 'glance',
                     'service_user')

STACK_STEPS = ('pre-install', 'install', 'post-config', 'extra',
               'test-config')

# What devstack's stackrc and local.conf give a node: its services, and
# devstack's database backends, of which the node runs the enabled one.
ALL_IN_ONE = ('key,mysql,rabbit,placement-api,g-api,n-api,n-cond,n-sch,'
              'n-cpu,tempest')
CONTROLLER = 'key,mysql,rabbit,placement-api,g-api,n-api,n-cond,n-sch'


def stack_phases(*steps):
    return ['stack %s' % step for step in steps or STACK_STEPS]


def helper_commands(conf_file):
    """What oslo.privsep runs for each context with this cyborg.conf.

    The socket is where oslo.privsep makes it: privsep.sock in a new
    temporary directory.
    """
    ini = read_ini(conf_file)
    global_conf = config_fixture.Config(cfg.CONF)
    global_conf.setUp()
    try:
        commands = {}
        for context, _caps in privsep.CONTEXTS:
            global_conf.config(
                helper_command=ini[context.cfg_section]['helper_command'],
                group=context.cfg_section)
            sock_dir = tempfile.mkdtemp()
            os.rmdir(sock_dir)
            commands[context.cfg_section] = context.helper_command(
                os.path.join(sock_dir, 'privsep.sock'))
        return commands
    finally:
        global_conf.cleanUp()


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
    # The password plugin's options, where the file sets credentials (an
    # agent-only node has no [keystone_authtoken]).
    password_opts = ks_loading.get_auth_plugin_conf_options('password')
    sections = read_ini(path).sections()
    for group in CREDENTIAL_GROUPS:
        if group in sections:
            conf.register_opts(password_opts, group=group)
    conf(args=[], default_config_files=[str(path)])
    return conf


class PluginTestCase(testtools.TestCase):

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
        # Root's, outside the directories $STACK_USER owns.
        self.privsep_dir = self.tmp / 'etc' / 'cyborg-privsep'
        self.privsep_conf = self.privsep_dir / 'cyborg.conf'
        self.privsep_helper = self.tmp / 'libexec' / 'privsep-helper'
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
            # stackrc's defaults today.
            'ENFORCE_NEW_DEFAULTS': 'True',
            'DATABASE_BACKENDS': ' mysql postgresql',
            'ENABLED_SERVICES': ALL_IN_ONE,
            'TEMPEST_CONFIG': str(self.tempest_conf),
            'CYBORG_DIR': str(REPO),
            'CYBORG_CONF_DIR': str(self.conf_dir),
            'CYBORG_HOST': 'compute-1',
            'CYBORG_SUDOERS_FILE': str(self.sudoers),
            'CYBORG_PRIVSEP_CONF_DIR': str(self.privsep_dir),
            'CYBORG_PRIVSEP_HELPER': str(self.privsep_helper),
        }
        if 'PYTHONPATH' in os.environ:
            self.env['PYTHONPATH'] = os.environ['PYTHONPATH']

    def _bash(self, lines, fail=False):
        """Run these bash lines after the stand-ins, as devstack would."""
        script = ['set -eu -o pipefail',
                  'source %s/stubs.sh' % STUB_DIR] + list(lines)
        self.log.write_text('')
        result = subprocess.run(
            ['bash', '-c', '\n'.join(script)], env=self.env,
            capture_output=True, text=True)
        if fail:
            self.assertNotEqual(0, result.returncode, result.stdout)
            return result.stderr
        if result.returncode:
            self.fail('%s failed (%d):\n%s' % (
                lines[-1], result.returncode, result.stderr))
        return self.calls()

    def calls(self):
        return [tuple(line.split('\t'))
                for line in self.log.read_text().splitlines()]

    def _run(self, *plugin_args, fail=False):
        """Source the settings, then plugin.sh per phase."""
        return self._bash(
            ['source %s/settings' % PLUGIN_DIR] +
            ['source %s/plugin.sh %s' % (PLUGIN_DIR, args)
             for args in plugin_args], fail=fail)

    def stack(self):
        return self._run(*stack_phases())

    def unstack(self):
        return self._run('unstack')

    def clean(self):
        return self._run('clean')

    def agent_command(self, conf_file):
        """The agent's command line: cyborg.conf, then its own file."""
        return '%s/cyborg-agent --config-file %s --config-file %s' % (
            STUB_BIN, conf_file, self.conf_dir / 'cyborg-agent.conf')

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

    def load_cyborg_conf(self, path=None):
        """Load cyborg.conf, checking that it sets only known options."""
        path = path or self.conf_file
        conf = load_config(path)
        parser = read_ini(path)
        for section in parser.sections():
            for name in parser.options(section):
                try:
                    group = conf if section == 'DEFAULT' else conf[section]
                    # Reading the value also checks its type.
                    getattr(group, name)
                except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
                    self.fail('cyborg.conf sets unknown option [%s] %s' % (
                        section, name))
        return conf

    def assertPrivsep(self, conf, calls):
        """The agent starts each privileged daemon as sudoers allows it.

        The rules name a program and a configuration root owns, in
        directories root owns: not the stack user's cyborg.conf nor its
        console scripts, which would let it choose what root runs.
        """
        helper = 'sudo %s --config-file %s' % (self.privsep_helper,
                                               self.privsep_conf)
        self.assertEqual(0o440, self.sudoers.stat().st_mode & 0o777)
        rules = [line for line in self.sudoers.read_text().splitlines()
                 if not line.startswith('#')]
        self.assertEqual(len(privsep.CONTEXTS), len(rules))
        for rule in rules:
            self.assertNotIn(str(self.conf_dir) + '/', rule)
            self.assertNotIn(str(STUB_BIN) + '/', rule)
        self.assertCallsInOrder([
            ('sudo', 'install', '-d', '-o', 'root', '-g', 'root', '-m',
             '0755', str(self.privsep_helper.parent)),
            ('sudo', 'visudo'),
            ('sudo', 'install', '-d', '-o', 'root', '-g', 'root', '-m',
             '0755', str(self.privsep_dir)),
            ('sudo', 'install', '-o', 'root', '-g', 'root', '-m', '0600',
             str(self.conf_file), str(self.privsep_conf)),
            ('run_process', 'cyborg-agent'),
        ], [call[:10] if call[:2] == ('sudo', 'install') else call[:2]
            for call in calls])
        self.assertIn(('sudo', 'install', '-o', 'root', '-g', 'root', '-m',
                       '0755', str(self.privsep_helper)),
                      [call[:8] + call[9:] for call in calls
                       if call[:2] == ('sudo', 'install')])
        self.assertEqual(0o755, self.privsep_helper.stat().st_mode & 0o777)
        self.assertIn('exec %s/privsep-helper "$@"' % STUB_BIN,
                      self.privsep_helper.read_text())
        # The daemons read what the agent reads, as devstack left it.
        self.assertEqual(0o600, self.privsep_conf.stat().st_mode & 0o777)
        self.assertEqual(self.conf_file.read_text(),
                         self.privsep_conf.read_text())
        self.assertEqual([], named(calls, 'die'))
        for context, _caps in privsep.CONTEXTS:
            section = conf[context.cfg_section]
            self.assertEqual(helper, section.helper_command)
            # Each daemon keeps the capabilities of its context.
            self.assertNotIn('capabilities',
                             read_ini(self.conf_file)[context.cfg_section])
        # What oslo.privsep runs, with this configuration, for each
        # context, is what one rule allows (sudo's wildcards are
        # fnmatch's), and not for another context nor with more.
        user = getpass.getuser()
        for section, command in helper_commands(self.conf_file).items():
            self.assertEqual('sudo', command[0])
            line = '%s ALL=(root) NOPASSWD: %s' % (user,
                                                   ' '.join(command[1:]))
            allowed = [rule for rule in rules
                       if fnmatch.fnmatchcase(line, rule)]
            self.assertEqual(1, len(allowed), (command, rules))
            self.assertIn(section.replace('privsep_', '.'), allowed[0])
            for more in (' --config-file /tmp/evil.conf', 'x', ' '):
                self.assertEqual([], [
                    rule for rule in rules
                    if fnmatch.fnmatchcase(line + more, rule)])


class TestDevstackPlugin(PluginTestCase):

    def test_all_in_one_node(self):
        conf_file, uwsgi_conf = str(self.conf_file), str(self.uwsgi_conf)
        calls = self.stack()

        self.assertCallsInOrder([
            ('setup_develop', str(REPO)),
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
             '%s/cyborg-conductor --config-file %s' % (STUB_BIN, conf_file)),
            ('run_process', 'cyborg-api',
             '%s/uwsgi --procname-prefix cyborg-api --ini %s' % (
                 STUB_BIN, uwsgi_conf)),
            ('wait_for_service', '60', 'http://192.0.2.10/accelerator'),
            ('run_process', 'cyborg-agent', self.agent_command(conf_file)),
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
        self.assertEqual('accelerator', conf.keystone_authtoken.service_type)
        self.assertTrue(conf.oslo_policy.enforce_new_defaults)
        self.assertEqual(['fake_driver'], conf.agent.enabled_drivers)
        for name in CREDENTIAL_GROUPS:
            self.assertCredentials(conf[name])
        for name in ('placement', 'nova', 'glance'):
            self.assertEqual('RegionOne', conf[name].region_name)
            self.assertEqual(['internal', 'public'],
                             conf[name].valid_interfaces)
            self.assertIsNone(conf[name].cafile)
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
        self.assertEqual('True',
                         tempest['cyborg_policy']['enforce_new_defaults'])
        self.assertNotIn('accelerator', tempest)

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

    def test_post_config_sections_reach_dbsync_and_services(self):
        # devstack merges [[post-config|$CYBORG_CONF]] between the phases,
        # expanding the variable's name: emulate merge_config_group.
        other_db = self.data_dir / 'merged.sqlite'
        calls = self._run(*stack_phases('pre-install', 'install',
                                        'post-config'))
        self.assertEqual([], named(calls, 'recreate_database',
                                   'cyborg-dbsync', 'run_process'))
        self._bash([
            'source %s/settings' % PLUGIN_DIR,
            'conf=$(eval "echo \\$CYBORG_CONF")',
            '[[ -n "$conf" ]]',
            'iniset "$conf" database connection sqlite:///%s' % other_db,
        ])
        calls = self._run(*stack_phases('extra'))
        self.assertCallsInOrder([
            ('recreate_database', 'cyborg'),
            ('cyborg-dbsync', '--config-file', str(self.conf_file),
             'upgrade'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (STUB_BIN,
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
        self.assertEqual([], named(
            calls, 'recreate_database', 'cyborg-dbsync', 'create_service_user',
            'get_or_create_service', 'get_or_create_endpoint',
            'write_uwsgi_config', 'wait_for_service', 'pip_install_gr',
            'configure_keystone_authtoken_middleware', 'die'))
        agent = self.agent_command(self.conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         named(calls, 'run_process'))
        self.assertFalse(self.tempest_conf.exists())

        conf = self.load_cyborg_conf()
        self.assertEqual(['intel_fpga_driver', 'nvidia_gpu_driver'],
                         conf.agent.enabled_drivers)
        self.assertPrivsep(conf, calls)
        ini = read_ini(self.conf_file)
        for section in ('database', 'keystone_authtoken', 'api'):
            self.assertNotIn(section, ini)
        self.assertCredentials(conf.service_user)
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/',
            conf.transport_url)

        self.assertEqual([('stop_process', 'cyborg-agent')],
                         named(self.unstack(), 'stop_process'))
        self.clean()
        self.assertFalse(self.conf_dir.exists())
        self.assertFalse(self.sudoers.exists())

    def test_conductor_only_node(self):
        # A second controller: the database server and Keystone run on the
        # first node.
        self.env.update(ENABLED_SERVICES='rabbit,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], named(
            calls, 'recreate_database', 'cyborg-dbsync', 'create_service_user',
            'get_or_create_service', 'get_or_create_endpoint',
            'write_uwsgi_config', 'wait_for_service', 'visudo', 'die'))
        conductor = '%s/cyborg-conductor --config-file %s' % (
            STUB_BIN, self.conf_file)
        self.assertEqual([('run_process', 'cyborg-cond', conductor)],
                         named(calls, 'run_process'))
        conf = self.load_cyborg_conf()
        self.assertEqual('sqlite:///%s/cyborg.sqlite' % self.data_dir,
                         conf.database.connection)
        self.assertNotIn('keystone_authtoken', read_ini(self.conf_file))
        self.assertFalse(self.sudoers.exists())
        self.assertFalse((self.data_dir / 'cyborg.sqlite').exists())

        self.assertEqual([('stop_process', 'cyborg-cond')],
                         named(self.unstack(), 'stop_process'))
        self.clean()
        self.assertFalse(self.conf_dir.exists())

    def test_api_node_without_the_database_server(self):
        self.env.update(ENABLED_SERVICES='key,rabbit,placement-api,'
                                         'cyborg-api,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], named(calls, 'recreate_database',
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
                         named(calls, 'run_process'))

    def test_controller_without_agent_has_no_privsep(self):
        self.env.update(ENABLED_SERVICES='key,mysql,rabbit,placement-api,'
                                         'cyborg-api,cyborg-cond')
        calls = self.stack()

        self.assertEqual([], named(calls, 'visudo', 'die'))
        self.assertFalse(self.sudoers.exists())
        self.assertFalse(self.privsep_conf.exists())
        self.assertFalse(self.privsep_helper.exists())
        ini = read_ini(self.conf_file)
        for context, _caps in privsep.CONTEXTS:
            self.assertNotIn(context.cfg_section, ini)

    def test_tls_proxy(self):
        bundle = str(self.tmp / 'ca-bundle.pem')
        self.env.update(ENABLED_SERVICES=ALL_IN_ONE + ',tls-proxy',
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
            self.assertEqual([], named(self.calls(), 'setup_develop'))
        # Neither is needed where the API does not run.
        self.env.update(ENABLED_SERVICES='rabbit,cyborg-cond,cyborg-agent')
        self.assertEqual([], named(self._run('stack pre-install'), 'die'))

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
            self._run(*stack_phases('post-config', 'test-config'))
            ini = read_ini(self.conf_file)
            self.assertEqual(
                {'enforce_new_defaults': expected},
                dict(ini['oslo_policy']), env)
            self.assertEqual(
                expected,
                read_ini(self.tempest_conf)['cyborg_policy'][
                    'enforce_new_defaults'], env)

    def test_settings_from_local_conf(self):
        self.env.update(CYBORG_INSTALL_CLIENT='False',
                        CYBORG_VALID_INTERFACES='public',
                        CYBORG_AUTH_STRATEGY='noauth')
        calls = self.stack()

        self.assertEqual([], named(calls, 'pip_install_gr', 'git_clone'))
        conf = self.load_cyborg_conf()
        self.assertEqual('noauth', conf.api.auth_strategy)
        self.assertEqual(['public'], conf.placement.valid_interfaces)


class TestOpenstackCyborgSettings(PluginTestCase):
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
            named(calls, 'git_clone'))
        agent = self.agent_command(conf_file)
        self.assertEqual([('run_process', 'cyborg-agent', agent)],
                         named(calls, 'run_process'))
        self.assertFalse(self.conf_file.exists())

        self.env.update(CYBORG_CLIENT_INSTALL='False')
        self.assertEqual([('setup_develop', str(REPO))],
                         named(self.stack(), 'git_clone', 'setup_develop'))

    def test_conf_file_is_an_alias_of_conf(self):
        conf_file = self.conf_dir / 'alias.conf'
        self.env.update(CYBORG_CONF_FILE=str(conf_file))
        self._bash([
            'source %s/settings' % PLUGIN_DIR,
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

        self.assertEqual([], named(calls, 'die'))
        self.assertEqual({'min_microversion': '2.0',
                          'max_microversion': '2.3'},
                         dict(read_ini(self.tempest_conf)['accelerator']))

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
            for services in (ALL_IN_ONE, 'rabbit,n-cpu,cyborg-agent'):
                self.env = dict(self.env, ENABLED_SERVICES=services)
                env_before = dict(self.env)
                self.env.update(env)
                stderr = self._run(*stack_phases(), fail=True)
                self.assertIn(
                    "%s: a setting of openstack-cyborg's devstack plugin"
                    % refused, stderr)
                self.assertIn(replacement[instead], stderr)
                self.assertEqual([], named(self.calls(), 'setup_develop'))
                self.env = env_before


class TestGrenadePlugin(PluginTestCase):
    """devstack/upgrade, as grenade runs it, over an all-in-one node."""

    def setUp(self):
        super().setUp()
        self.save_dir = self.tmp / 'save'
        self.save_dir.mkdir()
        self.env.update(
            GRENADE_DIR=str(GRENADE_STUBS),
            BASE_DEVSTACK_DIR=str(DEVSTACK_TREE),
            TARGET_DEVSTACK_DIR=str(DEVSTACK_TREE),
            BASE_DEVSTACK_BRANCH='stable/2026.2',
            TARGET_DEVSTACK_BRANCH='master',
            SAVE_DIR=str(self.save_dir))

    def run_script(self, name, fail=False):
        result = subprocess.run(
            ['bash', str(PLUGIN_DIR / 'upgrade' / name)], env=self.env,
            capture_output=True, text=True)
        if fail:
            self.assertNotEqual(0, result.returncode, result.stdout)
        elif result.returncode:
            self.fail('%s failed (%d):\n%s' % (name, result.returncode,
                                               result.stderr))
        return self.calls()

    def test_settings(self):
        calls = self._bash(['source %s/functions' % GRENADE_STUBS,
                            'source %s/upgrade/settings' % PLUGIN_DIR])
        self.assertEqual([
            ('register_project_for_upgrade', 'cyborg'),
            ('register_db_to_save', 'cyborg'),
            ('devstack_localrc', 'base', 'enable_plugin', 'cyborg',
             'https://opendev.org/openstack/cyborg', '17.0.0'),
            ('devstack_localrc', 'target', 'enable_plugin', 'cyborg',
             str(REPO), 'main'),
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
        ], named(calls, 'stop_process', 'ensure_services_stopped'))

        config_before = self.conf_file.read_text()
        self.log.write_text('')
        calls = self.run_script('upgrade.sh')
        conf_file = str(self.conf_file)
        self.assertCallsInOrder([
            ('stack_install_service', 'cyborg'),
            ('setup_develop', str(REPO)),
            ('upgrade_project', 'cyborg', str(PLUGIN_DIR / 'upgrade'),
             'stable/2026.2', 'master'),
            ('cyborg-dbsync', '--config-file', conf_file, 'upgrade'),
            ('cyborg-status', '--config-file', conf_file, 'upgrade',
             'check'),
            ('run_process', 'cyborg-cond',
             '%s/cyborg-conductor --config-file %s' % (STUB_BIN, conf_file)),
            ('run_process', 'cyborg-agent', self.agent_command(conf_file)),
            ('ensure_services_started', 'cyborg-api', 'cyborg-cond',
             'cyborg-agent'),
        ], calls)
        # The base side's configuration is kept, and saved.
        self.assertEqual(config_before, self.conf_file.read_text())
        self.assertEqual(config_before,
                         (self.save_dir / 'etc.cyborg' / 'cyborg.conf')
                         .read_text())
        self.assertEqual([], named(calls, 'recreate_database', 'die'))

        # Warnings do not stop an upgrade; errors do.
        self.env['STUB_STATUS_RC'] = '1'
        self.run_script('upgrade.sh')
        self.env['STUB_STATUS_RC'] = '2'
        self.log.write_text('')
        calls = self.run_script('upgrade.sh', fail=True)
        self.assertEqual([], named(calls, 'run_process'))


class TestPrivsepSudoersRules(PluginTestCase):
    """The plugin's sudoers rules in the real sudo, for a throwaway user.

    Needs root (to add the user and the rules) and sudo 1.8 or newer.
    """

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest('needs root to install sudoers rules')
        for command in ('sudo', 'visudo', 'useradd', 'userdel'):
            if not shutil.which(command):
                self.skipTest('needs %s' % command)
        if not os.path.isdir('/etc/sudoers.d'):
            self.skipTest('needs /etc/sudoers.d')
        self.user = 'cyb-test-%s' % uuid.uuid4().hex[:8]
        subprocess.run(['useradd', '--system', '--no-create-home',
                        '--shell', '/usr/sbin/nologin', self.user],
                       check=True)
        self.addCleanup(subprocess.run, ['userdel', self.user], check=True)
        # The path sudo checks the commands against must exist.
        bin_dir = self.tmp / 'bin'
        bin_dir.mkdir()
        helper = bin_dir / 'privsep-helper'
        helper.write_text('#!/bin/sh\nexit 0\n')
        helper.chmod(0o755)
        self.bin_dir = bin_dir

    def sudo_allows(self, command):
        result = subprocess.run(['sudo', '-n', '-l', '-U', self.user] +
                                command, capture_output=True, text=True)
        return result.returncode == 0

    def test_rules_allow_the_helper_commands_only(self):
        helper_path = self.bin_dir / 'privsep-helper'
        self.env.update(STACK_USER=self.user,
                        CYBORG_PRIVSEP_TMPDIR=tempfile.gettempdir(),
                        CYBORG_PRIVSEP_HELPER=str(helper_path),
                        PATH=os.environ['PATH'])
        rules = self.tmp / 'rules'
        self._bash([
            'source %s/settings' % PLUGIN_DIR,
            'source %s/lib/cyborg' % PLUGIN_DIR,
            'cyborg_privsep_sudoers_rules > %s' % rules,
        ])
        subprocess.run(['visudo', '-c', '-q', '-f', str(rules)], check=True)
        installed = '/etc/sudoers.d/%s' % self.user
        shutil.copyfile(rules, installed)
        self.addCleanup(os.remove, installed)
        os.chmod(installed, 0o440)

        # cyborg.conf as the plugin writes it, for oslo.privsep to build
        # the commands from.
        self.conf_dir.mkdir(parents=True)
        helper = 'sudo %s --config-file %s' % (helper_path,
                                               self.privsep_conf)
        self.conf_file.write_text(''.join(
            '[%s]\nhelper_command = %s\n' % (context.cfg_section, helper)
            for context, _caps in privsep.CONTEXTS))
        commands = helper_commands(self.conf_file)
        self.assertEqual(len(privsep.CONTEXTS), len(commands))
        for command in commands.values():
            self.assertEqual('sudo', command[0])
            command = command[1:]
            self.assertTrue(self.sudo_allows(command), command)
            sock = command[-1]
            for refused in (
                    command + ['--config-file', '/tmp/evil.conf'],
                    command[:-1] + [sock + ' --config-file /tmp/evil.conf'],
                    command[:-1] + [sock.replace('privsep.sock',
                                                 'x/privsep.sock')],
                    command[:2] + ['/tmp/evil.conf'] + command[3:],
                    command[:1] + ['--config-file', '/tmp/evil.conf'] +
                    command[1:]):
                self.assertFalse(self.sudo_allows(refused), refused)
        # Only Cyborg's contexts: another one would run other code as root.
        command = list(commands.values())[0][1:]
        command[command.index('--privsep_context') + 1] = (
            'os_brick.privileged.default')
        self.assertFalse(self.sudo_allows(command), command)
