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
"""``cyborg.wsgi.api`` loaded before its database serves once it answers.

The shared MariaDB must keep running for everyone else, so the database
that is "not started yet" is a TCP proxy (:mod:`..tcp_proxy`) on a port
where, at first, nothing listens: connecting to it is refused, exactly as
to a MariaDB that has not started. "Starting MariaDB" is the proxy
listening on that port and forwarding to the shared server, where the
test's migrated database is. The application is served by cheroot (the
WSGI server ``cyborg-api`` uses) in a process of its own, as a WSGI
server would load it: by importing ``cyborg.wsgi.api``.
"""

import json
import os
import subprocess  # nosec B404
import sys
import time

import fixtures
from oslo_db.sqlalchemy import test_fixtures
import requests

from cyborg.api import database_gate
from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests.functional import tcp_proxy

#: Serves ``cyborg.wsgi.api:application``; says on which port, then serves.
SERVE = '''
import sys
from cheroot import wsgi
from cyborg.wsgi import api
server = wsgi.Server(('127.0.0.1', 0), api.application, numthreads=4)
server.prepare()
print('serving on port', server.bind_addr[1], flush=True)
server.serve()
'''


class TestWSGIBeforeDatabase(test_fixtures.OpportunisticDBTestMixin,
                             base.TestCase):

    FIXTURE = test_concurrency.MySQLFixture

    def setUp(self):
        super().setUp()
        tmp = self.useFixture(fixtures.TempDir()).path
        url = db_api.get_engine().url
        self.proxy = self.useFixture(tcp_proxy.TCPProxy((
            url.host or '127.0.0.1', url.port or 3306)))
        # MariaDB not started yet: nothing listens on its port.
        self.proxy.cut()
        conf = os.path.join(tmp, 'cyborg.conf')
        self.log = os.path.join(tmp, 'api.log')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = fake://\n'
                    'log_file = %s\n'
                    '[api]\nauth_strategy = noauth\n'
                    '[database]\nconnection = %s\nmax_retries = 2\n'
                    'retry_interval = 1\n' % (tmp, self.log, url.set(
                        host='127.0.0.1', port=self.proxy.port
                    ).render_as_string(hide_password=False)))
        self.process = subprocess.Popen(  # nosec B603
            [sys.executable, '-c', SERVE, '--config-file', conf],
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.process.stdout.close)
        self.addCleanup(self.process.wait, 30)
        self.addCleanup(self.process.terminate)
        port = self.process.stdout.readline().split()[-1:]
        self.assertTrue(port, 'cyborg.wsgi.api did not load')
        self.url = 'http://127.0.0.1:%s/v2/device_profiles' % port[0]

    def api_log(self):
        with open(self.log) as f:
            return f.read()

    def test_503_until_the_database_answers_then_serves(self):
        # Loaded without its database: it answers, 503 with a message
        # that says why, and soon (no wait for oslo.db's retries).
        for _ in range(2):
            started = time.monotonic()
            response = requests.get(self.url, timeout=30)
            self.assertEqual(503, response.status_code, response.text)
            self.assertLess(time.monotonic() - started,
                            database_gate.FIRST_WAIT + 5)
            fault = json.loads(response.json()['error_message'])
            self.assertEqual(database_gate.NOT_YET, fault['faultstring'])
            self.assertEqual('1', response.headers['Retry-After'])
        # MariaDB starts: the API serves, without a restart.
        self.proxy.restore()
        functional.wait('the API serving', lambda: requests.get(
            self.url, timeout=30).status_code == 200, timeout=60)
        self.assertEqual([], requests.get(
            self.url, timeout=30).json()['device_profiles'])
        self.assertIn('The database cannot be reached yet', self.api_log())
        self.assertNotIn('Traceback', self.api_log())
