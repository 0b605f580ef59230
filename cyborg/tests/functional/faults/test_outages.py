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
import os
import threading
import time
import urllib.parse

import pytest
import requests

from cyborg.api import errors
from cyborg.conductor import nova_events as nova_event_sender
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests.functional import services
from cyborg.tests.functional import tcp_proxy

DEFAULT_PORTS = {'mysql': 3306, 'postgresql': 5432}
#: How long the database is away: long enough for the conductor's event
#: sender, which looks every second, to meet it (the guide's figures: 30 s).
DB_OUTAGE = functional.tunable('DB_OUTAGE', 10)
#: The longest a request may take while it is away.
REQUEST_BOUND = 10


def _percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class _ServicesOnDatabase(services.ServicesTestCase):
    """The services on a database of their own behind a TCP proxy."""

    def setUp(self):
        super().setUp()
        self.use_vhost()
        url = db_api.get_engine().url
        self.proxy = self.useFixture(tcp_proxy.TCPProxy((
            url.host or '127.0.0.1',
            url.port or DEFAULT_PORTS[url.get_backend_name()])))
        self.db_url = url.set(
            host='127.0.0.1', port=self.proxy.port).render_as_string(
                hide_password=False)
        self.host = self.placement.hostname

    def _profile(self):
        response = self.request('POST', '/device_profiles', [
            {'name': 'fpga', 'groups': [services.PROFILE]}])
        self.assertEqual(201, response.status_code, response.text)


class _DatabaseOutage:
    """The test, for each database engine (not a test case itself)."""

    def setUp(self):
        super().setUp()
        # Stopped in the reverse order: an agent stops at once while a
        # conductor answers its reports.
        self.conductor = self.start_conductor(0)
        self.add_host(self.host, cards=services.CARDS[:1], vfs=4)
        self.start_agent(self.host)
        self.api_process = self.start_api()

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
        self.wait_for_placement()
        (rp_uuid,) = self.children(self.host).values()
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
        self.restart_nova()
        # An event the sender had taken when the database went away stays
        # held for it (nova_events.HOLD) before it is due again.
        for arq_uuid, server in ((waiting, instance), (initial, second)):
            self.event(server, arq_uuid,
                       timeout=nova_event_sender.HOLD + 30)
        # The event sender met the outage and carried on; the API knew
        # each failure for what it was.
        self.assertIn('Cannot reach the database to send events to Nova',
                      self.conductor.log())
        self.assertNotIn('Traceback', self.api_process.log())
        # Nothing half-written: no profile of the outage, the two ARQs only.
        names = [p['name'] for p in self.request(
            'GET', '/device_profiles').json()['device_profiles']]
        self.assertEqual(['fpga'], names)
        arqs = self.request('GET', '/accelerator_requests').json()['arqs']
        self.assertEqual({(waiting, 'Bound'), (initial, 'Bound')},
                         {(a['uuid'], a['state']) for a in arqs})
        self.assertNotEqual(arqs[0]['attach_handle_uuid'],
                            arqs[1]['attach_handle_uuid'])


class TestDatabaseOutageMySQL(_DatabaseOutage, _ServicesOnDatabase):
    FIXTURE = test_concurrency.MySQLFixture


class TestDatabaseOutagePostgreSQL(_DatabaseOutage, _ServicesOnDatabase):
    FIXTURE = test_concurrency.PostgreSQLFixture


@pytest.mark.long
class TestNovaOutage(_ServicesOnDatabase):
    """Nova is away while instances' ARQs are bound.

    Away long enough for the event sender to back off past 8 s between
    tries (the guide's figures: two minutes).
    """

    #: Binds while Nova is up, to compare with; binds while it is away.
    WARM = 20
    BOOTS = 50
    NOVA_OUTAGE = functional.tunable('NOVA_OUTAGE', 20)

    def setUp(self):
        super().setUp()
        self.start_conductor(0)
        self.add_host(self.host, vfs=(self.WARM + self.BOOTS) // 2)
        self.start_agent(self.host)
        self.start_api()

    def _boots(self, count, rps):
        """Bind one ARQ for each of ``count`` instances, one by one.

        :returns: {instance: (ARQ, seconds from PATCH to Bound)}.
        """
        boots = {}
        for i in range(count):
            arq_uuid = self.create_arq('fpga')
            instance, took = self.bind(arq_uuid, self.host,
                                       rps[i % len(rps)])
            boots[instance] = (arq_uuid, took)
        return boots

    def _events_of(self, boots):
        for instance, (arq_uuid, _) in boots.items():
            self.event(instance, arq_uuid)

    def test_events_wait_for_nova_and_binds_do_not(self):
        self.wait_for_placement()
        rps = sorted(self.children(self.host).values())
        self._profile()
        up = self._boots(self.WARM, rps)
        self._events_of(up)

        self.nova.stop()
        stopped = time.monotonic()
        down = self._boots(self.BOOTS, rps)
        bound_in = time.monotonic() - stopped
        # Nova stays away its whole outage: nothing to wait for here.
        time.sleep(max(0, self.NOVA_OUTAGE - bound_in))
        self.restart_nova()
        back = time.monotonic()
        self._events_of(down)
        delivered_in = time.monotonic() - back
        # One event per ARQ: none lost, none sent twice.
        self.assertEqual(len(down), len(self.nova.events))

        up_p50, up_p99 = (_percentile([t for _, t in up.values()], f)
                          for f in (0.5, 0.99))
        down_p50, down_p99 = (_percentile([t for _, t in down.values()], f)
                              for f in (0.5, 0.99))
        print('bind latency, PATCH to Bound: Nova up p50 %.3f s p99 %.3f s '
              '(%d binds); Nova away p50 %.3f s p99 %.3f s (%d binds); '
              'Nova away %.0f s, its %d events delivered %.1f s after it '
              'came back' % (up_p50, up_p99, len(up), down_p50, down_p99,
                             len(down), back - stopped, len(down),
                             delivered_in))
        self.assertLessEqual(down_p99, 3 * up_p99 + 1)
        # The sender waits at most its longest back-off between tries.
        self.assertLess(delivered_in, nova_event_sender.MAX_DELAY + 15)


class _Retryable(Exception):
    """The service answered that the client may try again."""


@pytest.mark.long(minutes=3)
class TestRollingRestart(_ServicesOnDatabase):
    """Every service restarts, one by one, while clients bind and unbind."""

    CLIENTS = 2
    HOSTS = 2

    def setUp(self):
        super().setUp()
        self.conductors = [self.start_conductor(i) for i in range(2)]
        self.hosts = self.host_names(self.HOSTS)
        for host in self.hosts:
            self.add_host(host, cards=services.CARDS[:1])
        self.agents = [self.start_agent(host) for host in self.hosts]
        self.api_process = self.start_api()
        self.cycles = 0
        self.retries = 0
        self.failures = []
        self.stopping = threading.Event()
        self.progress = threading.Condition()

    # --- the client: Nova's calls, retried as a client would -------------

    def _call(self, method, path, body=None, ok=(200, 201, 202, 204)):
        """The request, tried again while the answer says it may be."""
        deadline = time.monotonic() + 90
        while True:
            try:
                response = self.request(method, path, body, timeout=60)
                if response.status_code == 503:
                    raise _Retryable(response.text)
                if response.status_code in ok:
                    return response
                raise AssertionError('%s %s: %d %s' % (
                    method, path, response.status_code, response.text))
            except (_Retryable, requests.ConnectionError) as e:
                if time.monotonic() > deadline:
                    raise AssertionError('%s %s: no answer in time: %s'
                                         % (method, path, e))
                with self.progress:
                    self.retries += 1
                time.sleep(0.2)  # the API restarts or waits on a conductor

    def _wait_state(self, arq_uuid, wanted):
        """The ARQ's state, once it is one of ``wanted``."""
        def reached():
            state = self._call('GET', '/accelerator_requests/' +
                               arq_uuid).json()['state']
            return state if state in wanted else None
        return functional.wait('ARQ %s %s' % (arq_uuid, ' or '.join(wanted)),
                               reached, 90)

    def _cycle(self, host, rp_uuid):
        """Create, claim, bind, unbind, delete, release: one boot's life."""
        instance = self.allocate(rp_uuid)
        (arq,) = self._call('POST', '/accelerator_requests',
                            {'device_profile_name': 'fpga'}).json()['arqs']
        # A PATCH repeated after its answer was lost finds the bind begun.
        self._call('PATCH', '/accelerator_requests',
                   self.bind_patch(arq['uuid'], host, rp_uuid, instance),
                   ok=(202, 409))
        self.assertEqual('Bound', self._wait_state(
            arq['uuid'], ('Bound', 'BindFailed')))
        bound = [a for a in self._call('GET', '/accelerator_requests').json()[
            'arqs'] if a['state'] == 'Bound']
        handles = [a['attach_handle_uuid'] for a in bound]
        self.assertEqual(len(handles), len(set(handles)), bound)
        # Repeated, it finds the request Unbound, which it leaves so.
        self._call('PATCH', '/accelerator_requests/' + arq['uuid'], [
            {'op': 'remove', 'path': '/' + field} for field in
            ('hostname', 'device_rp_uuid', 'instance_uuid')], ok=(202,))
        self.assertEqual('Unbound', self._wait_state(arq['uuid'],
                                                     ('Unbound',)))
        self._call('DELETE', '/accelerator_requests?arqs=' + arq['uuid'],
                   ok=(204, 404))
        response = self.rp.delete('/allocations/' + instance)
        self.assertEqual(204, response.status_code, response.text)

    def _client(self, host, rp_uuid):
        try:
            while not self.stopping.is_set():
                self._cycle(host, rp_uuid)
                with self.progress:
                    self.cycles += 1
                    self.progress.notify_all()
        except BaseException as e:
            self.failures.append(e)
            with self.progress:
                self.progress.notify_all()

    def _cycles_pass(self, count=3):
        """Wait until ``count`` more cycles are done."""
        with self.progress:
            target = self.cycles + count
            self.assertTrue(self.progress.wait_for(
                lambda: self.cycles >= target or self.failures, 120),
                'no cycle done in 120 s')
        self.assertEqual([], self.failures)

    # --- the operator: restart every service, one by one -------------------

    def _restart(self, process, start, *args):
        """Stop ``process``, then ``start(*args)`` again, and wait."""
        process.stop()
        started = start(*args)
        functional.wait('%s ready' % started.log_path,
                        lambda: 'serving on' in started.log(), timeout=60)
        self._cycles_pass()
        return started

    def test_nothing_lost(self):
        self.wait_for_placement()
        self._profile()
        clients = []
        for i in range(self.CLIENTS):
            host = self.hosts[i % self.HOSTS]
            (rp_uuid,) = self.children(host).values()
            clients.append(threading.Thread(target=self._client,
                                            args=(host, rp_uuid)))
        for client in clients:
            client.start()
        self.addCleanup(self.stopping.set)
        self._cycles_pass()
        start = time.monotonic()

        port = urllib.parse.urlsplit(self.api_url).port
        self.api_process.stop()
        self.api_process = self.start_api(port=port)
        self._cycles_pass()
        for i, process in enumerate(self.conductors):
            self.conductors[i] = self._restart(process, self.start_conductor,
                                               i)
        for i, process in enumerate(self.agents):
            self.agents[i] = self._restart(process, self.start_agent,
                                           self.hosts[i])
        self.stopping.set()
        for client in clients:
            client.join(120)
        self.assertEqual([], self.failures)
        print('rolling restart of cyborg-api, two conductors and %d agents '
              'in %.0f s: %d boot cycles, %d requests tried again, none '
              'failed' % (self.HOSTS, time.monotonic() - start, self.cycles,
                          self.retries))

        # Nothing left behind: no ARQ, no allocation, no handle in use.
        self.assertEqual([], self._call('GET', '/accelerator_requests')
                         .json()['arqs'])
        for host in self.hosts:
            for rp_uuid in self.children(host).values():
                usages = self.rp.get('/resource_providers/%s/usages'
                                     % rp_uuid).json()['usages']
                self.assertEqual({'FPGA': 0}, usages)
        with db_api.main_context_manager.reader.using(self.ctx):
            self.assertEqual(0, self.ctx.session.query(
                models.AttachHandle).filter_by(in_use=True).count())
        # Nothing unexpected happened on the way.
        for name in sorted(os.listdir(self.tmp)):
            if name.endswith('.log'):
                with open(os.path.join(self.tmp, name)) as f:
                    self.assertNotIn('Traceback', f.read(), name)
