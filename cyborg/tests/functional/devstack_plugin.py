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
``cyborg-dbsync`` is real and migrates a SQLite database.
:class:`PluginTestCase` runs the plugin's phases and gives its tests the
calls, their order, and the ``cyborg.conf`` the plugin writes, loaded
with the options the services register.
"""

import configparser
import fnmatch
import getpass
import os
import pathlib
import subprocess
import sys
import tempfile

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
