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
"""The sudoers rules the devstack plugin writes, in the real sudo.

They allow the privsep helper commands oslo.privsep builds from the
plugin's ``cyborg.conf``, and nothing more.
"""

import os
import shutil
import subprocess
import tempfile
import uuid

from cyborg import privsep
from cyborg.tests.functional import devstack_plugin as plugin


class TestPrivsepSudoersRules(plugin.PluginTestCase):
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
            'source %s/settings' % plugin.PLUGIN_DIR,
            'source %s/lib/cyborg' % plugin.PLUGIN_DIR,
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
        commands = plugin.helper_commands(self.conf_file)
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
