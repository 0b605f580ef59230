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
"""Hundreds of ARQs bound and unbound at once through the real services.

Simulated hosts (50 under ``tox -e load``, 12 in the whole suite) with 8
Intel FPGAs of 2 VFs each report to two ``cyborg-conductor`` processes
(see :mod:`cyborg.tests.load.cluster`);
``cyborg-api`` serves with two worker processes; RabbitMQ carries the RPC,
the real Placement holds the providers and Nova's allocations, and Nova's
external events reach a receiver in this process. Parallel clients then
play Nova for more instances than there are VFs (1,000 under ``tox -e
load``), of one ARQ each: create the ARQ, claim an allocation candidate
in Placement, bind through the API and wait for the
``accelerator-request-bound`` event, read the bound ARQ, then for three
instances in four release it again (unbind, unbind and delete, or
delete), freeing the allocation.

At the end no attach handle may have been held by two ARQs at once, no
ARQ may be left between states, and Placement's usage of every device
provider must equal what the database says is bound there. The test
prints the throughput and the bind latency (``PATCH`` to event) with
``-s``.
"""

import collections
import concurrent.futures
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_messaging import conffixture
import requests
import sqlalchemy as sa
import testtools

from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg.objects import device_profile
from cyborg import states
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests.load import cluster
from cyborg_quickstart import nova_events
from cyborg_quickstart import placement as placement_demo

#: 1,000 instances on 50 hosts under ``tox -e load`` and in the
#: performance guide; a quarter of that, with as many instances for each
#: device, in the whole suite.
HOSTS = functional.tunable('LOAD_HOSTS', 12)
FPGAS = 8
VFS = 2
INSTANCES = functional.tunable('LOAD_INSTANCES', 240)
CLIENTS = 24
PROFILE = 'load-fpga'
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}
#: What each instance does once its ARQ is bound, by instance number.
ENDINGS = ('keep', 'unbind', 'unbind-delete', 'delete')
EVENT_TIMEOUT = 120


class _BindLoad:

    #: How many simulated hosts report, how many conductors serve them.
    HOSTS = HOSTS
    CONDUCTORS = 2

    def setUp(self):
        super().setUp()
        self.services = []
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.ctx = context.get_admin_context()
        self._transport()
        self.placement = self._placement()
        self.placement_conf = {'auth_type': 'admin_token',
                               'token': placement_demo.TOKEN,
                               'endpoint': self.placement}
        self.nova = nova_events.EventReceiver().start()
        self.addCleanup(self.nova.stop)
        self._use_database()
        self.db_url = db_api.get_engine().url.render_as_string(
            hide_password=False)
        self.hosts = ['%s-%02d' % ('load-' + uuid.uuid4().hex[:8], i)
                      for i in range(self.HOSTS)]
        #: The hosts the scheduler places instances on.
        self.claim_hosts = self.hosts
        self.compute_rps = {}
        self.rp = placement_demo.adapter(self.placement, '1.39')
        for host in self.hosts:
            response = self.rp.post('/resource_providers', json={'name': host})
            self.assertEqual(200, response.status_code, response.text)
            self.compute_rps[host] = response.json()['uuid']
        for i in range(self.CONDUCTORS):
            self._conductor(i)
        self.api_url = self._front()
        self.addCleanup(self._terminate_all)

    def _transport(self):
        """A RabbitMQ virtual host of the test's, for it and the services."""
        self.vhost = 'cyborg-load-%s' % uuid.uuid4().hex[:12]
        if (functional.rabbitmqctl('add_vhost', self.vhost) or
                functional.rabbitmqctl('set_permissions', '-p', self.vhost,
                                       'guest', '.*', '.*', '.*')):
            self.skipTest('cannot make a RabbitMQ virtual host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', self.vhost)
        base_url = urllib.parse.urlsplit(functional.RABBIT_URL)
        self._use_transport(base_url._replace(path='/' + self.vhost).geturl())

    def _use_database(self):
        """Point cyborg.db.api at the test's database (its mixin did)."""

    #: ``[oslo_messaging_rabbit]`` of the services and of the test.
    MESSAGING = {}
    #: ``[database]`` of the services, besides ``connection``.
    DATABASE = {}
    #: ``[DEFAULT]`` of the APIs, besides ``transport_url``.
    API_DEFAULTS = {}

    def _use_transport(self, url):
        self.rabbit = url
        self.useFixture(conffixture.ConfFixture(self.conf.conf))
        self.conf.config(transport_url=self.rabbit)
        for option, value in self.MESSAGING.items():
            self.conf.config(group='oslo_messaging_rabbit',
                             **{option: value})
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(self.conf.conf)
        self.addCleanup(rpc.cleanup)

    def _placement(self):
        """The real Placement, on SQLite, in a process of its own.

        It writes each request's method to :attr:`access_log`.
        """
        self.access_log = os.path.join(self.tmp, 'placement-access.log')
        (port,) = functional.free_ports(1)
        placement = cyborg_fixtures.ServiceProcess(
            [sys.executable, '-m', 'cyborg_quickstart.placement', '--port',
             str(port), '--db', 'sqlite:///' + os.path.join(
                 self.tmp, 'placement.sqlite'),
             '--access-log', self.access_log],
            None, os.path.join(self.tmp, 'placement.log'))
        self.useFixture(placement)
        url = 'http://127.0.0.1:%d' % port
        self._wait_serving('placement', placement, url)
        return url

    def _wait_serving(self, name, process, url):
        def serving():
            if process.proc.poll() is not None:
                self.fail('%s exited' % name)
            return functional.serves(url)

        functional.wait(name, serving)

    def _service(self, command, name, sections):
        path = cluster.write_conf(os.path.join(self.tmp, name + '.conf'),
                                  sections)
        process = cyborg_fixtures.service_process(
            self, command, path, os.path.join(self.tmp, name + '.log'))
        self.services.append(process)
        return process

    def _terminate_all(self):
        # All at once: each stop then only waits for what is left.
        for process in self.services:
            if process.proc.poll() is None:
                process.proc.terminate()

    def _conductor(self, index, name=None, db_url=None):
        """Start conductor ``index`` (host ``conductor-<index>``).

        :param name: of its configuration and log file, when it is started
            again; ``conductor-<index>`` by default.
        :param db_url: its database, :attr:`db_url` by default.
        """
        host = 'conductor-%d' % index
        return self._service('cyborg-conductor', name or host, {
            # The periodic pass runs at start, before any host is known,
            # and not again: the unchanged reports are counted alone.
            'DEFAULT': {'host': host, 'transport_url': self.rabbit,
                        'periodic_interval': 3600,
                        'periodic_fuzzy_delay': 0,
                        'bind_timeout': EVENT_TIMEOUT},
            'database': dict(self.DATABASE,
                             connection=db_url or self.db_url),
            'conductor': {'workers': 1},
            'placement': self.placement_conf,
            'nova': {'auth_type': 'admin_token', 'token': 'admin',
                     'endpoint': self.nova.url},
            'oslo_messaging_rabbit': self.MESSAGING,
        })

    def _front(self):
        """Start the API; the URL the clients call."""
        return self._api()

    def _api(self, name='api', port=None, workers=2, db_url=None):
        """Start ``cyborg-api``; the URL of its ``/v2``.

        :param port: to serve on, a free one by default.
        """
        if port is None:
            (port,) = functional.free_ports(1)
        api = self._service('cyborg-api', name, {
            'DEFAULT': dict(self.API_DEFAULTS, transport_url=self.rabbit),
            'database': dict(self.DATABASE,
                             connection=db_url or self.db_url),
            'api': {'host_ip': '127.0.0.1', 'port': port,
                    'api_workers': workers, 'auth_strategy': 'noauth'},
            'oslo_messaging_rabbit': self.MESSAGING,
        })
        url = 'http://127.0.0.1:%d/v2' % port
        self._wait_serving(name, api, url)
        return url

    # --- the simulated hosts -----------------------------------------------

    def _providers(self, rp):
        """{provider uuid: name} of Cyborg's providers of the hosts."""
        found = rp.get('/resource_providers', params={
            'required': 'OWNER_CYBORG'}).json()['resource_providers']
        roots = set(self.compute_rps.values())
        return {p['uuid']: p['name'] for p in found
                if p['root_provider_uuid'] in roots}

    def _placement_requests(self):
        """{method: count} of the requests Placement served so far."""
        with open(self.access_log) as f:
            return collections.Counter(line.split()[0] for line in f)

    def _report_hosts(self):
        """Every host reports; every host reports again, unchanged.

        :returns: the seconds until every first report was answered, and
            {method: count} of Placement's requests for the second ones.
        """
        template = cluster.fpga_host_report(os.path.join(self.tmp, 'sysfs'),
                                            FPGAS, VFS)
        cluster.conductor_ready()
        seconds = cluster.report(template, self.hosts)
        # The conductor syncs Placement before it answers a report.
        self.assertEqual(self.HOSTS * FPGAS,
                         len(self._providers(self.rp)))
        before = self._placement_requests()
        cluster.report(template, self.hosts, resend=True)
        return seconds, dict(self._placement_requests() - before)

    # --- Nova's part, one instance at a time --------------------------------

    def _claim(self, rp, instance):
        """Nova's scheduler: an allocation of one FPGA on some host."""
        while True:
            host = random.choice(self.claim_hosts)
            candidates = rp.get('/allocation_candidates', params={
                'resources1': 'FPGA:1', 'required1': 'CUSTOM_FPGA_INTEL',
                'in_tree1': self.compute_rps[host]}).json()
            if not candidates['allocation_requests']:
                continue
            allocation = random.choice(
                candidates['allocation_requests'])['allocations']
            response = rp.put('/allocations/%s' % instance, json={
                'allocations': allocation, 'project_id': 'p',
                'user_id': 'u', 'consumer_generation': None,
                'consumer_type': 'INSTANCE'})
            if response.status_code == 409:
                continue  # another instance took the last one: reschedule
            self.assertEqual(204, response.status_code, response.text)
            (rp_uuid,) = allocation
            return host, rp_uuid

    def _instance(self, number, rp, http, results):
        instance = str(uuid.uuid4())
        arqs = self._call(http, 'post', '/accelerator_requests', 201,
                          json={'device_profile_name': PROFILE})['arqs']
        (arq,) = arqs
        host, rp_uuid = self._claim(rp, instance)
        started = time.monotonic()
        self._call(http, 'patch', '/accelerator_requests', 202, json={
            arq['uuid']: [
                {'op': 'add', 'path': '/hostname', 'value': host},
                {'op': 'add', 'path': '/device_rp_uuid', 'value': rp_uuid},
                {'op': 'add', 'path': '/instance_uuid', 'value': instance}]})
        events = self.nova.wait_for(instance, 1, EVENT_TIMEOUT)
        results.latencies.append(time.monotonic() - started)
        self.assertEqual([('accelerator-request-bound', arq['uuid'],
                           'completed')],
                         [(e['name'], e['tag'], e['status'])
                          for e in events], self._logged(arq['uuid']))
        (bound,) = self._call(http, 'get', '/accelerator_requests', 200,
                              params={'instance': instance,
                                      'bind_state': 'resolved'})['arqs']
        self.assertEqual((states.BOUND, rp_uuid),
                         (bound['state'], bound['device_rp_uuid']))
        handle = bound['attach_handle_uuid']
        results.take(handle, arq['uuid'])
        ending = ENDINGS[number % len(ENDINGS)]
        if ending == 'keep':
            return
        results.give_back(handle)
        if ending.startswith('unbind'):
            self._call(http, 'patch', '/accelerator_requests', 202, json={
                arq['uuid']: [{'op': 'remove', 'path': path} for path in (
                    '/hostname', '/device_rp_uuid', '/instance_uuid')]})
        if ending == 'unbind-delete':
            # Unbound, it belongs to no instance any more.
            self._call(http, 'delete', '/accelerator_requests', 204,
                       params={'arqs': arq['uuid']})
        elif ending == 'delete':
            self._call(http, 'delete', '/accelerator_requests', 204,
                       params={'instance': instance})
        response = rp.delete('/allocations/%s' % instance)
        self.assertEqual(204, response.status_code, response.text)

    def _logged(self, arq_uuid):
        """The lines of the services' logs that name an ARQ."""
        lines = []
        for service in self.services:
            with open(service.log_path, errors='replace') as f:
                lines.extend(line for line in f if arq_uuid in line)
        return ''.join(lines)

    def _call(self, http, method, path, status, **kwargs):
        response = http.request(method, self.api_url + path, timeout=60,
                                **kwargs)
        self.assertEqual(status, response.status_code, response.text)
        return response.json() if response.content else None

    # --- the check at the end ----------------------------------------------

    def _assert_placement_agrees(self, bound, in_use):
        """Placement's FPGA usage of each device is what the database holds.

        :param bound: {provider uuid: ARQs bound there}.
        :param in_use: {provider uuid: its attach handles in use}.
        """
        usage = {}
        for rp_uuid in self._providers(self.rp):
            used = self.rp.get('/resource_providers/%s/usages' % rp_uuid
                               ).json()['usages'].get('FPGA', 0)
            if used:
                usage[rp_uuid] = used
        self.assertEqual(usage, bound)
        self.assertEqual(usage, in_use)

    def _database(self):
        """ARQ states, and {provider uuid: (bound ARQs, handles in use)}."""
        engine = db_api.get_engine()
        with engine.connect() as conn:
            arq_states = collections.Counter(dict(conn.execute(sa.text(
                'SELECT state, COUNT(*) FROM accelerator_requests '
                'GROUP BY state')).all()))
            shared = conn.execute(sa.text(
                'SELECT attach_handle_id FROM accelerator_requests '
                'WHERE attach_handle_id IS NOT NULL '
                'GROUP BY attach_handle_id HAVING COUNT(*) > 1')).all()
            bound = dict(conn.execute(sa.text(
                'SELECT device_rp_uuid, COUNT(*) FROM accelerator_requests '
                "WHERE state = 'Bound' GROUP BY device_rp_uuid")).all())
            in_use = dict(conn.execute(sa.text(
                'SELECT d.rp_uuid, COUNT(*) FROM attach_handles h '
                'JOIN deployables d ON d.id = h.deployable_id '
                'WHERE h.in_use = :yes GROUP BY d.rp_uuid'), {
                    'yes': True}).all())
        return arq_states, shared, bound, in_use


class _BindAndUnbind(_BindLoad):

    def test_bind_and_unbind_under_load(self):
        report_seconds, resync = self._report_hosts()
        # Nothing changed: Placement is read, at most once per host, and
        # never written.
        self.assertEqual(0, placement_demo.writes(resync), resync)
        self.assertLessEqual(resync.get('GET', 0), self.HOSTS)
        rpcapi.ConductorAPI().device_profile_create(
            self.ctx, device_profile.DeviceProfile(
                self.ctx, name=PROFILE, groups=[GROUP]))
        results = _Results()
        local = threading.local()

        def instance(number):
            if not hasattr(local, 'http'):
                # Proxies are looked up in the environment on every
                # request otherwise, which costs more than the request.
                local.http = requests.Session()
                local.http.trust_env = False
                local.rp = placement_demo.adapter(self.placement, '1.39')
                local.rp.session.session.trust_env = False
            self._instance(number, local.rp, local.http, results)

        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            for future in [pool.submit(instance, n)
                           for n in range(INSTANCES)]:
                future.result()
        elapsed = time.monotonic() - start

        self.assertEqual([], results.doubles)
        arq_states, shared, bound, in_use = self._database()
        kept = INSTANCES // len(ENDINGS)
        self.assertEqual({states.BOUND: kept, states.UNBOUND: kept},
                         dict(arq_states))
        self.assertEqual([], shared)
        self._assert_placement_agrees(bound, in_use)
        latencies = sorted(results.latencies)
        print(json.dumps({
            'database': db_api.get_engine().dialect.name,
            'hosts': self.HOSTS, 'devices': self.HOSTS * FPGAS,
            'reports_s': round(report_seconds, 1),
            'unchanged_reports_placement_requests': resync,
            'instances': INSTANCES, 'clients': CLIENTS,
            'seconds': round(elapsed, 1),
            'arqs_per_second': round(INSTANCES / elapsed, 1),
            'bind_p50_ms': round(1000 * statistics.median(latencies)),
            'bind_p99_ms': round(1000 * latencies[
                int(0.99 * len(latencies)) - 1]),
        }), file=sys.stderr)


class _Results:
    """What the clients saw: bind latencies, and handles held twice."""

    def __init__(self):
        self.latencies = []
        self.doubles = []
        #: {how: instances} of the endings counted with ended().
        self.endings = collections.Counter()
        self._held = {}
        self._lock = threading.Lock()

    def take(self, handle, arq_uuid):
        with self._lock:
            if handle in self._held:
                self.doubles.append((handle, self._held[handle], arq_uuid))
            self._held[handle] = arq_uuid

    def give_back(self, handle):
        with self._lock:
            del self._held[handle]

    def ended(self, how):
        """Count an instance that ended ``how`` (kept, unbound...)."""
        with self._lock:
            self.endings[how] += 1


@testtools.skipIf(functional.rabbitmqctl('status'),
                  'needs rabbitmqctl to give the test a virtual host')
class TestBindLoadPostgreSQL(_BindAndUnbind,
                             test_fixtures.OpportunisticDBTestMixin,
                             base.TestCase):

    FIXTURE = test_concurrency.PostgreSQLFixture
