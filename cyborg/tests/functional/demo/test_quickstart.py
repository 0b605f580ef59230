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
"""The quickstart end to end: real processes, two simulated boots.

Placement, the image service and Cyborg run as child processes on free
ports, as ``tools/quickstart.sh`` starts them; the demo boots an FPGA
instance (programmed with the demo bitstream by the stand-in fpgaconf)
and a vGPU instance through the Nova simulator, then deletes them.
"""

import contextlib
import io
import os

import fixtures
import openstack

from cyborg.demo import quickstart
from cyborg.tests import base
from cyborg.tests import functional


class TestOptions(base.TestCase):

    def test_before_or_after_the_command(self):
        self.useFixture(fixtures.EnvironmentVariable('CYBORG_STATE'))

        def parsed(*argv):
            args = quickstart._parser().parse_args(argv)
            return args.state, args.api_port, args.glance_port
        self.assertEqual(('.state', 6666, 9292), parsed('status'))
        self.assertEqual(('s', 16666, 9292), parsed(
            'start', '--api-port', '16666', '--state', 's'))
        # After the command wins; what it leaves out stays as before it.
        self.assertEqual(('s', 16666, 19292), parsed(
            '--state', 's', '--api-port', '1', '--glance-port', '19292',
            'start', '--api-port', '16666', '--rabbit', 'rabbit://h/'))


class TestQuickstart(base.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.args = ['--state', self.state]
        for service, port in zip(quickstart.PORTS,
                                 functional.free_ports(len(quickstart.PORTS))):
            self.args += ['--%s-port' % service, str(port)]
        self.addCleanup(self._main, 'stop')

    def _main(self, command, *argv):
        # Options after the command, as tools/quickstart.sh passes them.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = quickstart.main([command] + self.args + list(argv))
        return rc, out.getvalue()

    def _logs(self):
        """The end of each service's log, for a failure's message."""
        logs = os.path.join(self.state, 'logs')
        text = []
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name)) as f:
                text.append('--- %s\n%s' % (name, f.read()[-3000:]))
        return '\n'.join(text)

    def _check_demo(self, output):
        self.assertIn('== devices in Placement', output)
        for name in ('vm-fpga', 'vm-vgpu', 'vm-fake'):
            self.assertIn('== %s booted as' % name, output)
            self.assertIn('== deleting %s: 1 accelerator request(s) '
                          'released' % name, output)
        self.assertIn('<hostdev mode="subsystem" type="pci" managed="yes">',
                      output)
        self.assertIn('<hostdev mode="subsystem" type="mdev" '
                      'model="vfio-pci" managed="no">', output)
        self.assertIn('== vm-fake booted as', output)
        self.assertIn('(nothing: Nova skips TEST_PCI attach handles)',
                      output)

    def _check_titles(self, titles):
        """Each service's process shows its own name in ps, not ``-c``."""
        pids = dict(quickstart.Quickstart(self.state).services())
        for name, title in titles.items():
            with open('/proc/%d/cmdline' % pids[name]) as f:
                cmdline = f.read().replace('\0', ' ')
            self.assertTrue(cmdline.startswith(title), (name, cmdline))

    def test_all_in_one(self):
        rc, output = self._main('start')
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        with open(os.path.join(self.state, 'logs', 'all_in_one.log')) as f:
            self.assertIn('Programming 0000:', f.read())
        rc, status = self._main('status')
        self.assertEqual(0, rc, status)
        for name in ('all_in_one', 'glance', 'placement'):
            self.assertIn('%-12s running' % name, status)
        self._check_titles({'all_in_one': 'cyborg-all-in-one --config-file'})
        # What the openstack CLI's accelerator commands call.
        conn = openstack.connect(
            auth_type='none', load_yaml_config=False, load_envvars=False,
            auth={'endpoint': 'http://127.0.0.1:%s/v2' % self.args[
                self.args.index('--api-port') + 1]})
        self.addCleanup(conn.close)
        self.assertEqual(
            {'demo-fpga-aes', 'demo-vgpu', 'demo-fake-device'},
            {p.name for p in conn.accelerator.device_profiles()})
        # Running it again is safe: the same services, the same demo.
        rc, output = self._main('demo')
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        rc, output = self._main('stop')
        self.assertEqual(0, rc, output)
        for name in ('all_in_one', 'glance', 'placement'):
            self.assertIn('== stopping %s (pid' % name, output)
        self.assertEqual(3, self._main('status')[0])

    def test_separate_processes_on_rabbitmq(self):
        url = os.environ.get('CYBORG_TEST_RABBIT_URL')
        if not url:
            self.skipTest('CYBORG_TEST_RABBIT_URL is not set')
        rc, output = self._main('start', '--rabbit', url)
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        rc, status = self._main('status')
        for name in ('agent', 'api', 'conductor'):
            self.assertIn('%-12s running' % name, status)
        self._check_titles({
            name: 'cyborg-%s: master process [cyborg-%s --config-file' % (
                name, name) for name in ('agent', 'api', 'conductor')})
