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
"""``cyborg-api`` as an operator runs it: its own processes on a port."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fixtures
import sqlalchemy
import testtools

from cyborg.db import models
from cyborg.tests import functional


#: A transport URL for processes that only read: no message is sent, so no
#: RabbitMQ is needed.
RABBIT = 'rabbit://guest:guest@127.0.0.1:5672/'


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class TestCyborgAPICommand(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.database = 'sqlite:///%s/cyborg.sqlite' % self.state
        engine = sqlalchemy.create_engine(self.database)
        models.BASE.metadata.create_all(engine)
        engine.dispose()
        self.port = _free_port()

    def _process(self, transport_url, host_ip='127.0.0.1', extra='',
                 command='api'):
        conf = '%s/cyborg.conf' % self.state
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = %s\n'
                    '[database]\nconnection = %s\n'
                    '[api]\nauth_strategy = noauth\nhost_ip = %s\n'
                    'port = %d\napi_workers = 2\n%s' % (
                        transport_url, self.database, host_ip, self.port,
                        extra))
        self.stderr = '%s/stderr' % self.state
        with open(self.stderr, 'w') as stderr:
            process = subprocess.Popen(
                [sys.executable, '-c', 'import sys; from cyborg.cmd import '
                 '%s as c; sys.exit(c.main())' % command, '--config-file',
                 conf], stdout=stderr, stderr=subprocess.STDOUT, text=True)
        self.addCleanup(process.wait, 30)
        return process

    def _start(self, transport_url, **kwargs):
        process = self._process(transport_url, **kwargs)
        self.addCleanup(process.send_signal, signal.SIGTERM)
        return self._wait_until_serving(process)

    @staticmethod
    def _stop(process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)

    def _log(self):
        with open(self.stderr) as f:
            return f.read()

    def _get(self, path, body=None):
        url = 'http://127.0.0.1:%d%s' % (self.port, path)
        request = urllib.request.Request(url)
        if body is not None:
            request.data = json.dumps(body).encode()
            request.add_header('Content-Type', 'application/json')
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())

    def _wait_until_serving(self, process):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.fail('cyborg-api exited: %s' % self._log())
            try:
                return self._get('/')
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)  # not listening yet
        self.fail('cyborg-api did not start listening within 60s')

    def test_serves_the_api_in_two_workers(self):
        status, root = self._start(RABBIT)
        self.assertEqual(200, status)
        self.assertEqual('http://127.0.0.1:%d/v2' % self.port,
                         root['versions'][0]['links'][0]['href'])
        # Several requests: the workers share the port.
        for _ in range(4):
            self.assertEqual((200, {'device_profiles': []}),
                             self._get('/v2/device_profiles'))
        # Each worker's socket queues a burst of new connections (Nova
        # booting many servers at once), not cheroot's default five: ss
        # shows a listening socket's backlog as its Send-Q. The second
        # worker may open its socket after the first answered.

        def backlogs():
            listening = subprocess.run(
                ['ss', '-Hltn', 'sport = :%d' % self.port],
                capture_output=True, text=True, check=True).stdout
            found = [int(line.split()[2])
                     for line in listening.splitlines() if line]
            return found if len(found) == 2 else None
        found = functional.wait('both workers listening on %d' % self.port,
                                backlogs, timeout=60)
        self.assertEqual([], [b for b in found if b < 128])

    def test_noauth_is_said_at_start(self):
        self._start(RABBIT)
        self.assertRegex(self._log(), 'WARNING cyborg.api.auth .* '
                         'auth_strategy is noauth: the API is UNAUTHENTICATED')

    def test_noauth_beyond_loopback_is_refused(self):
        # Every interface, IPv4 or IPv6, or one of the host's
        # addresses: anyone on the network would be an administrator.
        for host_ip in ('0.0.0.0', '::', socket.gethostbyname(
                socket.gethostname())):
            if host_ip.startswith('127.'):
                continue
            process = self._process(RABBIT, host_ip=host_ip)
            self.addCleanup(self._stop, process)
            self.assertEqual(2, process.wait(60), host_ip)
            self.assertIn('cyborg-api will not start: [api] auth_strategy '
                          'is noauth and host_ip %s is not a loopback '
                          'address' % host_ip, self._log())
            with socket.socket() as sock:
                self.assertNotEqual(0, sock.connect_ex(
                    ('127.0.0.1', self.port)))

    def test_noauth_beyond_loopback_when_allowed(self):
        status, _root = self._start(
            RABBIT, host_ip='0.0.0.0', extra='noauth_allow_remote = True\n')
        self.assertEqual(200, status)
        self.assertIn('UNAUTHENTICATED', self._log())

    def test_fake_transport_is_refused(self):
        # No conductor could reach it: one process is cyborg-all-in-one.
        process = self._process('fake://')
        self.addCleanup(self._stop, process)
        self.assertEqual(2, process.wait(60))
        self.assertIn('cyborg-api will not start: [DEFAULT] transport_url '
                      'is fake://', self._log())

    def test_all_in_one_on_fake_transport(self):
        # API, conductor and agent in one process, on oslo.messaging's own
        # fake:// transport: a write goes through the conductor.
        process = self._process('fake://', command='all_in_one')
        self.addCleanup(process.send_signal, signal.SIGTERM)
        self._wait_until_serving(process)
        status, created = self._get('/v2/device_profiles', body=[{
            'name': 'dp1', 'groups': [{'resources:FPGA': '1'}]}])
        self.assertEqual((201, 'dp1'), (status, created['name']))
        self.assertEqual(['dp1'], [p['name'] for p in self._get(
            '/v2/device_profiles')[1]['device_profiles']])


class TestWSGIApplication(testtools.TestCase):
    """cyborg.wsgi.api:application as a WSGI server mounts it."""

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf = '%s/cyborg.conf' % self.state

    def _load(self, conf, script='from cyborg.wsgi import api\n'):
        """Run ``script`` with the application loaded from ``conf``."""
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = fake://\n'
                    '[api]\nauth_strategy = noauth\n%s' % (self.state, conf))
        result = subprocess.run(
            [sys.executable, '-c', script], capture_output=True, text=True,
            env=dict(os.environ, CYBORG_CONFIG_FILE=self.conf), timeout=60)
        self.assertEqual(0, result.returncode, result.stderr)
        return result.stdout

    def test_mounted_under_a_prefix(self):
        output = self._load(
            '[database]\nconnection = sqlite:///%s/c.sqlite\n' % self.state,
            'import json, webob\n'
            'from cyborg.wsgi import api\n'
            'request = webob.Request.blank("/v2", base_url="http://cloud")\n'
            'request.script_name = "/accelerator"\n'
            'print(json.dumps(request.get_response(api.application).json))\n')
        document = json.loads(output.splitlines()[-1])
        self.assertEqual('http://cloud/accelerator/v2/',
                         document['links'][0]['href'])

    def test_default_database_is_said(self):
        warning = '[database] connection is not set: using the SQLite file'
        self.assertIn('%s sqlite:///%s/cyborg.sqlite' % (warning, self.state),
                      self._load(''))
        self.assertNotIn(warning, self._load(
            '[database]\nconnection = sqlite:///%s/c.sqlite\n' % self.state))
