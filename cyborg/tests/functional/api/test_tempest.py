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
"""cyborg-tempest-plugin, and the demo, against the quickstart's stack.

The quickstart (``tools/quickstart.sh start --keystone --nova``, here
:class:`cyborg.demo.quickstart.Quickstart`) runs once for the class: the
real Keystone, Placement and Glance, Cyborg's API, conductor and agent on
RabbitMQ, and the real Nova behind keystonemiddleware with its Neutron
stand-in. Its demo boots servers with the openstack CLI and a token of
the ``clouds.yaml`` it wrote. Tempest 47.0.0 and cyborg-tempest-plugin
2.8.0 (``tools/setup-client-venvs.sh``) run with the ``tempest.conf`` it
wrote (:mod:`cyborg.demo.tempest_conf`), as the quickstart's summary
says to: the API and SRBAC tests as dynamic credentials' users, and the
scenario tests that boot servers through Nova without logging in to
them (the others are excluded, with why).
"""

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import uuid

import pytest
import requests
import testtools
from testtools import content

from cyborg.demo import nova
from cyborg.demo import quickstart
from cyborg.demo import quickstart_demo
from cyborg.demo import tempest_conf
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional

TEMPEST = cyborg_fixtures.VENVS / 'tempest' / 'bin' / 'tempest'
OSC = cyborg_fixtures.VENVS / 'osc-10.5.0' / 'bin' / 'openstack'
NOVA = cyborg_fixtures.VENVS / ('nova-' + nova.NOVA_VERSION)
#: cyborg-tempest-plugin 2.8.0 has 42 API tests, SRBAC ones included, 3
#: of them excluded, and 2 scenario tests that log in to no guest.
EXPECTED_PASSED = 42 - 3 + 2


# The class starts Nova once for its tests: one pytest-xdist worker runs
# it with the other Nova tests (tools/run-tests.sh: --dist loadgroup).
@pytest.mark.xdist_group('nova')
class TestQuickstartStack(testtools.TestCase):

    qs = None
    skip_reason = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.skip_reason = (cyborg_fixtures.Keystone.missing() or
                           cyborg_fixtures.Glance.missing())
        for needed in (TEMPEST, OSC, NOVA / 'bin' / 'nova-compute'):
            if not cls.skip_reason and not needed.exists():
                cls.skip_reason = ('%s is missing: run tools/setup-client-'
                                   'venvs.sh (tools/run-tests.sh does)' %
                                   needed)
        cls.vhost = 'cyborg-tempest-' + uuid.uuid4().hex[:8]
        rabbit = not cls.skip_reason and functional.vhost(cls.vhost)
        if rabbit is None:
            cls.skip_reason = 'needs rabbitmqctl for a virtual host'
        if cls.skip_reason:
            return
        cls.tmp = tempfile.mkdtemp(prefix='cyborg-tempest-')
        cls.qs = quickstart.Quickstart(
            os.path.join(cls.tmp, 'state'),
            dict(zip(quickstart.PORTS, functional.free_ports(
                len(quickstart.PORTS)))),
            keystone_venv=cyborg_fixtures.Keystone.VENV, nova_venv=NOVA,
            osc=OSC, glance_venv=cyborg_fixtures.Glance.VENV)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                cls.qs.start(rabbit)
        except Exception as e:
            logs = cls.logs()
            cls.tearDownClass()
            raise RuntimeError('%s\n%s\n%s' % (e, out.getvalue(), logs))
        cls.started = out.getvalue()

    @classmethod
    def tearDownClass(cls):
        if cls.qs is not None:
            cls.qs.stop()
        if cls.skip_reason is None:
            functional.rabbitmqctl('delete_vhost', cls.vhost)
            shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        if self.skip_reason:
            self.skipTest(self.skip_reason)
        self.addOnException(lambda exc_info: self.addDetail(
            'service logs', content.text_content(self.logs())))

    @classmethod
    def logs(cls):
        """The end of each service's log, and of Tempest's."""
        text = []
        for directory in (cls.qs.path('logs'),
                          cls.qs.path(tempest_conf.WORKSPACE)):
            names = os.listdir(directory) if os.path.isdir(directory) else []
            for name in sorted(n for n in names if n.endswith('.log')):
                with open(os.path.join(directory, name),
                          errors='replace') as f:
                    lines = [line for line in f
                             if 'log_opt_values' not in line]
                text.append('==== %s\n%s' % (name, ''.join(lines[-150:])))
        return '\n'.join(text)

    def test_demo_boots_with_keystone_tokens(self):
        self.assertIn('== Tempest\'s configuration: %s' % self.qs.path(
            'tempest.conf'), self.started)
        # Nova's API takes Keystone's tokens only.
        self.assertEqual(401, requests.get(
            self.qs.nova.url + '/servers',
            headers={'X-Auth-Token': nova.TOKEN}, timeout=60).status_code)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            booted = self.qs.demo.run_demo()
            self.qs.demo.summary()
        output = out.getvalue()
        self.assertEqual([name for name, _, _ in quickstart_demo.NOVA_DEMO],
                         booted)
        for name, handle in (('vm-fpga', r'PCI \{"bus": "(5e|af)"'),
                             ('vm-vgpu', r'MDEV \{"asked_type": "nvidia-')):
            self.assertIn('== %s is ACTIVE on %s; the fake driver got:' % (
                name, quickstart_demo.HOST), output)
            self.assertRegex(output, r'\(Bound\) ' + handle)
            self.assertIn('== deleted %s' % name, output)
        self.assertIn('OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=%s' % (
            self.qs.path('clouds.yaml'), quickstart_demo.ADMIN_CLOUD),
            output)

    def test_tempest(self):
        # As the quickstart's summary says to run it, one test at a time.
        workspace = self.qs.path(tempest_conf.WORKSPACE)
        result = subprocess.run(
            tempest_conf.command(self.qs.state, str(TEMPEST)) +
            ['--concurrency', '1'],
            capture_output=True, text=True, cwd=workspace, timeout=900)
        self.addDetail('tempest', content.text_content(result.stdout))
        self.assertEqual(0, result.returncode, result.stderr[-4000:])
        totals = dict(re.findall(r'^ - (Passed|Skipped|Failed): (\d+)$',
                                 result.stdout, re.M))
        self.assertEqual({'Passed': str(EXPECTED_PASSED), 'Skipped': '0',
                          'Failed': '0'}, totals)
