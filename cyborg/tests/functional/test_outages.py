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
"""The database and Nova go away while the services run; nothing is lost.

Real processes over RabbitMQ (:mod:`cyborg.tests.functional.services`).
The database is reached through a TCP proxy that the test cuts, as a
database server that dies or a network that fails (the shared servers
keep running); Nova is the event receiver, stopped and started again on
its port. The figures measured are printed for the operators' guide
(``doc/source/admin/failure-behaviour.rst``).
"""

import json
import time
import urllib.parse

from oslo_db.sqlalchemy import test_fixtures

from cyborg.api import errors
from cyborg.db import api as db_api
from cyborg.demo import nova_events
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests.functional import services
from cyborg.tests.functional import tcp_proxy

DEFAULT_PORTS = {'mysql': 3306, 'postgresql': 5432}
#: How long the database is away; and the longest a request may take then.
DB_OUTAGE = 30
REQUEST_BOUND = 10


def _percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class _ServicesOnDatabase(test_fixtures.OpportunisticDBTestMixin,
                          services.ServicesTestCase):
    """The services on a database of their own behind a TCP proxy."""

    def setUp(self):
        super().setUp()
        url = db_api.get_engine().url
        self.proxy = self.useFixture(tcp_proxy.TCPProxy((
            url.host or '127.0.0.1',
            url.port or DEFAULT_PORTS[url.get_backend_name()])))
        self.db_url = url.set(
            host='127.0.0.1', port=self.proxy.port).render_as_string(
                hide_password=False)
        self.host = self.placement.hostname

    def _restart_nova(self):
        port = urllib.parse.urlsplit(self.nova.url).port
        self.nova = nova_events.EventReceiver(port=port).start()

    def _profile(self):
        response = self.request('POST', '/device_profiles', [
            {'name': 'fpga', 'groups': [services.PROFILE]}])
        self.assertEqual(201, response.status_code, response.text)


class _DatabaseOutage(_ServicesOnDatabase):

    def setUp(self):
        super().setUp()
        self._agent(self.host, cards=services.CARDS[:1], vfs=4)
        self.conductor = self._conductor('conductor', self.db_url)
        self._api(self.db_url)

    def _unavailable(self, method, path, body=None):
        """The request is answered 503 in the API's error form, in time."""
        start = time.monotonic()
        response = self.request(method, path, body, timeout=REQUEST_BOUND)
        took = time.monotonic() - start
        self.assertEqual(503, response.status_code,
                         '%s %s: %s' % (method, path, response.text))
        fault = json.loads(response.json()['error_message'])
        self.assertEqual({'faultcode': 'Server',
                          'faultstring': errors.DATABASE_UNAVAILABLE,
                          'debuginfo': None}, fault)
        return took

    def test_unreachable_database_answers_503_then_recovers(self):
        functional.wait('the card in Placement',
                        lambda: self._all_in_placement(cards=1))
        (rp_uuid,) = self._children(self.host).values()
        self._profile()
        # Nova is away too: the bind's event waits in the database.
        self.nova.stop()
        waiting = self.create_arq('fpga')
        instance, _ = self.bind(waiting, self.host, rp_uuid)
        initial = self.create_arq('fpga')

        self.proxy.cut()
        cut_at = time.monotonic()
        took = []
        attempt = 0
        while time.monotonic() - cut_at < DB_OUTAGE:
            attempt += 1
            took += [
                self._unavailable('GET', '/device_profiles'),
                self._unavailable('GET', '/accelerator_requests/' + initial),
                self._unavailable('POST', '/device_profiles', [
                    {'name': 'late-%d' % attempt,
                     'groups': [services.PROFILE]}]),
                self._unavailable('POST', '/accelerator_requests',
                                  {'device_profile_name': 'fpga'}),
                self._unavailable('PATCH', '/accelerator_requests',
                                  self.bind_patch(initial, self.host,
                                                  rp_uuid, instance)),
                self._unavailable('DELETE', '/accelerator_requests'
                                  '?arqs=' + waiting),
            ]
        self.proxy.restore()
        print('database away %.0f s: %d requests answered 503, slowest '
              'in %.2f s, median %.3f s' % (
                  time.monotonic() - cut_at, len(took), max(took),
                  _percentile(took, 0.5)))

        # No restart: the API serves again, the conductor binds, and its
        # event sender (which met the outage) tells Nova of both binds.
        recovered_at = time.monotonic()
        functional.wait('the API reading again', lambda: self.request(
            'GET', '/device_profiles').status_code == 200, timeout=30)
        print('database back: the API answered again in %.2f s' % (
            time.monotonic() - recovered_at))
        second, _ = self.bind(initial, self.host, rp_uuid)
        self._restart_nova()
        for arq_uuid, server in ((waiting, instance), (initial, second)):
            self.assertEqual([{'name': 'accelerator-request-bound',
                               'server_uuid': server, 'tag': arq_uuid,
                               'status': 'completed'}],
                             self.nova.wait_for(server, 1, timeout=60))
        # Nothing half-written: no profile of the outage, the two ARQs only.
        names = [p['name'] for p in self.request(
            'GET', '/device_profiles').json()['device_profiles']]
        self.assertEqual(['fpga'], names)
        arqs = self.request('GET', '/accelerator_requests').json()['arqs']
        self.assertEqual({(waiting, 'Bound'), (initial, 'Bound')},
                         {(a['uuid'], a['state']) for a in arqs})
        self.assertNotEqual(arqs[0]['attach_handle_uuid'],
                            arqs[1]['attach_handle_uuid'])


class TestDatabaseOutageMySQL(_DatabaseOutage):
    FIXTURE = test_concurrency.MySQLFixture


class TestDatabaseOutagePostgreSQL(_DatabaseOutage):
    FIXTURE = test_concurrency.PostgreSQLFixture
